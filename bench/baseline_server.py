"""The anchors for ``bench.lsp``: a bare pygls server that does as little as a server can.

- Cold start: it imports pygls and nothing else, so spawning it and getting its
  ``initialize`` result is the floor for any pygls server.
- ``bench/flood {count, size}``: send ``count`` notifications of ``size`` characters as fast
  as pygls can, then answer — the floor for pushing notifications to a client.
- ``bench/relay {url}``: stream a chat completion from the loopback provider with httpx and
  forward every text delta as a ``relavium/sessionEvent`` token notification — the floor for
  provider write → client read latency (HTTP, SSE lines, JSON, one notification per delta).
"""

from __future__ import annotations

import json
from typing import Any

from pygls.lsp.server import LanguageServer

server = LanguageServer("baseline", "1")


@server.feature("bench/flood")
def flood(ls: LanguageServer, params: Any) -> dict[str, int]:
    count, size = int(params.count), int(params.size)
    payload = "x" * size
    for sequence in range(count):
        ls.protocol.notify("bench/note", {"sequence": sequence, "token": payload})
    return {"sent": count}


@server.feature("bench/relay")
async def relay(ls: LanguageServer, params: Any) -> dict[str, int]:
    import httpx  # here, not at the top: the cold-start anchor must stay bare pygls

    sent = 0
    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    async with (
        httpx.AsyncClient(timeout=60) as client,
        client.stream("POST", f"{params.url}/chat/completions", json=body) as response,
    ):
        async for line in response.aiter_lines():
            if not line.startswith("data: {"):
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            text = choices[0].get("delta", {}).get("content")
            if text:
                ls.protocol.notify("relavium/sessionEvent", {"type": "agent:token", "token": text})
                sent += 1
    return {"sent": sent}


if __name__ == "__main__":
    server.start_io()

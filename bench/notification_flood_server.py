"""The baseline for ``bench.lsp``: a pygls server that only sends notifications.

On ``bench/flood {count, size}`` it sends ``count`` notifications of ``size`` characters as
fast as pygls can, then answers. It is the floor for what any pygls server can push to a
client, so relavium-lsp's token streaming is reported as a ratio to it.
"""

from __future__ import annotations

from typing import Any

from pygls.lsp.server import LanguageServer

server = LanguageServer("flood", "1")


@server.feature("bench/flood")
def flood(ls: LanguageServer, params: Any) -> dict[str, int]:
    count, size = int(params.count), int(params.size)
    payload = "x" * size
    for sequence in range(count):
        ls.protocol.notify("bench/note", {"sequence": sequence, "token": payload})
    return {"sent": count}


if __name__ == "__main__":
    server.start_io()

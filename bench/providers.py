"""Provider adapters: cost per delta against raw line iteration, JSON decoders, prompt caching.

Run: ``python -m bench.providers [--quick]``. Prints a table of ratios; never pass/fail.
:func:`rows` returns the same rows (:class:`bench.report.Row`) for ``make bench``.

1. **Adapter vs raw httpx lines** (issue 25's goal: ≤ 3x; issue 36: a row per cloud format).
   A loopback server in a child process (so it does not compete for this process's GIL)
   streams one response of N text deltas as fast as the socket takes them, as Chat
   Completions and as Messages SSE, and as OpenAI Responses, Azure Chat Completions, Gemini
   and Bedrock ConverseStream / Claude-on-Bedrock binary event streams. The same
   bytes are consumed by ``response.aiter_lines()`` — the floor any SSE client pays — and by
   ``provider.stream(request)`` to the last chunk (SSE, JSON, typed chunks, usage, the stream
   guard; plain text deltas take the msgspec fast path, :mod:`relavium_lsp.llm.fast_events`).
   Runs alternate between the two and the best of each is kept. Times are this
   process's CPU seconds (``time.process_time``), the cost of consuming the stream, so other
   load on the machine does not move the ratio much.
2. **JSON decoders** on those events: msgspec (what the adapters use) and orjson against the
   standard library's ``json``, decoding into the same dicts.
3. **The recorded corpus** (``tests/fixtures/streams``), every recording served over
   loopback: the adapters' time per delivered chunk against raw line iteration of the same
   responses (small responses, so per-request HTTP work weighs more than parsing).
4. **Prompt caching** on a scripted 50-turn Claude session, billed by the simulated
   Anthropic cache (:mod:`relavium_lsp.testing.prompt_cache`): billed input tokens with
   ``cache_control`` breakpoints against the same session without them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import httpx

from bench.report import Goal, Row, print_rows
from relavium_lsp.contracts.content import TextPart
from relavium_lsp.llm.anthropic import AnthropicProvider
from relavium_lsp.llm.authorized_http import HeaderKeyCredentials
from relavium_lsp.llm.azure.provider import AzureOpenAIProvider
from relavium_lsp.llm.bedrock.provider import BedrockProvider
from relavium_lsp.llm.gemini.provider import GeminiProvider
from relavium_lsp.llm.json_codec import loads
from relavium_lsp.llm.openai_compat import OpenAICompatibleProvider
from relavium_lsp.llm.responses.provider import OpenAIResponsesProvider
from relavium_lsp.llm.seam import LlmMessage, LlmRequest, StopChunk, TextDelta
from relavium_lsp.llm.streaming_http import StreamingHttpProvider
from relavium_lsp.testing.cloud_scripts import (
    EVENTSTREAM_HEADERS,
    azure_chat_events,
    converse_events,
    gemini_chunks,
    invoke_events,
    responses_events,
)
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse
from relavium_lsp.testing.prompt_cache import (
    CacheBill,
    PromptCache,
    billing_responder,
    model_reply,
    user_turn,
)
from relavium_lsp.testing.wire_scripts import SSE_HEADERS, anthropic_events, openai_events, sse
from relavium_lsp.tools.registry import default_registry

PIECE_BYTES = 16 * 1024
ADAPTER_GOAL = 3.0
CACHE_GOAL = 1 / 3  # "several times less"
CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "streams"


# The cloud platforms' formats (issue 36), each with its own row: label, response headers.
CLOUD_FORMATS = {
    "responses": ("OpenAI Responses", SSE_HEADERS),
    "azure": ("Azure OpenAI Chat Completions", SSE_HEADERS),
    "gemini": ("Gemini streamGenerateContent", SSE_HEADERS),
    "converse": ("Bedrock ConverseStream (event stream)", EVENTSTREAM_HEADERS),
    "bedrock-messages": ("Bedrock Claude Messages (event stream)", EVENTSTREAM_HEADERS),
}


def stream_body(kind: str, deltas: int) -> bytes:
    """One response of ``deltas`` text deltas in the adapter's wire format."""
    texts = [f"tok{i % 1000} " for i in range(deltas)]
    if kind == "openai":
        return b"".join(openai_events(text=texts))
    if kind == "responses":
        return b"".join(responses_events(text=texts))
    if kind == "azure":
        return b"".join(azure_chat_events(text=texts))
    if kind == "gemini":
        return b"".join(sse(json.dumps(chunk)) for chunk in gemini_chunks(text=texts))
    if kind == "converse":
        return b"".join(converse_events(text=texts))
    if kind == "bedrock-messages":
        return b"".join(invoke_events(anthropic_events(text=texts)))
    return b"".join(anthropic_events(text=texts))


def serve(kind: str, deltas: int) -> None:
    """Child process: answer every request until stdin closes.

    ``openai`` / ``anthropic``: the same synthetic stream; ``corpus``: recording number N of
    the corpus for a request to ``…/N/…``.
    """
    headers = SSE_HEADERS
    if kind == "corpus":
        bodies = [body for _adapter_name, body in _corpus()]
    else:
        bodies = [stream_body(kind, deltas)]
        headers = CLOUD_FORMATS.get(kind, ("", SSE_HEADERS))[1]

    def respond(request: ReceivedRequest) -> ScriptedResponse:
        parts = [part for part in request.path.split("/") if part.isdigit()]
        body = bodies[int(parts[0]) if parts else 0]
        pieces = [body[i : i + PIECE_BYTES] for i in range(0, len(body), PIECE_BYTES)]
        return ScriptedResponse(headers=headers, body=pieces)

    with LoopbackServer(responder=respond) as server:
        print(server.url, flush=True)
        sys.stdin.read()


async def _raw_lines(client: httpx.AsyncClient, url: str) -> None:
    async with client.stream("POST", url, json={}) as response:
        async for _line in response.aiter_lines():
            pass


async def _adapter(provider: StreamingHttpProvider, deltas: int, model: str = "bench") -> None:
    request = LlmRequest(
        model=model, messages=(LlmMessage(role="user", content=(TextPart(text="go"),)),)
    )
    count = 0
    last = None
    async for chunk in provider.stream(request):
        count += type(chunk) is TextDelta
        last = chunk
    assert isinstance(last, StopChunk) and count == deltas, (last, count)


async def _timed(work: Callable[[], object]) -> float:
    # CPU seconds of this process, not wall time: the cost of consuming the stream, which a
    # busy machine (other processes, the server child) does not inflate.
    started = time.process_time()
    result = work()
    if asyncio.iscoroutine(result):
        await result
    return time.process_time() - started


def _provider(kind: str, base: str, client: httpx.AsyncClient) -> tuple[StreamingHttpProvider, str]:
    """The adapter for a wire format, and the model name that selects it."""
    options = {"client": client, "timeout_s": 60}
    key = HeaderKeyCredentials("bench", "bench-key", "authorization", "", prefix="Bearer ")
    if kind == "openai":
        return OpenAICompatibleProvider(
            "bench", base_url=f"{base}/v1", api_key=None, **options
        ), "bench"
    if kind == "responses":
        return OpenAIResponsesProvider(
            "bench", base_url=f"{base}/v1", api_key=None, **options
        ), "bench"
    if kind == "azure":
        return AzureOpenAIProvider("bench", credentials=key, base_url=base, **options), "bench"
    if kind == "gemini":
        return GeminiProvider("bench", credentials=key, base_url=base, **options), "gemini-bench"
    if kind in ("converse", "bedrock-messages"):
        model = "anthropic.claude-bench" if kind == "bedrock-messages" else "amazon.nova-bench"
        return BedrockProvider("bench", credentials=key, base_url=base, **options), model
    return AnthropicProvider("bench", base_url=base, api_key=None, **options), "bench"


async def _adapter_vs_raw(kind: str, base: str, deltas: int, runs: int) -> tuple[float, float]:
    async with httpx.AsyncClient(timeout=60) as client:
        provider, model = _provider(kind, base, client)
        await _adapter(provider, deltas, model)  # warm-up and correctness
        raw = adapted = float("inf")
        for _ in range(runs):  # interleaved, so a noisy moment hurts both alike
            raw = min(raw, await _timed(lambda: _raw_lines(client, f"{base}/raw")))
            adapted = min(adapted, await _timed(lambda: _adapter(provider, deltas, model)))
    return raw, adapted


class _Server:
    """The loopback server child process (``python -m bench.providers --serve KIND``)."""

    def __init__(self, kind: str, deltas: int = 0) -> None:
        self._child = subprocess.Popen(
            [sys.executable, "-m", "bench.providers", "--serve", kind, "--deltas", str(deltas)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._child.stdout is not None
        self.url = self._child.stdout.readline().strip()

    def __enter__(self) -> _Server:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._child.stdin is not None:
            self._child.stdin.close()
        self._child.wait(timeout=30)


def adapter_rows(deltas: int, runs: int) -> list[Row]:
    """Adapter time per delta against raw httpx line iteration, per wire format."""
    found = []
    formats = [("openai", "OpenAI"), ("anthropic", "Anthropic")]
    formats += [(kind, label) for kind, (label, _headers) in CLOUD_FORMATS.items()]
    for kind, label in formats:
        with _Server(kind, deltas) as server:
            raw, adapted = asyncio.run(_adapter_vs_raw(kind, server.url, deltas, runs))
        per = 1e6 / deltas
        found.append(
            Row(
                f"{label} adapter per delta ({deltas:,} deltas, loopback)",
                adapted * per,
                "µs",
                anchor="raw httpx aiter_lines",
                anchor_value=raw * per,
                goal=Goal(ADAPTER_GOAL),
                note=f"this process's CPU time, best of {runs} interleaved runs each",
            )
        )
    return found


def _best(work: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def _event_payloads(deltas: int) -> list[bytes]:
    payloads = []
    for kind in ("openai", "anthropic"):
        for line in stream_body(kind, deltas).split(b"\n"):
            if line.startswith(b"data: {"):
                payloads.append(line[6:])
    return payloads


def json_rows(deltas: int, runs: int) -> list[Row]:
    """Decoding the events' JSON: msgspec and orjson against the standard library."""
    payloads = _event_payloads(deltas)
    per = 1e6 / len(payloads)

    def decode_all(decode: Callable[[bytes], object]) -> Callable[[], object]:
        return lambda: [decode(payload) for payload in payloads]

    standard = _best(decode_all(json.loads), runs)
    found = [
        Row(
            "msgspec (used) per event",
            _best(decode_all(loads), runs) * per,
            "µs",
            anchor="json.loads",
            anchor_value=standard * per,
        )
    ]
    try:
        import orjson
    except ImportError:  # a dev dependency; the comparison is optional
        return found
    orjson_time = _best(decode_all(orjson.loads), runs)
    found.append(
        Row("orjson per event", orjson_time * per, "µs", anchor="json.loads",
            anchor_value=standard * per)
    )  # fmt: skip
    return found


def _corpus() -> list[tuple[str, bytes]]:
    import tomllib

    manifest = tomllib.loads((CORPUS / "MANIFEST.toml").read_text())
    found = []
    for entry in manifest["stream"]:
        if entry["adapter"] not in ("openai", "anthropic"):
            continue  # the cloud formats have rows of their own (adapter_rows)
        raw = (CORPUS / entry["file"]).read_bytes()
        if entry["framing"] == "jsonl":
            lines = [line for line in raw.decode().split("\n") if line.strip()]
            if entry["adapter"] == "anthropic":
                raw = "".join(
                    f"event: {json.loads(line)['type']}\ndata: {line}\n\n" for line in lines
                ).encode()
            else:
                raw = ("".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n").encode()
        found.append((entry["adapter"], raw))
    return found


async def _corpus_times(base: str, runs: int) -> tuple[float, float, int]:
    corpus = _corpus()
    request = LlmRequest(
        model="bench", messages=(LlmMessage(role="user", content=(TextPart(text="go"),)),)
    )
    async with httpx.AsyncClient(timeout=60) as client:

        def provider(number: int, adapter: str) -> OpenAICompatibleProvider | AnthropicProvider:
            if adapter == "anthropic":
                return AnthropicProvider(
                    "bench", base_url=f"{base}/{number}", api_key=None, client=client, timeout_s=60
                )
            return OpenAICompatibleProvider(
                "bench", base_url=f"{base}/{number}/v1", api_key=None, client=client, timeout_s=60
            )

        async def adapted() -> int:
            delivered = 0
            for number, (adapter, _body) in enumerate(corpus):
                async for chunk in provider(number, adapter).stream(request):
                    delivered += type(chunk) is not StopChunk
            return delivered

        async def raw() -> None:
            for number in range(len(corpus)):
                await _raw_lines(client, f"{base}/{number}/raw")

        delivered = await adapted()
        raw_best = adapted_best = float("inf")
        for _ in range(runs):
            raw_best = min(raw_best, await _timed(raw))
            adapted_best = min(adapted_best, await _timed(adapted))
    return raw_best, adapted_best, delivered


def corpus_row(runs: int) -> Row:
    """The recorded corpus over loopback: adapter time per delivered chunk vs raw lines."""
    with _Server("corpus") as server:
        raw, adapted, delivered = asyncio.run(_corpus_times(server.url, runs))
    per = 1e6 / delivered
    return Row(
        f"corpus ({len(_corpus())} recordings) adapter per chunk",
        adapted * per,
        "µs",
        anchor="raw httpx aiter_lines",
        anchor_value=raw * per,
        goal=Goal(ADAPTER_GOAL),
        note=f"{delivered} chunks; small responses, so per-request HTTP work weighs most",
    )


async def _session_bills(turns: int, *, prompt_caching: bool) -> list[CacheBill]:
    bills: list[CacheBill] = []
    tools = tuple(default_registry().specs(["read_file", "write_file", "list_directory"]))
    system = "You are a careful coding assistant working in /workspace. " * 20
    with LoopbackServer(responder=billing_responder(PromptCache(), bills)) as server:
        async with httpx.AsyncClient() as client:
            provider = AnthropicProvider(
                "bench", base_url=server.url, api_key="sk-bench", client=client, timeout_s=30
            )
            provider.prompt_caching = prompt_caching
            history: list[LlmMessage] = []
            for turn in range(1, turns + 1):
                history.append(LlmMessage(role="user", content=(TextPart(text=user_turn(turn)),)))
                request = LlmRequest(
                    model="claude-sonnet-4-5", system=system, messages=tuple(history), tools=tools
                )
                async for _chunk in provider.stream(request):
                    pass
                reply = (TextPart(text=model_reply(turn)),)
                history.append(LlmMessage(role="assistant", content=reply))
    return bills


def _billed_input(bills: Iterable[CacheBill]) -> float:
    """Input tokens as the invoice weighs them (writes 1.25x, reads 0.1x)."""
    return sum(b.uncached + 1.25 * b.cache_write + 0.1 * b.cache_read for b in bills)


def cache_row(turns: int = 50) -> Row:
    """Billed input tokens of a long session with and without cache breakpoints."""
    cached = _billed_input(asyncio.run(_session_bills(turns, prompt_caching=True)))
    plain = _billed_input(asyncio.run(_session_bills(turns, prompt_caching=False)))
    return Row(
        f"billed input tokens, {turns}-turn Claude session, prompt caching",
        cached,
        "tokens",
        anchor="without cache breakpoints",
        anchor_value=plain,
        goal=Goal(round(CACHE_GOAL, 3)),
        note="cache writes weigh 1.25x, reads 0.1x, as billed",
    )


def rows(quick: bool = False) -> list[Row]:
    """Every measurement of this benchmark (``quick``: smaller, for ``make bench-quick``)."""
    # Best of more interleaved runs: on a shared machine a few noisy ones then cannot decide.
    deltas, runs = (5_000, 5) if quick else (50_000, 9)
    return [
        *adapter_rows(deltas, runs),
        *json_rows(2_000 if quick else 10_000, runs),
        corpus_row(runs),
        cache_row(),
    ]


def main() -> None:
    """Command line: ``python -m bench.providers [--quick]``."""
    parser = argparse.ArgumentParser(description="provider adapter benchmark")
    parser.add_argument("--quick", action="store_true", help="smaller runs (about 20 s)")
    parser.add_argument(
        "--serve",
        choices=("openai", "anthropic", "corpus", *CLOUD_FORMATS),
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--deltas", type=int, default=50_000, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve:
        serve(arguments.serve, arguments.deltas)
        return
    print_rows(rows(quick=arguments.quick))


if __name__ == "__main__":
    main()

"""A streamed request imports nothing once the client is warm (issue 25, per-turn overhead).

httpcore asks for ``sniffio`` on every request; when the package is missing each ask is a
failed import that searches every ``sys.path`` entry (about 1.5 ms per turn). The project
depends on ``sniffio`` so that the ask is a dictionary lookup.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

import httpx

from tests.unit.llm.wire_servers import LoopbackServer, openai_stream


class _ImportRecorder(importlib.abc.MetaPathFinder):
    """Notes every module the import system goes looking for (a cached import never asks)."""

    def __init__(self) -> None:
        self.looked_for: list[str] = []

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        self.looked_for.append(fullname)
        return None  # the real finders after this one do the finding


async def _stream_once(http: httpx.AsyncClient, url: str) -> str:
    async with http.stream("POST", url + "/v1/chat/completions", json={"stream": True}) as reply:
        return "".join([line async for line in reply.aiter_lines()])


async def test_a_warm_client_streams_without_searching_for_modules() -> None:
    recorder = _ImportRecorder()
    async with LoopbackServer() as server, httpx.AsyncClient() as http:
        server.script(*(openai_stream(text=["a", "b"]) for _ in range(4)))
        await _stream_once(http, server.url)  # warm: first connection, lazily loaded code
        sys.meta_path.insert(0, recorder)
        try:
            bodies = [await _stream_once(http, server.url) for _ in range(3)]
        finally:
            sys.meta_path.remove(recorder)
    assert all('"a"' in body for body in bodies)
    assert recorder.looked_for == []

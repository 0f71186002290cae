from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.unit.llm.wire_servers import LoopbackServer


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as http:
        yield http

"""Helpers for handling providers' chunk streams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any


async def close_stream(stream: AsyncIterator[Any]) -> None:
    """Close a provider stream now — and with it its HTTP response — not at garbage collection.

    Breaking out of ``async for`` leaves an async generator suspended; only ``aclose`` runs
    its cleanup (the ``async with`` that owns the connection) right away.
    """
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()

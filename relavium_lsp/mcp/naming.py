"""Namespaced tool names: ``mcp__SERVER__TOOL``.

Server names never contain ``__`` (see :data:`relavium_lsp.contracts.mcp.SERVER_NAME_PATTERN`),
so the first ``__`` after the prefix ends the server name. A tool name outside
``[A-Za-z0-9_-]``, or one too long for the 64 characters providers accept, is cut and
suffixed with a short hash of the original so two such names never collide.
"""

from __future__ import annotations

import hashlib
import re

NAME_PREFIX = "mcp__"
NAME_SEPARATOR = "__"
MAX_TOOL_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def exposed_name(server: str, tool: str) -> str:
    """``mcp__SERVER__TOOL``, made safe for every provider (see the module doc)."""
    safe = _UNSAFE.sub("_", tool)
    name = f"{NAME_PREFIX}{server}{NAME_SEPARATOR}{safe}"
    if safe == tool and len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha256(tool.encode("utf-8")).hexdigest()[:6]
    return f"{name[: MAX_TOOL_NAME - 7]}_{digest}"


def split_exposed_name(name: str) -> tuple[str, str] | None:
    """``(server, tool)`` of a namespaced tool name, ``None`` for any other name."""
    if not name.startswith(NAME_PREFIX):
        return None
    server, separator, tool = name[len(NAME_PREFIX) :].partition(NAME_SEPARATOR)
    if not separator or not server or not tool:
        return None
    return server, tool

"""What an ACP client is shown about a tool call: title, kind, locations — and the book.

:func:`describe_call` turns a call's arguments into the ``tool_call`` fields. Locations are
only given for paths the scope jail accepts (resolved, symlinks followed), so a client's
"follow along" never opens something the session could not touch. Titles never carry file
contents, request bodies or URL query strings.

:class:`CallBook` remembers the calls of running turns (full arguments, in memory only) so
that approvals, the live event mapping and the host can describe the same call the same way.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from acp.schema import FileEditToolCallContent, ToolCallLocation, ToolKind

from relavium_lsp.contracts.mcp import split_exposed_name
from relavium_lsp.errors import RelaviumError
from relavium_lsp.tools.jail import ScopeRoots, resolve_in_scope

MAX_TITLE_CHARS = 200
TOOL_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_directory": "read",
    "read_tool_output": "read",
    "git_status": "read",
    "search_files": "search",
    "find_files": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "run_command": "execute",
    "terminal_start": "execute",
    "terminal_output": "read",
    "terminal_kill": "execute",
    "update_plan": "think",
    "git_commit": "execute",
    "http_request": "fetch",
}
PATH_TOOLS = frozenset(
    {"read_file", "write_file", "edit_file", "list_directory", "search_files", "find_files"}
)
WRITE_TOOLS = frozenset({"write_file", "edit_file"})


@dataclass(frozen=True)
class CallDescription:
    """The client-facing view of one call."""

    title: str
    kind: ToolKind
    # The jail-resolved path of a file tool; ``None`` when there is none or it was refused.
    target: Path | None = None
    locations: tuple[ToolCallLocation, ...] = ()


@dataclass
class CallRecord:
    """A call of a running turn, as this connection tracks it."""

    session_id: str
    call_id: str
    tool: str
    args: dict[str, Any]
    description: CallDescription
    roots: ScopeRoots | None = None
    # Whether "always allow" can be remembered for this tool (not for always-ask tools).
    offer_always: bool = True
    # Whether the client has already been told the call is running.
    started: bool = False
    # The diff of a write that was applied (set by the host).
    diff: FileEditToolCallContent | None = None


class CallBook:
    """Calls of running turns by ``(session id, call id)``."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str], CallRecord] = {}

    def open(self, record: CallRecord) -> None:
        """Start tracking a call."""
        self._records[(record.session_id, record.call_id)] = record

    def get(self, session_id: str, call_id: str) -> CallRecord | None:
        """The tracked call, if any."""
        return self._records.get((session_id, call_id))

    def close(self, session_id: str, call_id: str) -> CallRecord | None:
        """Stop tracking a call and return it."""
        return self._records.pop((session_id, call_id), None)

    def forget_session(self, session_id: str) -> None:
        """Drop whatever is left of a session's calls (its turn settled)."""
        for key in [key for key in self._records if key[0] == session_id]:
            del self._records[key]

    def __len__(self) -> int:
        return len(self._records)


def _short(text: str) -> str:
    single = " ".join(text.split())
    if len(single) <= MAX_TITLE_CHARS:
        return single
    return single[: MAX_TITLE_CHARS - 1] + "…"


def _string(args: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _integer(args: dict[str, Any], *names: str) -> int | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return None


def resolve_target(tool: str, raw: str, roots: ScopeRoots | None) -> Path | None:
    """The jail-resolved path of a file tool's argument, or ``None`` if the jail refuses it."""
    if roots is None:
        return None
    try:
        return resolve_in_scope(raw, roots, must_exist=False, for_write=tool in WRITE_TOOLS)
    except (RelaviumError, OSError, ValueError):
        return None


def _command_title(args: dict[str, Any]) -> str:
    command = args.get("command")
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        return "Run " + shlex.join(command)
    return "Run a command"


def _http_title(args: dict[str, Any]) -> str:
    method = _string(args, "method") or "GET"
    url = _string(args, "url") or ""
    host = urlparse(url).hostname if url else None
    return f"{method.upper()} {host}" if host else f"{method.upper()} request"


def _commit_title(args: dict[str, Any]) -> str:
    message = _string(args, "message")
    first = message.strip().splitlines()[0] if message and message.strip() else ""
    return f"git commit: {first}" if first else "git commit"


def describe_call(tool: str, args: dict[str, Any], roots: ScopeRoots | None) -> CallDescription:
    """Title, kind and (jail-checked) locations for a call."""
    kind = TOOL_KINDS.get(tool, "other")
    if tool in PATH_TOOLS:
        raw = _string(args, "path") or "."
        target = resolve_target(tool, raw, roots)
        shown = roots.display(target) if roots is not None and target is not None else raw
        line = _integer(args, "startLine", "start_line") if tool == "read_file" else None
        locations = (ToolCallLocation(path=str(target), line=line),) if target else ()
        if tool == "read_file":
            title = f"Read {shown}"
            end = _integer(args, "endLine", "end_line")
            if line is not None or end is not None:
                title += f" (lines {line or 1}-{end or 'end'})"
        elif tool == "write_file":
            title = f"Write {shown}"
        elif tool == "edit_file":
            title = f"Edit {shown}"
        elif tool == "list_directory":
            title = f"List {shown}"
        else:
            pattern = _string(args, "pattern") or ""
            verb = "Find" if tool == "find_files" else "Search"
            title = f"{verb} {pattern!r} in {shown}"
        return CallDescription(_short(title), kind, target, locations)
    if tool == "run_command":
        title = _command_title(args)
    elif tool == "terminal_start":
        title = _command_title(args).replace("Run", "Start", 1) + " (background)"
    elif tool in ("terminal_output", "terminal_kill"):
        verb = "Read" if tool == "terminal_output" else "Stop"
        title = f"{verb} terminal job {_string(args, 'jobId') or '?'}"
    elif tool == "update_plan":
        title = "Update the plan"
    elif tool == "http_request":
        title = _http_title(args)
    elif tool == "git_commit":
        title = _commit_title(args)
    elif tool == "git_status":
        title = "git status"
    elif tool == "read_tool_output":
        title = "Read an earlier tool output"
    elif (mcp := split_exposed_name(tool)) is not None:
        title = f"MCP {mcp[0]}: {mcp[1]}"
    else:
        title = tool
    return CallDescription(_short(title), kind)

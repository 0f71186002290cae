"""The demo's transcript view and its closing summary."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from relavium_lsp.contracts.agent import OFFLINE_MODEL_ID
from relavium_lsp.demo.render import Console, compact_value, format_cost, one_line
from relavium_lsp.demo.workspace import DemoPaths

TRANSCRIPT_TEXT_LIMIT = 96


def _describe_part(part: dict[str, Any]) -> str:
    kind = part.get("type")
    if kind == "text":
        return one_line(str(part.get("text", "")), TRANSCRIPT_TEXT_LIMIT)
    if kind == "tool_call":
        arguments = json.dumps(compact_value(part.get("args", {})), ensure_ascii=False)
        return f"calls {part.get('name')} {arguments}"
    if kind == "tool_result":
        failed = " (error)" if part.get("isError") else ""
        return f"result{failed}: {one_line(str(part.get('result', '')), 64)}"
    if kind == "reasoning":
        return "[reasoning]"
    if kind == "media":
        return f"[media {part.get('mimeType')}]"
    return f"[{kind}]"


def print_transcript(console: Console, messages: list[dict[str, Any]]) -> None:
    """One line per content part: ``#seq role  text``."""
    for message in messages:
        role = str(message.get("role", "?"))
        sequence = console.style.paint(f"#{message.get('sequenceNumber', '?'):<3}", "dim")
        for part in message.get("content") or []:
            console.write(
                f"  {sequence} {console.style.paint(f'{role:<9}', 'bold')} {_describe_part(part)}"
            )


def _home_relative(path: Path) -> str:
    """``path`` shell-quoted, with ``~`` for the home directory where that is shorter."""
    try:
        relative = path.relative_to(Path.home())
    except ValueError:
        return shlex.quote(str(path))
    return "~/" + shlex.quote(str(relative))


def print_summary(
    console: Console,
    paths: DemoPaths,
    resumed: dict[str, Any],
    *,
    export_copy: Path | None,
    found_sessions: int,
) -> None:
    """Tokens, cost, where everything is, and what to do next."""
    session = resumed.get("session") or {}
    totals = session.get("totals") or {}
    style = console.style
    console.write()
    console.write(style.paint(style.rule * 2 + " Summary " + style.rule * 40, "bold"))
    console.field(
        "session",
        f"{session.get('id')} · {session.get('messageCount')} messages · "
        f"{session.get('turnCount')} turns",
    )
    console.field(
        "tokens",
        f"{totals.get('inputTokens', 0)} in · {totals.get('outputTokens', 0)} out "
        f"(recorded usage of the offline model)",
    )
    cost = format_cost(int(totals.get("costMicrocents", 0)))
    if session.get("modelId") == OFFLINE_MODEL_ID:
        cost += " (the offline model is free; real models are priced per token)"
    console.field("cost", cost)
    console.field("database", f"{paths.database}  (SQLCipher-encrypted)")
    console.field("db key", f"{paths.key_file}  (0600; the demo never uses your keychain)")
    console.field("server log", str(paths.server_log))
    console.field("demo log", str(paths.demo_log))
    console.field("workspace", str(paths.workspace))
    if export_copy is not None:
        console.field("export", f"{export_copy}  (a copy of the untitled document)")
    runs = "this run" if found_sessions <= 1 else f"{found_sessions} demo sessions"
    console.field("history", f"search found {runs}; run the demo again to add another")
    data = _home_relative(paths.data)
    key = _home_relative(paths.key_file)
    console.write()
    console.write("Browse the demo's history from the command line:")
    console.write(
        f'  RELAVIUM_HOME={data} RELAVIUM_DB_KEY="$(cat {key})" relavium-lsp sessions list'
    )
    console.write()
    console.write("Use a real model (your own data lives in ~/.relavium, not here):")
    console.write('  in VS Code: "Relavium: Set Up a Model"; in Neovim: :RelaviumSetup')
    console.write("  or from a terminal:")
    console.write("  relavium-lsp keys set anthropic        # paste the key at the hidden prompt")
    console.write("  # then in ~/.relavium/config.toml:")
    console.write("  #   [preferences]")
    console.write('  #   default_model = "anthropic/claude-sonnet-4-5"')
    console.write("  relavium-lsp doctor                    # checks keys, database and config")
    console.write()
    console.write(f"Remove everything the demo created: rm -rf {_home_relative(paths.home)}")

"""``relavium-lsp sessions``: inspect, export, import, fork, delete and replay chat history.

Reads the same encrypted history database as the language server (``--history PATH``
overrides the default ``$RELAVIUM_HOME/history.db``), so a user can work with sessions
without an editor. Human-readable output by default; ``--json`` where a script wants data.
Every failure is one ``error: …`` line on standard error and exit status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from relavium_lsp.atomic_write import atomic_write_text
from relavium_lsp.commands import Subcommands
from relavium_lsp.contracts.content import (
    DurableMediaPart,
    DurableReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import AgentSessionRecord, SessionMessage
from relavium_lsp.contracts.wire import MAX_PAGE, ListSessionsResult
from relavium_lsp.engine.api import TOOL_CASSETTE_SUFFIX, Engine, ExportFormat, open_engine
from relavium_lsp.errors import RelaviumError
from relavium_lsp.tools.host import FilesystemHost

Action = Callable[[Engine, argparse.Namespace], Awaitable[int]]
TOOL_RESULT_PREVIEW = 2_000
_FORMATS: dict[str, ExportFormat] = {
    "yaml": "workflow",
    "workflow": "workflow",
    "jsonl": "jsonl",
    "markdown": "markdown",
}


def register(subparsers: Subcommands) -> None:
    """Add ``sessions`` and its actions."""
    parser = subparsers.add_parser(
        "sessions",
        help="list, show, export, import, fork, delete or replay chat sessions",
        description="Work with the chat history in the encrypted history database.",
    )
    actions = parser.add_subparsers(dest="sessions_action", metavar="ACTION", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--history", metavar="PATH", help="history database to use")

    def action(name: str, help_text: str, run: Action) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = actions.add_parser(name, parents=[common], help=help_text)
        sub.set_defaults(handler=lambda arguments: _execute(run, arguments))
        return sub

    listing = action("list", "list sessions, newest first", _list)
    listing.add_argument("--workspace", metavar="DIR", help="only sessions of this workspace")
    listing.add_argument("--query", metavar="TEXT", help="full-text search in messages and titles")
    listing.add_argument("--limit", type=_limit, default=50, help=f"at most N (1-{MAX_PAGE})")
    listing.add_argument("--json", action="store_true", help="print JSON")
    show = action("show", "print a session's transcript", _show)
    show.add_argument("session_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="print JSON")
    export = action("export", "export a session as a workflow, JSONL or Markdown", _export)
    export.add_argument("session_id", metavar="ID")
    export.add_argument("--format", choices=("yaml", "jsonl", "markdown"), default="yaml")
    export.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")
    importing = action("import", "create a new session from a JSONL transcript", _import)
    importing.add_argument("file", metavar="FILE", help="a relavium-session file, or -")
    importing.add_argument(
        "--tool-cassette",
        metavar="FILE",
        help="the tool cassette exported with it (default: FILE's "
        f"{TOOL_CASSETTE_SUFFIX} sibling, when there is one)",
    )
    importing.add_argument("--json", action="store_true", help="print JSON")
    fork = action("fork", "branch a session at one of its messages", _fork)
    fork.add_argument("session_id", metavar="ID")
    fork.add_argument("--at", dest="at_sequence", type=int, required=True, metavar="SEQ")
    fork.add_argument("--json", action="store_true", help="print JSON")
    delete = action("delete", "delete a session (hidden, not erased)", _delete)
    delete.add_argument("session_id", metavar="ID")
    replay = action(
        "replay", "re-run a session against its own recordings, into a new session", _replay
    )
    replay.add_argument("session_id", metavar="ID")
    replay.add_argument(
        "--tool-replay-mode",
        choices=("auto", "live", "recorded", "mixed"),
        default="auto",
        help="which tools run for real: auto (pure and read-only), live (also those reading "
        "the editor or a remote server), recorded (none), mixed (those named by --live-tool); "
        "side-effecting tools never run",
    )
    replay.add_argument(
        "--live-tool",
        dest="live_tool",
        action="append",
        default=[],
        metavar="NAME",
        help="with --tool-replay-mode mixed: a tool to run for real (repeatable)",
    )
    # Before tool replay modes: pure and read-only tools live, which is what auto does now.
    replay.add_argument("--live-tools", action="store_true", help=argparse.SUPPRESS)
    replay.add_argument("--json", action="store_true", help="print JSON")


def _limit(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= MAX_PAGE:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_PAGE}")
    return number


def _execute(run: Action, arguments: argparse.Namespace) -> int:
    try:
        return asyncio.run(_with_engine(run, arguments))
    except RelaviumError as error:
        print(f"error: {error.message}", file=sys.stderr)
    except OSError as error:
        target = f" ({error.filename})" if error.filename else ""
        print(f"error: {error.strerror or type(error).__name__}{target}", file=sys.stderr)
    except UnicodeDecodeError:
        print("error: the file is not UTF-8 text", file=sys.stderr)
    return 1


async def _with_engine(run: Action, arguments: argparse.Namespace) -> int:
    engine = await open_engine(FilesystemHost(), history_path=arguments.history)
    try:
        return await run(engine, arguments)
    finally:
        await engine.close()


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


async def _list(engine: Engine, arguments: argparse.Namespace) -> int:
    workspace = os.path.abspath(arguments.workspace) if arguments.workspace else None
    page = await engine.list_sessions(
        workspace=workspace, query=arguments.query, limit=arguments.limit
    )
    if arguments.json:
        _print_json(
            ListSessionsResult(sessions=page.sessions, next_cursor=page.next_cursor).to_wire()
        )
        return 0
    if not page.sessions:
        print("No sessions.")
        return 0
    for summary in page.sessions:
        updated = summary.updated_at[:19].replace("T", " ")
        label = summary.title or summary.preview or "(empty)"
        print(f"{summary.id}  {updated}  {summary.status:<17}  {summary.message_count:>5}  {label}")
    if page.next_cursor:
        print(f"(more sessions exist; raise --limit, up to {MAX_PAGE})")
    return 0


async def _show(engine: Engine, arguments: argparse.Namespace) -> int:
    record, messages = await engine.full_transcript(arguments.session_id)
    if arguments.json:
        _print_json(
            {"session": record.to_wire(), "messages": [message.to_wire() for message in messages]}
        )
        return 0
    print(_header(record))
    for message in messages:
        print()
        print(_describe(message))
    return 0


def _header(record: AgentSessionRecord) -> str:
    lines = [
        f"Session {record.id}" + (f"  {record.title!r}" if record.title else ""),
        f"Agent: {record.agent_slug}   Model: {record.model_id or '-'}   "
        f"Status: {record.status}   Source: {record.source}",
        f"Workspace: {record.context.working_dir}",
        f"Created: {record.created_at}   Updated: {record.updated_at}   "
        f"Messages: {record.message_count}   Turns: {record.turn_count}",
    ]
    if record.exported_workflow_path:
        lines.append(f"Exported to: {record.exported_workflow_path}")
    return "\n".join(lines)


def _describe(message: SessionMessage) -> str:
    model = f" ({message.model_id})" if message.model_id else ""
    marker = ""
    if message.compaction is not None:
        marker = f" [compaction through #{message.compaction.dropped_through_sequence}]"
    elif message.interruption is not None:
        marker = " [interrupted turn]"
    lines = [f"#{message.sequence_number} {message.role}{model} · {message.timestamp}{marker}"]
    for part in message.content:
        if isinstance(part, TextPart):
            body = part.text
        elif isinstance(part, DurableReasoningPart):
            body = "[reasoning redacted]" if part.redacted else f"[reasoning] {part.text}"
        elif isinstance(part, ToolCallPart):
            body = f"-> {part.name} {json.dumps(part.args, ensure_ascii=False)}  [{part.id}]"
        elif isinstance(part, ToolResultPart):
            result = part.result
            if len(result) > TOOL_RESULT_PREVIEW:
                result = f"{result[:TOOL_RESULT_PREVIEW]}… [{len(part.result):,} chars]"
            failed = " (error)" if part.is_error else ""
            body = f"<- {part.tool_call_id}{failed}: {result}"
        elif isinstance(part, DurableMediaPart):
            body = f"[media {part.name or part.mime_type}: {part.source.handle}]"
        lines.extend("  " + line for line in body.splitlines() or [""])
    return "\n".join(lines)


async def _export(engine: Engine, arguments: argparse.Namespace) -> int:
    fmt = _FORMATS[arguments.format]
    outcome = await engine.render_export(arguments.session_id, fmt)
    cassette = outcome.tool_cassette
    if arguments.output:
        target = Path(arguments.output).expanduser().absolute()
        await asyncio.to_thread(atomic_write_text, target, outcome.content)
        text = outcome.tool_cassette_text()
        if text is not None:
            beside = cassette_beside(target)
            await asyncio.to_thread(atomic_write_text, beside, text)
            print(f"Its tool cassette: {beside}", file=sys.stderr)
        await engine.announce_export(outcome.session_id, fmt, str(target), tool_cassette=cassette)
        print(f"Exported session {outcome.session_id} to {target}", file=sys.stderr)
    else:
        sys.stdout.buffer.write(outcome.content.encode("utf-8"))
        sys.stdout.buffer.flush()
        await engine.announce_export(outcome.session_id, fmt, tool_cassette=cassette)
    return 0


def cassette_beside(transcript: Path) -> Path:
    """Where a transcript's tool cassette goes: ``x.jsonl`` → ``x.tool-cassette.jsonl``."""
    stem = transcript.name.removesuffix(".jsonl")
    return transcript.with_name(stem + TOOL_CASSETTE_SUFFIX)


async def _import(engine: Engine, arguments: argparse.Namespace) -> int:
    cassette_file: Path | None = None
    if arguments.file == "-":
        text = await asyncio.to_thread(sys.stdin.read)
    else:
        text = await asyncio.to_thread(Path(arguments.file).read_text, encoding="utf-8")
        beside = cassette_beside(Path(arguments.file))
        cassette_file = beside if beside.is_file() else None
    if arguments.tool_cassette:
        cassette_file = Path(arguments.tool_cassette)
    cassette = (
        None
        if cassette_file is None
        else await asyncio.to_thread(cassette_file.read_text, encoding="utf-8")
    )
    session_id = await engine.import_jsonl(text, tool_cassette=cassette)
    if arguments.json:
        _print_json({"sessionId": session_id})
    else:
        print(f"Imported as session {session_id}")
    return 0


async def _fork(engine: Engine, arguments: argparse.Namespace) -> int:
    session_id = await engine.fork(arguments.session_id, arguments.at_sequence)
    if arguments.json:
        _print_json({"sessionId": session_id})
    else:
        print(
            f"Forked session {arguments.session_id} at message {arguments.at_sequence} "
            f"as {session_id}"
        )
    return 0


async def _delete(engine: Engine, arguments: argparse.Namespace) -> int:
    await engine.delete(arguments.session_id)
    print(f"Deleted session {arguments.session_id}")
    return 0


async def _replay(engine: Engine, arguments: argparse.Namespace) -> int:
    if arguments.live_tool and arguments.tool_replay_mode != "mixed":
        print("error: --live-tool needs --tool-replay-mode mixed", file=sys.stderr)
        return 1
    report = await engine.replay(
        arguments.session_id, mode=arguments.tool_replay_mode, live_tools=arguments.live_tool
    )
    if arguments.json:
        _print_json(report.to_wire())
    else:
        verdict = "identical to the original" if report.matches else "DIFFERENT from the original"
        print(
            f"Replayed {report.turns_replayed} turn(s) of session {arguments.session_id} into "
            f"session {report.replay_session_id}: transcript {verdict}."
        )
        source = "the stored tool cassette" if report.cassette == "stored" else "the transcript"
        print(
            f"Tool calls ({report.mode}): {report.recorded_tool_calls} from {source}, "
            f"{report.live_tool_calls} re-run live."
        )
        if report.skipped_turn_sequences:
            firsts = ", ".join(f"#{sequence}" for sequence in report.skipped_turn_sequences)
            print(f"Skipped turns that cannot be replayed (unfinished), starting at {firsts}.")
        for difference in report.differences:
            print(f"  - {difference}")
    return 0 if report.matches and not report.stopped else 1

"""``relavium/exportSession`` and ``relavium/forkSession`` (``docs/design.md`` §4, §9).

Opening an export, when the request asks for it (``open``, the default):

1. the client declared ``experimental.relavium.openUntitled`` → the server sends
   ``relavium/openUntitled {language, content, title}`` and reports what the client answered;
   the export is recorded as ``untitled`` (saving it is the user's act, noted on save);
2. otherwise, when the client supports ``window/showDocument`` → the server writes the file
   under ``<workingDir>/.relavium/exports/`` (never outside it, never over a different file)
   and asks the client to show it; that path is recorded as the export's location;
3. a client that can do neither gets nothing written into its workspace: the server keeps a
   copy under ``exports/`` in relavium's data directory, tells the user where with
   ``window/showMessage``, and the text comes back in the result as always.

With ``open: false`` nothing is opened or written: the result carries the text and the
suggested path, and the export is recorded as ``untitled``.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pydantic import ValidationError

from relavium_lsp.contracts.wire import (
    ExportSessionParams,
    ExportSessionResult,
    ForkSessionParams,
    ForkSessionResult,
    OpenUntitledParams,
    OpenUntitledResult,
)
from relavium_lsp.errors import ExportError
from relavium_lsp.export.files import EXPORTS_DIR
from relavium_lsp.paths import ensure_private_dir, relavium_home
from relavium_lsp.server import methods
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.engine.api import ExportOutcome
    from relavium_lsp.server.core import RelaviumServer

_log = logging.getLogger(__name__)
_LANGUAGES = {"workflow": "yaml", "jsonl": "jsonl", "markdown": "markdown"}
DATA_EXPORTS = Path("exports")  # inside relavium's data directory


def setup(server: RelaviumServer) -> None:
    """Register the export and fork requests."""
    register_request(server, methods.EXPORT_SESSION, ExportSessionParams, export_session)
    register_request(server, methods.FORK_SESSION, ForkSessionParams, fork_session)


async def export_session(ls: RelaviumServer, params: ExportSessionParams) -> Result:
    """Export a session; open it as an untitled document or a written file when asked."""
    from relavium_lsp.engine.api import UNTITLED  # loaded with the engine, not at server start

    engine = await get_engine(ls)
    outcome = await engine.render_export(params.session_id, params.format)
    opened = False
    saved: Path | None = None
    message: str | None = None
    suggested = outcome.suggested_path
    if params.open and ls.state.client.open_untitled:
        opened = await _open_untitled(ls, outcome)
    elif params.open and _can_show_documents(ls):
        saved = await _write_copy(outcome, outcome.working_dir, EXPORTS_DIR)
        if saved is not None:
            suggested = str(saved)
            opened = await _show_document(ls, saved)
    elif params.open:
        saved = await _write_copy(outcome, str(ensure_private_dir(relavium_home())), DATA_EXPORTS)
        message = _where_message(outcome, saved)
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Info, message=message)
        )
    location = str(saved) if saved is not None else UNTITLED
    cassette_path = await _write_cassette_beside(outcome, saved)
    await engine.announce_export(
        outcome.session_id, outcome.format, location, tool_cassette=outcome.tool_cassette
    )
    return ExportSessionResult(
        format=outcome.format,
        content=outcome.content,
        suggested_path=suggested,
        opened=opened,
        saved_path=str(saved) if saved is not None else None,
        message=message,
        tool_cassette_path=str(cassette_path) if cassette_path is not None else None,
    )


async def fork_session(ls: RelaviumServer, params: ForkSessionParams) -> Result:
    """Branch a session at one of its messages."""
    new_id = await (await get_engine(ls)).fork(params.session_id, params.at_sequence)
    return ForkSessionResult(session_id=new_id)


async def _open_untitled(ls: RelaviumServer, outcome: ExportOutcome) -> bool:
    params = OpenUntitledParams(
        language=_LANGUAGES[outcome.format], content=outcome.content, title=outcome.file_name
    )
    try:
        answer: Any = await ls.protocol.send_request_async(methods.OPEN_UNTITLED, params.to_wire())
        return OpenUntitledResult.model_validate(answer).opened
    except asyncio.CancelledError:
        raise
    except ValidationError:
        _log.warning("client answered %s with an invalid result", methods.OPEN_UNTITLED)
    except Exception as error:
        _log.warning("%s failed: %s", methods.OPEN_UNTITLED, type(error).__name__)
    return False


async def _write_copy(outcome: ExportOutcome, root: str, folder: Path) -> Path | None:
    from relavium_lsp.export.files import write_export_file

    try:
        return await asyncio.to_thread(
            write_export_file,
            root,
            outcome.stem,
            outcome.suffix,
            outcome.content,
            folder=folder,
        )
    except (ExportError, OSError) as error:
        # The text still goes back in the result; only the convenience of a file is lost.
        message = error.message if isinstance(error, ExportError) else str(error.strerror)
        _log.warning("export of %s not written to %s: %s", outcome.session_id, root, message)
        return None


async def _write_cassette_beside(outcome: ExportOutcome, saved: Path | None) -> Path | None:
    """A JSONL export written to disk gets its tool cassette beside it (same folder, name)."""
    from relavium_lsp.engine.api import TOOL_CASSETTE_SUFFIX
    from relavium_lsp.export.files import write_export_file

    text = outcome.tool_cassette_text()
    if saved is None or text is None:
        return None
    stem = saved.name.removesuffix(outcome.suffix)
    try:
        return await asyncio.to_thread(
            write_export_file, str(saved.parent), stem, TOOL_CASSETTE_SUFFIX, text, folder=Path()
        )
    except (ExportError, OSError) as error:
        message = error.message if isinstance(error, ExportError) else str(error.strerror)
        _log.warning("tool cassette of %s not written: %s", outcome.session_id, message)
        return None


def _where_message(outcome: ExportOutcome, saved: Path | None) -> str:
    where = f"a copy is in {saved}" if saved is not None else "no copy could be written"
    return (
        f"Relavium exported {outcome.file_name}: the editor cannot open it, so {where} "
        "(nothing was written into the workspace)."
    )


def _can_show_documents(ls: RelaviumServer) -> bool:
    window = ls.client_capabilities.window
    return window is not None and window.show_document is not None and window.show_document.support


async def _show_document(ls: RelaviumServer, path: Path) -> bool:
    try:
        result = await ls.window_show_document_async(
            types.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
        )
    except asyncio.CancelledError:
        raise
    except Exception as error:
        _log.warning("window/showDocument failed: %s", type(error).__name__)
        return False
    return bool(result.success)

"""Generate the protocol reference and both clients' protocol modules from the contracts.

Run ``python docs/generate_protocol.py`` (or ``make protocol``) to rewrite all three outputs —
``docs/protocol.md``, ``vscode-client/src/protocol.ts`` and
``lua/relavium/protocol.lua`` — or with ``--check`` to exit 1 when any is out
of date (a test does that). Methods come from :mod:`relavium_lsp.server.methods`, shapes from
:mod:`relavium_lsp.contracts`, so neither the reference nor a client can drift from the code.
Adding a method: docs/wire-methods.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from relavium_lsp import errors
from relavium_lsp.contracts import (
    chat_ui,
    editor_tools,
    events,
    memory,
    model_setup,
    peers,
    replay,
    review,
    rewind,
    session_ops,
    wire,
)
from relavium_lsp.server import methods

# docs/ is not a package: make docs/protocol_gen importable however this file is run or loaded.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from protocol_gen import lua, markdown, typescript
from protocol_gen.shapes import Direction, Protocol, Writer, walk

REPO = Path(__file__).resolve().parents[1]
OUTPUT = Path(__file__).with_name("protocol.md")
TS_OUTPUT = REPO / "vscode-client" / "src" / "protocol.ts"
LUA_OUTPUT = REPO / "lua" / "relavium" / "protocol.lua"

# (method, direction, kind, params, result); None result = no result (a notification).
REQUESTS: tuple[tuple[str, Direction, str, type[BaseModel], type[BaseModel] | str | None], ...] = (
    (methods.START_SESSION, "client → server", "request", wire.StartSessionParams,
     wire.StartSessionResult),
    (methods.SEND_MESSAGE, "client → server", "request", wire.SendMessageParams,
     wire.SendMessageResult),
    (methods.ABORT_TURN, "client → server", "request", wire.AbortTurnParams,
     wire.AbortTurnResult),
    (methods.CANCEL_SESSION, "client → server", "request", wire.SessionRefParams, "{}"),
    (methods.RESUME_SESSION, "client → server", "request", wire.SessionRefParams,
     wire.ResumeSessionResult),
    (methods.LIST_SESSIONS, "client → server", "request", wire.ListSessionsParams,
     wire.ListSessionsResult),
    (methods.GET_TRANSCRIPT, "client → server", "request", wire.GetTranscriptParams,
     wire.GetTranscriptResult),
    (methods.SESSION_EVENTS, "client → server", "request", wire.SessionEventsParams,
     wire.SessionEventsResult),
    (methods.RENAME_SESSION, "client → server", "request", wire.RenameSessionParams, "{}"),
    (methods.DELETE_SESSION, "client → server", "request", wire.SessionRefParams, "{}"),
    (methods.COMPACT_SESSION, "client → server", "request", wire.CompactSessionParams,
     "the terminal compaction event (`session:compacted` or `session:trimmed`)"),
    (methods.EXPORT_SESSION, "client → server", "request", wire.ExportSessionParams,
     wire.ExportSessionResult),
    (methods.FORK_SESSION, "client → server", "request", wire.ForkSessionParams,
     wire.ForkSessionResult),
    (methods.LIST_AGENTS, "client → server", "request", wire.EmptyParams, wire.ListAgentsResult),
    (methods.LIST_TOOLS, "client → server", "request", wire.ListToolsParams,
     wire.ListToolsResult),
    (methods.LIST_MODELS, "client → server", "request", wire.ListModelsParams,
     wire.ListModelsResult),
    (methods.LIST_CHECKPOINTS, "client → server", "request", rewind.ListCheckpointsParams,
     rewind.ListCheckpointsResult),
    (methods.REWIND, "client → server", "request", rewind.RewindParams, rewind.RewindResult),
    (methods.UNDO_REWIND, "client → server", "request", rewind.UndoRewindParams,
     rewind.RewindResult),
    (methods.TURN_CHANGES, "client → server", "request", review.TurnChangesParams,
     review.TurnChangesResult),
    (methods.CHECKPOINT_CONTENT, "client → server", "request", review.CheckpointContentParams,
     review.CheckpointContentResult),
    (methods.REVIEW_CHANGES, "client → server", "request", review.ReviewChangesParams,
     review.ReviewChangesResult),
    (methods.UPDATE_SESSION, "client → server", "request", session_ops.UpdateSessionParams,
     session_ops.UpdateSessionResult),
    (methods.APPEND_MESSAGE, "client → server", "request", session_ops.AppendMessageParams,
     session_ops.AppendMessageResult),
    (methods.RESTORE_SESSION, "client → server", "request", wire.SessionRefParams,
     session_ops.UpdateSessionResult),
    (methods.PURGE_SESSION, "client → server", "request", wire.SessionRefParams,
     session_ops.PurgeSessionResult),
    (methods.LIST_ARTIFACTS, "client → server", "request", session_ops.ListArtifactsParams,
     session_ops.ListArtifactsResult),
    (methods.LIST_HANDOFFS, "client → server", "request", session_ops.ListHandoffsParams,
     session_ops.ListHandoffsResult),
    (methods.SEND_PEER_MESSAGE, "client → server", "request", peers.SendPeerMessageParams,
     peers.SendPeerMessageResult),
    (methods.LIST_PEER_MESSAGES, "client → server", "request", peers.ListPeerMessagesParams,
     peers.ListPeerMessagesResult),
    (methods.CHECKPOINT_SESSION, "client → server", "request",
     session_ops.CheckpointSessionParams, "the `session:checkpoint` event's payload"),
    (methods.LIST_INTROSPECTIONS, "client → server", "request", wire.SessionRefParams,
     session_ops.ListIntrospectionsResult),
    (methods.REPLAY_SESSION, "client → server", "request", replay.ReplaySessionParams,
     replay.ReplaySessionResult),
    (methods.LIST_REPLAYS, "client → server", "request", wire.SessionRefParams,
     replay.ListReplaysResult),
    (methods.SESSION_MODELS, "client → server", "request", chat_ui.SessionModelsParams,
     chat_ui.SessionModelsResult),
    (methods.SET_MODEL, "client → server", "request", chat_ui.SetModelParams,
     chat_ui.SetModelResult),
    (methods.APPLY_CODE, "client → server", "request", chat_ui.ApplyCodeParams,
     chat_ui.ApplyCodeResult),
    (methods.GET_WORKSPACE_MEMORY, "client → server", "request", memory.WorkspaceMemoryParams,
     memory.WorkspaceMemory),
    (methods.SET_WORKSPACE_MEMORY, "client → server", "request",
     memory.SetWorkspaceMemoryParams, memory.WorkspaceMemory),
    (methods.LIST_MEMORY_PROPOSALS, "client → server", "request", memory.WorkspaceMemoryParams,
     memory.MemoryProposals),
    (methods.DECIDE_MEMORY_PROPOSAL, "client → server", "request",
     memory.DecideMemoryProposalParams, memory.DecideMemoryProposalResult),
    (methods.LIST_PROVIDER_PRESETS, "client → server", "request", wire.EmptyParams,
     model_setup.ListProviderPresetsResult),
    (methods.SETUP_MODEL, "client → server", "request", model_setup.SetupModelParams,
     model_setup.SetupModelResult),
    (methods.EDITOR_STATE, "client → server", "notification", wire.EditorStateParams, None),
    (methods.SESSIONS_CHANGED, "server → client", "notification", wire.SessionsChangedParams,
     None),
    (methods.WORKSPACE_MEMORY_CHANGED, "server → client", "notification",
     memory.WorkspaceMemoryChangedParams, None),
    (methods.REQUEST_APPROVAL, "server → client", "request", wire.RequestApprovalParams,
     wire.RequestApprovalResult),
    (methods.OPEN_UNTITLED, "server → client", "request", wire.OpenUntitledParams,
     wire.OpenUntitledResult),
    (methods.EDITOR_QUERY, "server → client", "request", editor_tools.EditorQueryParams,
     editor_tools.EditorQueryResult),
    (methods.CODE_ACTION_ASK, "client → server", "command", wire.SelectionCommandParams,
     wire.SelectionTurnResult),
    (methods.CODE_ACTION_EXPLAIN, "client → server", "command", wire.SelectionCommandParams,
     wire.SelectionTurnResult),
    (methods.CODE_ACTION_EXPORT, "client → server", "command", wire.ExportChatParams,
     wire.ExportSessionResult),
)  # fmt: skip
# Shapes outside the methods' own, with who writes them: `initialize`'s, settings, and the
# non-waiting send result.
EXTRA_TYPES: tuple[tuple[type[BaseModel], Writer], ...] = (
    (wire.SendMessageAccepted, "client"),
    (wire.InitializationOptions, "client"),
    (wire.RelaviumClientCapabilities, "client"),
    (wire.RelaviumServerCapabilities, "server"),
    (wire.ConfigurationSettings, "client"),
)


# Fields declared loosely in Python (validated elsewhere) with the shape typed clients see.
CARRIED: dict[tuple[type[BaseModel], str], Any] = {
    (wire.SessionEventsResult, "events"): list[events.StampedEvent],
}
# Named types no field refers to that clients still need (JSON-RPC `data.code`).
EXTRA_NAMED: tuple[Any, ...] = (errors.DomainErrorCode,)


def protocol() -> Protocol:
    """The walked contracts every output renders from."""
    return walk(REQUESTS, EXTRA_TYPES, CARRIED, EXTRA_NAMED)


def render() -> str:
    """The whole reference document."""
    return markdown.render(protocol())


def render_all() -> dict[Path, str]:
    """Every generated file and its text."""
    walked = protocol()
    return {
        OUTPUT: markdown.render(walked),
        TS_OUTPUT: typescript.render(walked),
        LUA_OUTPUT: lua.render(walked),
    }


def main(argv: list[str] | None = None) -> int:
    """Write the outputs, or with ``--check`` report whether they are current."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 if an output is stale")
    arguments = parser.parse_args(argv)
    outputs = render_all()
    if arguments.check:
        stale = [
            path
            for path, text in outputs.items()
            if not path.exists() or path.read_text(encoding="utf-8") != text
        ]
        for path in stale:
            print(f"{path} is out of date: run python docs/generate_protocol.py")
        if not stale:
            print("the protocol reference and client modules are up to date")
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

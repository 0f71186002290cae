"""Every custom JSON-RPC method and command name, in one place."""

from __future__ import annotations

START_SESSION = "relavium/startSession"
SEND_MESSAGE = "relavium/sendMessage"
ABORT_TURN = "relavium/abortTurn"
CANCEL_SESSION = "relavium/cancelSession"
RESUME_SESSION = "relavium/resumeSession"
LIST_SESSIONS = "relavium/listSessions"
GET_TRANSCRIPT = "relavium/getTranscript"
SESSION_EVENTS = "relavium/sessionEvents"
RENAME_SESSION = "relavium/renameSession"
DELETE_SESSION = "relavium/deleteSession"
COMPACT_SESSION = "relavium/compactSession"
EXPORT_SESSION = "relavium/exportSession"
FORK_SESSION = "relavium/forkSession"
LIST_AGENTS = "relavium/listAgents"
LIST_TOOLS = "relavium/listTools"
LIST_MODELS = "relavium/listModels"
LIST_CHECKPOINTS = "relavium/listCheckpoints"
REWIND = "relavium/rewind"
UNDO_REWIND = "relavium/undoRewind"
# Reviewing what a turn changed, file by file (docs/design.md §6.4).
TURN_CHANGES = "relavium/turnChanges"
CHECKPOINT_CONTENT = "relavium/checkpointContent"
REVIEW_CHANGES = "relavium/reviewChanges"
UPDATE_SESSION = "relavium/updateSession"
APPEND_MESSAGE = "relavium/appendMessage"
RESTORE_SESSION = "relavium/restoreSession"
PURGE_SESSION = "relavium/purgeSession"
LIST_ARTIFACTS = "relavium/listArtifacts"
LIST_HANDOFFS = "relavium/listHandoffs"
# Peer messages between sessions of one workspace (docs/design.md §2.5).
SEND_PEER_MESSAGE = "relavium/sendPeerMessage"
LIST_PEER_MESSAGES = "relavium/listPeerMessages"
# Introspection checkpoints (what the agent knew and decided), not rewind's file checkpoints.
CHECKPOINT_SESSION = "relavium/checkpointSession"
LIST_INTROSPECTIONS = "relavium/listIntrospections"
# Replaying a session into a new one (docs/design.md §9).
REPLAY_SESSION = "relavium/replaySession"
LIST_REPLAYS = "relavium/listReplays"
SESSION_MODELS = "relavium/sessionModels"
SET_MODEL = "relavium/setModel"
APPLY_CODE = "relavium/applyCode"
# The workspace's long-term memory document (§2.6).
GET_WORKSPACE_MEMORY = "relavium/getWorkspaceMemory"
SET_WORKSPACE_MEMORY = "relavium/setWorkspaceMemory"
LIST_MEMORY_PROPOSALS = "relavium/listMemoryProposals"
DECIDE_MEMORY_PROPOSAL = "relavium/decideMemoryProposal"
# Setting up a real model from the editor (§8.1).
LIST_PROVIDER_PRESETS = "relavium/listProviderPresets"
SETUP_MODEL = "relavium/setupModel"

# Every client → server request, in one tuple: ``workspace/executeCommand`` commands are
# registered from it at start-up, before the features implementing them are loaded (see
# ``RelaviumServer.load_deferred_features``); a test keeps it equal to the registered set.
REQUESTS = (
    START_SESSION,
    SEND_MESSAGE,
    ABORT_TURN,
    CANCEL_SESSION,
    RESUME_SESSION,
    LIST_SESSIONS,
    GET_TRANSCRIPT,
    SESSION_EVENTS,
    RENAME_SESSION,
    DELETE_SESSION,
    COMPACT_SESSION,
    EXPORT_SESSION,
    FORK_SESSION,
    LIST_AGENTS,
    LIST_MODELS,
    LIST_TOOLS,
    LIST_CHECKPOINTS,
    REWIND,
    UNDO_REWIND,
    TURN_CHANGES,
    CHECKPOINT_CONTENT,
    REVIEW_CHANGES,
    UPDATE_SESSION,
    APPEND_MESSAGE,
    RESTORE_SESSION,
    PURGE_SESSION,
    LIST_ARTIFACTS,
    LIST_HANDOFFS,
    SEND_PEER_MESSAGE,
    LIST_PEER_MESSAGES,
    CHECKPOINT_SESSION,
    LIST_INTROSPECTIONS,
    REPLAY_SESSION,
    LIST_REPLAYS,
    SESSION_MODELS,
    SET_MODEL,
    APPLY_CODE,
    GET_WORKSPACE_MEMORY,
    SET_WORKSPACE_MEMORY,
    LIST_MEMORY_PROPOSALS,
    DECIDE_MEMORY_PROPOSAL,
    LIST_PROVIDER_PRESETS,
    SETUP_MODEL,
)

EDITOR_STATE = "relavium/editorState"  # client → server notification
SESSION_EVENT = "relavium/sessionEvent"  # server → client notification
SESSIONS_CHANGED = "relavium/sessionsChanged"  # server → client notification
WORKSPACE_MEMORY_CHANGED = "relavium/workspaceMemoryChanged"  # server → client notification
REQUEST_APPROVAL = "relavium/requestApproval"  # server → client request
OPEN_UNTITLED = "relavium/openUntitled"  # server → client request
EDITOR_QUERY = "relavium/editorQuery"  # server → client request (editor_* tools)

# workspace/executeCommand names: "relavium.startSession" for "relavium/startSession", …
COMMAND_PREFIX = "relavium."

# Commands only (no request of their own): what the code actions on a selection run.
CODE_ACTION_ASK = "relavium.codeAction.ask"
CODE_ACTION_EXPLAIN = "relavium.codeAction.explain"
CODE_ACTION_EXPORT = "relavium.codeAction.export"


def command_name(method: str) -> str:
    """The executeCommand name of a custom request method."""
    return COMMAND_PREFIX + method.removeprefix("relavium/")


def request_of_command(name: str) -> str:
    """The custom request method an executeCommand name stands for."""
    return "relavium/" + name.removeprefix(COMMAND_PREFIX)


# Every workspace/executeCommand name the server offers (listed at ``initialize``).
COMMANDS = (
    *(command_name(method) for method in REQUESTS),
    CODE_ACTION_ASK,
    CODE_ACTION_EXPLAIN,
    CODE_ACTION_EXPORT,
)

"""Every error relavium-lsp raises on purpose.

::

    RelaviumError
    ├── ConfigError              a config or agent file is invalid (file, line, field)
    ├── StoreError               the history database cannot be used
    │   ├── DatabaseKeyError     wrong or missing key; the file was not touched
    │   ├── DatabaseCorrupted    the file is damaged (names it; doctor --check, recover)
    │   └── DiskFull             no space left for the database (names it; nothing lost)
    ├── InvalidInput             a request's content is unusable (empty message, bad media)
    │   └── BroadWorkingDir      a session's workingDir is / or home, not allowed explicitly
    ├── MemoryConflict           a workspace memory write based on a stale revision
    ├── SessionError             a request does not fit the session's state
    │   ├── SessionNotFound
    │   ├── SessionBusy          a turn is already running
    │   │   └── SessionRunningElsewhere   …in another process (window) on the same history
    │   │       └── LeaseLost    this process's turn was taken over; it writes no more
    │   └── SessionEnded
    ├── ToolError                a tool call failed (carries an ErrorCode)
    │   └── ToolDenied           refused by policy; never retried
    ├── ProviderSetupError       a provider cannot be built (unknown id, local URL refused, …)
    └── ExportError              an import/export file is invalid (line number when known)

Messages are user-safe: they never contain a key, a token or a secret value. The LSP layer
maps these to JSON-RPC errors at its edge (``data.code`` is :attr:`RelaviumError.code`).
"""

from __future__ import annotations

from typing import Literal

from relavium_lsp.contracts.events import ErrorCode

SessionErrorCode = Literal[
    "session_not_found", "session_busy", "session_ended", "session_running_elsewhere"
]
MemoryErrorCode = Literal["memory_conflict"]
# A client asks the user and retries with allowBroadWorkingDir (or opens a project folder).
WorkingDirErrorCode = Literal["broad_working_dir"]
DomainErrorCode = ErrorCode | SessionErrorCode | MemoryErrorCode | WorkingDirErrorCode


class RelaviumError(Exception):
    """Root of every deliberate error; ``code`` is the stable machine-readable kind."""

    code: DomainErrorCode = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def details(self) -> dict[str, int | str]:
        """Extra machine-readable fields for the JSON-RPC error's ``data`` (never secrets)."""
        return {}


class ConfigError(RelaviumError):
    """A configuration or agent file is invalid."""

    code: DomainErrorCode = "validation"

    def __init__(
        self, message: str, *, file: str, line: int | None = None, field: str | None = None
    ) -> None:
        location = file if line is None else f"{file}:{line}"
        where = f" (field {field!r})" if field else ""
        super().__init__(f"{location}: {message}{where}")
        self.file = file
        self.line = line
        self.field = field


class InvalidInput(RelaviumError):
    """A request passed schema validation but its content cannot be used."""

    code: DomainErrorCode = "validation"


class BroadWorkingDir(InvalidInput):
    """A session would start at ``/`` or the home directory without the user's explicit yes.

    Its own ``data.code`` (``broad_working_dir``) lets a client recognise it without reading
    the message: it asks the user, then retries with ``allowBroadWorkingDir`` (issue 35).
    """

    code: DomainErrorCode = "broad_working_dir"

    def __init__(self, message: str, *, working_dir: str, reason: str) -> None:
        super().__init__(message)
        self.working_dir = working_dir
        self.reason = reason

    def details(self) -> dict[str, int | str]:
        """``workingDir`` and why it is too broad, for the client's question to the user."""
        return {"workingDir": self.working_dir, "reason": self.reason}


class MemoryConflict(RelaviumError):
    """A workspace memory write was based on a revision that is no longer the newest.

    Another window (or an introspection checkpoint) saved the document meanwhile; the client
    reloads it (``current_revision``) and merges before saving again (§2.6).
    """

    code: DomainErrorCode = "memory_conflict"

    def __init__(self, message: str, *, current_revision: int) -> None:
        super().__init__(message)
        self.current_revision = current_revision

    def details(self) -> dict[str, int | str]:
        """``currentRevision``: what the client should reload."""
        return {"currentRevision": self.current_revision}


class StoreError(RelaviumError):
    """The history database cannot be used."""


class DatabaseKeyError(StoreError):
    """The database could not be decrypted with the available key."""


class DatabaseCorrupted(StoreError):
    """The database file is damaged (not a wrong key); the message names the file."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class DiskFull(StoreError):
    """No space left on the disk holding the database; the write was rolled back."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class SessionError(RelaviumError):
    """A request does not fit the session's current state."""


class SessionNotFound(SessionError):
    """No (undeleted) session has that id."""

    code: DomainErrorCode = "session_not_found"


class SessionBusy(SessionError):
    """The session already runs a turn."""

    code: DomainErrorCode = "session_busy"


class SessionRunningElsewhere(SessionBusy):
    """Another server process (editor window) runs a turn of the session (it holds the lease).

    Clients show it as "running in another window"; reading, watching, exporting and asking
    for an abort stay allowed (``docs/design.md`` §7.1).
    """

    code: DomainErrorCode = "session_running_elsewhere"


class LeaseLost(SessionRunningElsewhere):
    """A turn's lease was taken over by another process; the turn wrote nothing after that."""


class SessionEnded(SessionError):
    """The session was cancelled; resume it first."""

    code: DomainErrorCode = "session_ended"


class ToolError(RelaviumError):
    """A tool call failed."""

    def __init__(self, message: str, *, code: ErrorCode = "tool_failed") -> None:
        super().__init__(message)
        self.code = code


class ToolDenied(ToolError):
    """A tool call was refused by policy (scope jail, allowlists, approval)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="tool_denied")


class ProviderSetupError(RelaviumError):
    """A provider could not be built from configuration."""

    code: DomainErrorCode = "validation"


class ExportError(RelaviumError):
    """An export or import document is invalid."""

    code: DomainErrorCode = "validation"

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.line = line

"""Every error relavium-lsp raises on purpose.

::

    RelaviumError
    ├── ConfigError              a config or agent file is invalid (file, line, field)
    ├── StoreError               the history database cannot be used
    │   ├── DatabaseKeyError     wrong or missing key; the file was not touched
    │   ├── DatabaseCorrupted    the file is damaged (names it; doctor --check, recover)
    │   └── DiskFull             no space left for the database (names it; nothing lost)
    ├── InvalidInput             a request's content is unusable (empty message, bad media)
    ├── SessionError             a request does not fit the session's state
    │   ├── SessionNotFound
    │   ├── SessionBusy          a turn is already running
    │   │   └── SessionRunningElsewhere   …in another process (window) on the same history
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
DomainErrorCode = ErrorCode | SessionErrorCode


class RelaviumError(Exception):
    """Root of every deliberate error; ``code`` is the stable machine-readable kind."""

    code: DomainErrorCode = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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

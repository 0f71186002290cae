"""Logging: a rotating file under the data directory, a quiet stderr, secrets redacted.

Editors show a language server's stderr to users, so only warnings and worse go there; the
full log (level set by ``--log-level`` or ``RELAVIUM_LOG_LEVEL``, default INFO) goes to
``<RELAVIUM_HOME>/logs/relavium-lsp.log``, rotated at 1 MB with 3 backups, every file 0600.
Any value registered with :func:`register_secret` (API keys, the database key) is replaced by
``[redacted]`` in every record as defence in depth — code should never log one anyway.
Below DEBUG, libraries that log message bodies (pygls logs every JSON-RPC message at INFO)
are held at WARNING, so the default log never holds conversation text; DEBUG does.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import sys
from pathlib import Path

from pygls.exceptions import JsonRpcException

from relavium_lsp.log_secrets import redact, register_secret
from relavium_lsp.paths import PRIVATE_FILE_MODE, ensure_private_dir, tighten_mode

__all__ = ["configure_logging", "redact", "register_secret"]

LOG_FILE_NAME = "relavium-lsp.log"
LOG_LEVEL_ENV = "RELAVIUM_LOG_LEVEL"
MAX_LOG_BYTES = 1_000_000
LOG_BACKUPS = 3
_OWNED_MARK = "_relavium_owned"
# Third-party loggers that record message bodies or request details at INFO.
CHATTY_LIBRARIES = ("pygls", "httpx", "httpcore", "httpx2", "mcp", "asyncio")
PYGLS_RPC_LOGGER = "pygls.protocol.json_rpc"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactingFilter(logging.Filter):
    """Rewrites records so registered secrets never reach a handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Render the message once, redacted, and drop the raw arguments."""
        message = record.getMessage()
        cleaned = redact(message)
        if record.exc_info and record.exc_text is None:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        record.msg, record.args = cleaned, None
        return True


# pygls warnings that only say a client sent something odd (answered or ignored as the
# protocol says): the client's problem, not the server's, so one INFO line in the file log
# and nothing on stderr (issue 16: a burst of bad requests must not flood the editor's
# output). Mapped to the line logged instead; ``None`` keeps pygls's own arguments.
CLIENT_MISTAKES: dict[str, str | None] = {
    "Failed to handle request %r, unknown method %r": None,
    "Ignoring notification for unknown method %r": None,
    'Cancel notification for unknown message id "%s"': None,
    'Received response to unknown message id "%s"': None,
    # pygls would log the whole message (conversation text): say less.
    'Unknown message "%s"': "ignored a message that is not JSON-RPC 2.0",
    "Server shutting down. No more requests!": None,
}


class AnsweredErrorFilter(logging.Filter):
    """Demotes pygls' traceback for an error that was answered to the client as intended.

    Handlers translate every failure into a JSON-RPC error on purpose (an unexpected one is
    logged with its traceback by the handler edge itself), yet pygls logs each of them as an
    ERROR with a traceback — on stderr, which editors show to users. Attached to pygls'
    JSON-RPC logger, this keeps one INFO line instead; a non-JSON-RPC exception is untouched.
    The warnings in :data:`CLIENT_MISTAKES` become INFO lines too.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite answered-error records in place; always keep the record."""
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, JsonRpcException) and record.levelno >= logging.ERROR:
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg = "answered a request with JSON-RPC error %s: %s"
            record.args = (error.code, error.message)
            record.exc_info, record.exc_text = None, None
        elif isinstance(record.msg, str) and record.msg in CLIENT_MISTAKES:
            record.levelno, record.levelname = logging.INFO, "INFO"
            replacement = CLIENT_MISTAKES[record.msg]
            if replacement is not None:
                record.msg, record.args = replacement, None
        return True


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose files (the fresh one after each rollover too) are mode 0600.

    A log that cannot be written (the disk is full, issue 16) says so once on stderr, in one
    line, and again when it works again — not Python's "--- Logging error ---" traceback for
    every record, on the stderr the editor shows.
    """

    _failing = False
    _failed_now = False

    def emit(self, record: logging.LogRecord) -> None:
        """Write the record; notice when writing starts or stops failing."""
        self._failed_now = False
        super().emit(record)
        if self._failing and not self._failed_now:
            self._failing = False
            sys.stderr.write(f"relavium-lsp: the log {self.baseFilename} is writable again\n")

    def handleError(self, record: logging.LogRecord) -> None:
        """One stderr line when the log stops being writable; silence after it."""
        self._failed_now = True
        if self._failing:
            return
        self._failing = True
        error = sys.exc_info()[1]
        reason = getattr(error, "strerror", None) or type(error).__name__
        sys.stderr.write(
            f"relavium-lsp: cannot write the log {self.baseFilename} ({reason}); "
            "log lines are dropped until it can\n"
        )

    def _open(self) -> io.TextIOWrapper:
        descriptor = os.open(
            self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE_MODE
        )
        return open(descriptor, "a", encoding=self.encoding, errors=self.errors)


def log_level_number(level: str | None) -> int:
    """The numeric level for a name such as ``debug`` or ``WARNING``; unknown names mean INFO."""
    chosen = (level or os.environ.get(LOG_LEVEL_ENV) or "INFO").strip().upper()
    return logging.getLevelNamesMapping().get(chosen, logging.INFO)


def configure_logging(
    home: Path,
    level: str | None = None,
    *,
    stderr_level: int = logging.WARNING,
    file_name: str = LOG_FILE_NAME,
    max_bytes: int = MAX_LOG_BYTES,
    backup_count: int = LOG_BACKUPS,
) -> Path:
    """Send logs to the rotating file (and warnings to stderr); returns the log file path.

    Calling it again replaces (and closes) the handlers an earlier call installed.
    """
    log_dir = ensure_private_dir(home / "logs")
    path = log_dir / file_name
    file_handler = PrivateRotatingFileHandler(
        path, maxBytes=max_bytes, backupCount=backup_count, encoding="utf-8"
    )
    file_handler.setFormatter(logging.Formatter(_FORMAT))
    file_handler.setLevel(log_level_number(level))
    stderr_handler = logging.StreamHandler()
    stderr_handler.setFormatter(logging.Formatter(_FORMAT))
    stderr_handler.setLevel(stderr_level)
    redactor = RedactingFilter()
    for handler in (file_handler, stderr_handler):
        handler.addFilter(redactor)
        setattr(handler, _OWNED_MARK, True)
    # pygls logs every JSON-RPC message it sends at INFO — whole conversations and file
    # contents, in plain text next to an encrypted database. Libraries speak up only when
    # DEBUG was asked for explicitly.
    library_level = logging.NOTSET if file_handler.level <= logging.DEBUG else logging.WARNING
    for name in CHATTY_LIBRARIES:
        logging.getLogger(name).setLevel(library_level)
    rpc_logger = logging.getLogger(PYGLS_RPC_LOGGER)
    if not any(isinstance(item, AnsweredErrorFilter) for item in rpc_logger.filters):
        rpc_logger.addFilter(AnsweredErrorFilter())
    root = logging.getLogger()
    for previous in root.handlers:
        if getattr(previous, _OWNED_MARK, False):
            previous.close()
    root.handlers = [file_handler, stderr_handler]
    root.setLevel(min(file_handler.level, stderr_level))
    tighten_mode(path, PRIVATE_FILE_MODE)
    return path

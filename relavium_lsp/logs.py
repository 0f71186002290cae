"""Logging: a rotating file under the data directory, a quiet stderr, secrets redacted.

Editors show a language server's stderr to users, so only warnings and worse go there; the
full log (level set by ``--log-level`` or ``RELAVIUM_LOG_LEVEL``) goes to
``<RELAVIUM_HOME>/logs/relavium-lsp.log``, rotated at 1 MB with 3 backups. Any value
registered with :func:`register_secret` (API keys, the database key) is replaced by
``[redacted]`` in every record as defence in depth — code should never log one anyway.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import threading
from pathlib import Path

LOG_FILE_NAME = "relavium-lsp.log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_secrets: set[str] = set()
_secrets_lock = threading.Lock()
MIN_SECRET_LENGTH = 8


def register_secret(value: str) -> None:
    """Make sure ``value`` never appears in a log record."""
    if len(value) >= MIN_SECRET_LENGTH:
        with _secrets_lock:
            _secrets.add(value)


def redact(text: str) -> str:
    """``text`` with every registered secret replaced."""
    with _secrets_lock:
        secrets = tuple(_secrets)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "[redacted]")
    return text


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


def configure_logging(
    home: Path, level: str | None = None, *, stderr_level: int = logging.WARNING
) -> Path:
    """Send logs to the rotating file (and warnings to stderr); returns the log file path."""
    chosen = (level or os.environ.get("RELAVIUM_LOG_LEVEL") or "INFO").upper()
    log_dir = home / "logs"
    log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = log_dir / LOG_FILE_NAME
    file_handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=1_000_000, backupCount=3, encoding="utf-8"
    )
    file_handler.setFormatter(logging.Formatter(_FORMAT))
    file_handler.setLevel(getattr(logging, chosen, logging.INFO))
    stderr_handler = logging.StreamHandler()
    stderr_handler.setFormatter(logging.Formatter(_FORMAT))
    stderr_handler.setLevel(stderr_level)
    redactor = RedactingFilter()
    for handler in (file_handler, stderr_handler):
        handler.addFilter(redactor)
    root = logging.getLogger()
    root.handlers = [file_handler, stderr_handler]
    root.setLevel(min(file_handler.level, stderr_level))
    os.chmod(path, 0o600)
    return path

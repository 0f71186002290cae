"""When an untouched session becomes ``inactive`` (seed 002's session lifecycle).

A session nobody has touched — no turn, no rename, no reopen — for the idle time is marked
``inactive`` when the sessions are next listed; reopening it (``resumeSession``, or
``startSession`` with its id) makes it ``idle`` again. Only settled sessions (``idle``,
``ended``, ``failed``) go inactive: a running turn, an approval or a delegation it waits on
keeps it as it is. The idle time is ``RELAVIUM_INACTIVE_AFTER_DAYS`` (fractions allowed),
30 days by default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from relavium_lsp.store.models import utc_timestamp

DEFAULT_INACTIVE_AFTER = timedelta(days=30)
INACTIVE_AFTER_ENV = "RELAVIUM_INACTIVE_AFTER_DAYS"


@dataclass(frozen=True)
class InactivePolicy:
    """How long a settled session may sit untouched before it is marked ``inactive``."""

    after: timedelta = DEFAULT_INACTIVE_AFTER

    @classmethod
    def from_env(cls) -> InactivePolicy:
        """The default, overridden by a positive ``RELAVIUM_INACTIVE_AFTER_DAYS``."""
        text = os.environ.get(INACTIVE_AFTER_ENV)
        try:
            days = float(text) if text else None
        except ValueError:
            days = None
        if days is None or not days > 0 or days == float("inf"):
            return cls()
        return cls(after=timedelta(days=days))

    def cutoff(self, now: datetime | None = None) -> str:
        """The store timestamp before which an untouched session is inactive."""
        return utc_timestamp((now or datetime.now(UTC)) - self.after)

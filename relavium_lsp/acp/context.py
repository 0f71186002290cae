"""A new session's context from ``session/new``, and Relavium's ``_meta`` extensions.

ACP gives only ``cwd`` (an absolute path): it becomes ``SessionContext.workingDir`` — the
root of the scope jail — and ``gitRef`` is read from the repository there (branch, else
short commit). There is no active file or selection in ACP; the client sends what it wants
the agent to see as embedded context in the prompt instead.

Extensions ride in ``_meta.relavium`` (ACP's extensibility point), validated strictly:
``session/new`` accepts ``{agentRef?, title?}``; ``session/list`` accepts ``{query?,
status?}`` (``query`` is the store's full-text search).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sized
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field

from relavium_lsp.contracts.base import WireModel, validate_request
from relavium_lsp.contracts.session import SessionContext, SessionStatus
from relavium_lsp.errors import BroadWorkingDir, InvalidInput
from relavium_lsp.gitref import detect_git_ref

_log = logging.getLogger(__name__)
META_KEY = "relavium"
MetaT = TypeVar("MetaT", bound=WireModel)


class NewSessionMeta(WireModel):
    """``_meta.relavium`` of ``session/new``."""

    agent_ref: str | None = Field(default=None, min_length=1, max_length=200)
    title: str | None = Field(default=None, max_length=500)
    # The user chose a cwd at / or their home directory (refused otherwise).
    allow_broad_working_dir: bool = False


class ListSessionsMeta(WireModel):
    """``_meta.relavium`` of ``session/list``."""

    query: str | None = Field(default=None, max_length=500)
    status: SessionStatus | None = None


def relavium_meta(extra: dict[str, Any], model: type[MetaT]) -> MetaT:
    """Validate the ``relavium`` entry of a request's ``_meta`` (absent → defaults)."""
    return validate_request(model, extra.get(META_KEY))


def absolute_path(cwd: str) -> str:
    """``cwd`` normalised, if it is absolute (ACP requires absolute paths)."""
    if not os.path.isabs(cwd):
        raise InvalidInput(f"cwd must be an absolute path, got {cwd[:200]!r}")
    return os.path.normpath(cwd)


def checked_directory(cwd: str) -> str:
    """``cwd`` normalised, if it is an absolute path to an existing directory."""
    normalized = absolute_path(cwd)
    if not Path(normalized).is_dir():
        raise InvalidInput(f"cwd {normalized[:200]!r} is not a directory")
    return normalized


async def context_for(cwd: str) -> SessionContext:
    """The context of a session opened in ``cwd``."""
    working_dir = checked_directory(cwd)
    return SessionContext(working_dir=working_dir, git_ref=await detect_git_ref(Path(working_dir)))


def broad_cwd_refusal(error: BroadWorkingDir) -> BroadWorkingDir:
    """The refusal of a cwd at ``/`` or home, worded for the person using the ACP client.

    An ACP client usually shows the message as it is and has no dialog of ours to ask the
    user, so the message itself says what to do.
    """
    return BroadWorkingDir(
        f"Relavium will not start a session in {error.working_dir!r}: it is {error.reason}, "
        "and the session's sandbox would hold every file under it. Open a project folder "
        "and start the chat there. To allow this directory anyway, the ACP client can send "
        f'_meta: {{"{META_KEY}": {{"allowBroadWorkingDir": true}}}} with session/new.',
        working_dir=error.working_dir,
        reason=error.reason,
    )


def note_unsupported(additional_directories: Sized | None) -> None:
    """Log what the client offered that this agent does not use (extra roots)."""
    if additional_directories:
        _log.info(
            "ignoring %d additional directories: the scope tier decides what is reachable",
            len(additional_directories),
        )

"""Which git ref a workspace is on — for a session's provenance (``SessionContext.gitRef``).

Shared by every protocol layer (LSP, ACP). Runs git read-only with a minimal environment and
a timeout; anything unusual (no git, not a repository, a hung repository) means "unknown".
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

GIT_TIMEOUT_S = 5.0
_GIT_ENV = {"PATH": os.defpath, "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1"}


async def detect_git_ref(directory: Path) -> str | None:
    """The checked-out branch, else the short commit; ``None`` outside a repository."""
    branch = await _git(directory, "symbolic-ref", "--short", "-q", "HEAD")
    return branch or await _git(directory, "rev-parse", "--short", "HEAD")


async def _git(directory: Path, *arguments: str) -> str | None:
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            "-C",
            str(directory),
            *arguments,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            stdin=asyncio.subprocess.DEVNULL,
            env={**_GIT_ENV, "HOME": str(directory)},
        )
    except OSError:
        return None
    try:
        output, _ = await asyncio.wait_for(process.communicate(), GIT_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        return None
    text = output.decode("utf-8", "replace").strip()
    return text if process.returncode == 0 and text else None

"""Which project-declared MCP servers the user trusts, per workspace, by content hash.

A server a ``.relavium/project.toml`` declares is code from whoever wrote the repository, so
it never starts until the user said yes to *that* definition in *that* workspace. The answer
is kept in ``<relavium home>/mcp-trust.json`` (0600, beside the history database — never in
the repository, which could otherwise pre-approve itself) as ``{workspace: {server name:
fingerprint}}``. A changed definition has another fingerprint, so it is asked about again.

The file is small and read on every check, so a trust granted by one editor's server process
is seen by the others; writes take a lock file and replace the file atomically.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from relavium_lsp.atomic_write import atomic_write_text
from relavium_lsp.config.mcp_servers import ServerDefinition
from relavium_lsp.paths import ensure_private_dir, relavium_home

TRUST_FILE_NAME = "mcp-trust.json"
_VERSION = 1
_log = logging.getLogger(__name__)


class TrustStore:
    """Remembered trust decisions for project-declared MCP servers."""

    def __init__(self, home: Path | None = None) -> None:
        self._home = home

    @property
    def path(self) -> Path:
        """The trust file (under the relavium home, resolved when used)."""
        return (self._home or relavium_home()) / TRUST_FILE_NAME

    def is_trusted(self, server: ServerDefinition) -> bool:
        """Whether this exact definition is trusted (servers that need no trust always are)."""
        if not server.needs_trust:
            return True
        workspaces = self._read().get("workspaces", {})
        trusted = workspaces.get(_workspace_key(server), {})
        return isinstance(trusted, dict) and trusted.get(server.name) == server.fingerprint()

    def trust(self, server: ServerDefinition) -> None:
        """Remember that the user trusts this definition in its workspace."""
        if not server.needs_trust:
            return
        with self._locked():
            document = self._read()
            workspaces = document.setdefault("workspaces", {})
            workspaces.setdefault(_workspace_key(server), {})[server.name] = server.fingerprint()
            self._write(document)
        _log.info("trusted MCP server %r of %s", server.name, server.workspace)

    def revoke(self, server: ServerDefinition) -> bool:
        """Forget the trust in a server of a workspace; ``False`` if there was none."""
        with self._locked():
            document = self._read()
            trusted = document.get("workspaces", {}).get(_workspace_key(server), {})
            if not isinstance(trusted, dict) or trusted.pop(server.name, None) is None:
                return False
            self._write(document)
        return True

    async def is_trusted_async(self, server: ServerDefinition) -> bool:
        """:meth:`is_trusted` off the event loop."""
        if not server.needs_trust:
            return True
        return await asyncio.to_thread(self.is_trusted, server)

    async def trust_async(self, server: ServerDefinition) -> None:
        """:meth:`trust` off the event loop."""
        await asyncio.to_thread(self.trust, server)

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {"version": _VERSION, "workspaces": {}}
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            # A damaged file trusts nothing; the next approval rewrites it.
            _log.warning(
                "%s is not valid JSON; treating every project MCP server as untrusted", self.path
            )
            return {"version": _VERSION, "workspaces": {}}
        if not isinstance(document, dict) or not isinstance(document.get("workspaces"), dict):
            return {"version": _VERSION, "workspaces": {}}
        return document

    def _write(self, document: dict[str, Any]) -> None:
        document["version"] = _VERSION
        atomic_write_text(self.path, json.dumps(document, indent=2, sort_keys=True) + "\n")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        ensure_private_dir(self.path.parent)
        lock_path = self.path.with_name(TRUST_FILE_NAME + ".lock")
        descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)


def _workspace_key(server: ServerDefinition) -> str:
    return server.workspace or ""

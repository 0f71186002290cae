"""``relavium-lsp doctor``: check the installation, the data directory and the configuration.

Providers are probed too (one ``GET /models`` each, see
:mod:`relavium_lsp.commands.doctor_probe`) unless ``--offline`` is given.
Each check prints one ✓ / ✗ / · line (problem lines carry a hint on how to fix them); the
exit status is 0 when nothing is wrong and 1 otherwise. ``--json`` prints the same as data.
Doctor only reads: it never creates the data directory, a database or a key, and it never
prints a key — only where one was found. It starts the MCP servers the user configured (or
trusted in the workspace) once, to report whether each starts; see
:mod:`relavium_lsp.commands.doctor_mcp`.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import logging
import os
import stat
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import httpx
import sqlcipher3

from relavium_lsp import __version__
from relavium_lsp.commands import Subcommands
from relavium_lsp.commands.doctor_mcp import mcp_checks
from relavium_lsp.commands.doctor_probe import probe_providers
from relavium_lsp.commands.recover import key_available, run_check
from relavium_lsp.config import WorkspaceConfig, load_workspace_config
from relavium_lsp.contracts.agent import OFFLINE_PROVIDER_ID
from relavium_lsp.errors import RelaviumError
from relavium_lsp.keychain import usable_keychain
from relavium_lsp.llm.cloud_probe import CLOUD_KINDS, credential_finding
from relavium_lsp.llm.keys import key_env_var, keychain_key
from relavium_lsp.llm.providers import resolve_chain
from relavium_lsp.logs import LOG_FILE_NAME, LOG_LEVEL_ENV
from relavium_lsp.paths import KEY_FILE_NAME, history_db_path, relavium_home
from relavium_lsp.store.db import PLAINTEXT_SQLITE_HEADER, read_header
from relavium_lsp.store.keys import KEY_ENV, resolve_db_key
from relavium_lsp.store.sessions import SessionStore

Status = Literal["ok", "problem", "info"]
MINIMUM_PYTHON = (3, 11)
DEPENDENCIES = ("pygls", "lsprotocol", "pydantic", "sqlcipher3", "keyring", "ruamel.yaml", "httpx")
_SYMBOLS = {"ok": ("✓", "ok"), "problem": ("✗", "XX"), "info": ("·", "--")}


@dataclass(frozen=True)
class Check:
    """One finding: what was checked, how it went, and what to do about a problem."""

    check: str
    status: Status
    summary: str
    hint: str | None = None


def register(subparsers: Subcommands) -> None:
    """Add the ``doctor`` subcommand."""
    parser = subparsers.add_parser(
        "doctor",
        help="check versions, keychain, database, providers, MCP servers and configuration",
        description="Check the installation and configuration; exit status 1 if anything "
        "is wrong. Reads only: nothing is created or changed (MCP servers you configured, or "
        "trusted in this workspace, are started once to see that they work).",
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        type=Path,
        help="workspace whose .relavium/ configuration to check (default: current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.add_argument(
        "--offline",
        action="store_true",
        help="do not contact providers (skip asking each one for its models)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only check the history database in depth: read every session, list damage",
    )
    parser.add_argument("--history", metavar="PATH", help="history database for --check")
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Run every check, print them, return 1 if any found a problem."""
    workspace = (arguments.workspace or Path.cwd()).expanduser().absolute()
    # Library notices (say, "no keychain: using the key file") repeat what a check reports;
    # a null handler keeps Python's last-resort handler from printing them on stderr.
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())
    if arguments.check:
        return run_check(arguments.history, as_json=arguments.json)
    checks = collect_checks(workspace, probe=not arguments.offline)
    problems = [check for check in checks if check.status == "problem"]
    if arguments.json:
        document = {"ok": not problems, "checks": [asdict(check) for check in checks]}
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        _print_human(checks)
    return 1 if problems else 0


def collect_checks(workspace: Path, *, probe: bool = True) -> list[Check]:
    """Every check, in the order they are shown (``probe``: ask providers for their models)."""
    home = relavium_home()
    checks = [_python(), *_packages(), _data_directory(home), _keychain(home)]
    checks.append(_database(home))
    checks.append(_log_file(home))
    config, config_check = _workspace_config(workspace, home)
    checks.append(config_check)
    checks.extend(_providers(config))
    if probe and config is not None:
        checks.extend(
            Check(f"Endpoint {found.provider_id}", "ok" if found.ok else "problem",
                  found.summary, found.hint)
            for found in probe_providers(config)
        )  # fmt: skip
    if config is not None:
        found_mcp = mcp_checks(config.mcp_servers, workspace, home, network=probe)
        checks.extend(Check(*found) for found in found_mcp)
    return checks


def _print_human(checks: list[Check]) -> None:
    unicode = _can_print("✓✗·")
    for check in checks:
        symbol = _SYMBOLS[check.status][0 if unicode else 1]
        print(f"{symbol} {check.check}: {check.summary}")
        if check.hint:
            print(f"    {check.hint}")
    problems = sum(check.status == "problem" for check in checks)
    print()
    print("No problems found." if not problems else f"{problems} problem(s) found.")


def _can_print(text: str) -> bool:
    try:
        text.encode(sys.stdout.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _python() -> Check:
    version = ".".join(str(part) for part in sys.version_info[:3])
    if sys.version_info[:2] < MINIMUM_PYTHON:
        return Check("Python", "problem", f"{version} is too old", "relavium-lsp needs 3.11+")
    return Check("Python", "ok", f"{version} ({sys.executable})")


def _packages() -> list[Check]:
    found: list[str] = [f"relavium-lsp {__version__}"]
    missing: list[str] = []
    for name in DEPENDENCIES:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    checks = [Check("Packages", "ok", ", ".join(found))]
    if missing:
        checks.append(
            Check(
                "Packages",
                "problem",
                f"missing: {', '.join(missing)}",
                "reinstall: pip install relavium-lsp (or `make setup` in a checkout)",
            )
        )
    else:
        checks.append(_sqlcipher())
    return checks


def _sqlcipher() -> Check:
    import sqlcipher3

    connection = sqlcipher3.connect(":memory:")
    try:
        row = connection.execute("PRAGMA cipher_version").fetchone()
    finally:
        connection.close()
    if not row or not row[0]:
        return Check(
            "SQLCipher", "problem", "sqlcipher3 is linked without encryption support",
            "install the sqlcipher3 wheel from PyPI, which bundles SQLCipher",
        )  # fmt: skip
    return Check("SQLCipher", "ok", str(row[0]))


def _data_directory(home: Path) -> Check:
    if not home.exists():
        return Check("Data directory", "info", f"{home} does not exist yet (created on first use)")
    if not home.is_dir():
        return Check("Data directory", "problem", f"{home} is not a directory", "move it away")
    mode = stat.S_IMODE(home.stat().st_mode)
    if not os.access(home, os.W_OK | os.X_OK):
        return Check(
            "Data directory", "problem", f"{home} is not writable", f"check: ls -ld {home}"
        )
    loose = " (the server tightens it to 0700 on start)" if mode & 0o077 else ""
    return Check("Data directory", "ok", f"{home} (mode {mode:04o}){loose}")


def _keychain(home: Path) -> Check:
    backend = usable_keychain()
    key_file = home / KEY_FILE_NAME
    if os.environ.get(KEY_ENV, "").strip():
        detail = f"{KEY_ENV} is set, so it is the database key (the keychain is not consulted)"
        return Check("Keychain", "info", detail)
    if backend is None:
        return Check(
            "Keychain",
            "info",
            f"no usable OS keychain backend: the database key is kept in {key_file} (mode "
            "0600) and API keys come from environment variables (e.g. ANTHROPIC_API_KEY)",
        )
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    return Check("Keychain", "ok", f"{name} (database key and API keys are kept there)")


def _database(home: Path) -> Check:
    path = history_db_path()
    name = "History database"
    if not path.exists():
        return Check(name, "info", f"{path} does not exist yet (created on first use)")
    try:
        if read_header(path) == PLAINTEXT_SQLITE_HEADER:
            return Check(
                name, "problem", f"{path} is a plain, unencrypted SQLite file",
                "it was not written by relavium-lsp; move it away",
            )  # fmt: skip
        if not key_available(home):
            return Check(
                name,
                "problem",
                f"{path} exists but no key was found ({KEY_ENV} unset, no keychain entry, "
                f"no {home / KEY_FILE_NAME})",
                f"if it was created with {KEY_ENV}, set it again; without its key the "
                "history cannot be read",
            )
        key = resolve_db_key(home)
        store = SessionStore.open(path, key)
        try:
            problems = store.check_integrity()
            page = store.list_sessions(limit=500)
        finally:
            store.close()
    except RelaviumError as error:
        return Check(name, "problem", error.message)
    except sqlcipher3.DatabaseError as error:  # damage met while checking
        return Check(
            name, "problem", f"{path} is damaged: {error}",
            "`relavium-lsp doctor --check` lists the sessions affected; "
            "`relavium-lsp recover` copies every readable one into a fresh database",
        )  # fmt: skip
    except OSError as error:
        return Check(name, "problem", f"{path}: {error.strerror}")
    if problems != ["ok"]:
        return Check(
            name, "problem", f"{path} fails its integrity check: {'; '.join(problems[:3])}",
            "`relavium-lsp doctor --check` lists the sessions affected; "
            "`relavium-lsp recover` copies every readable one into a fresh database",
        )  # fmt: skip
    count = f"{len(page.sessions)}{'+' if page.next_cursor else ''}"
    return Check(
        name,
        "ok",
        f"{path}: encrypted, opens with the key from {key.describe()}, integrity ok, "
        f"{count} session(s)",
    )


def _log_file(home: Path) -> Check:
    path = home / "logs" / LOG_FILE_NAME
    level = os.environ.get(LOG_LEVEL_ENV, "").strip() or "INFO"
    if not path.exists():
        return Check("Log file", "info", f"{path} (not written yet; level {level})")
    size = path.stat().st_size
    return Check(
        "Log file",
        "ok",
        f"{path} ({size / 1024:.0f} KB; level {level}, set with `serve --log-level` or "
        f"{LOG_LEVEL_ENV})",
    )


def _workspace_config(workspace: Path, home: Path) -> tuple[WorkspaceConfig | None, Check]:
    name = "Configuration"
    try:
        config = load_workspace_config(workspace, home)
    except RelaviumError as error:
        # Providers can still be checked from the global file alone.
        try:
            fallback: WorkspaceConfig | None = load_workspace_config(None, home)
        except RelaviumError:
            fallback = None
        return fallback, Check(name, "problem", error.message, "fix the file at that line")
    agents = ", ".join(config.agents)
    sources = ", ".join(str(source) for source in config.sources) or "no config files (defaults)"
    return config, Check(name, "ok", f"{workspace}: agents {agents}; read {sources}")


def _providers(config: WorkspaceConfig | None) -> list[Check]:
    if config is None:
        return [Check("Providers", "info", "not checked: the configuration does not load")]
    checks: list[Check] = []
    used: dict[str, list[str]] = {}

    async def resolve_all() -> None:
        async with httpx.AsyncClient() as client:
            for agent in config.agents.values():
                try:
                    chain = resolve_chain(
                        agent,
                        config.providers,
                        config.default_model,
                        client=client,
                        key_lookup=_no_key,
                    )
                except RelaviumError as error:
                    checks.append(Check(f"Agent {agent.id}", "problem", error.message))
                    continue
                for entry in chain:
                    used.setdefault(entry.provider.provider_id, []).append(agent.id)

    asyncio.run(resolve_all())
    for provider_id in sorted(set(config.providers) | set(used)):
        checks.append(_provider_key(provider_id, config, used.get(provider_id, [])))
    return checks


def _no_key(provider_id: str) -> None:
    # Resolving only checks models and endpoints; keys are looked up by _provider_key.
    return None


def _provider_key(provider_id: str, config: WorkspaceConfig, agents: list[str]) -> Check:
    name = f"Provider {provider_id}"
    users = f" (used by {', '.join(sorted(set(agents)))})" if agents else ""
    settings = config.providers.get(provider_id)
    if provider_id == OFFLINE_PROVIDER_ID:
        return Check(name, "ok", f"the bundled offline demo model, needs no key{users}")
    if settings is not None and settings.kind == "cassette":
        return Check(name, "ok", f"replays {settings.cassette}, needs no key{users}")
    if provider_id in config.keyless_providers:
        return Check(
            name,
            "ok",
            f"endpoint chosen by the project file, so stored keys are never sent to it{users}",
        )
    if settings is not None and settings.kind in CLOUD_KINDS:
        found = credential_finding(provider_id, settings)
        status: Status = "ok" if found.ok else "problem"
        return Check(name, status, found.summary + users, found.hint)
    variable = key_env_var(provider_id)
    where = None
    if keychain_key(provider_id):
        where = "the OS keychain"
    elif os.environ.get(variable, "").strip():
        where = f"${variable}"
    if where is not None:
        return Check(name, "ok", f"API key found in {where}{users}")
    if settings is not None and settings.allow_local_endpoint:
        return Check(name, "info", f"no API key (fine for a local server without one){users}")
    return Check(
        name,
        "problem",
        f"no API key for provider {provider_id!r}{users}",
        f"run `relavium-lsp keys set {provider_id}` or set {variable}",
    )

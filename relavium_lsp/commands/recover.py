"""``relavium-lsp recover`` and ``doctor --check``: a damaged history database (issue 16).

``doctor --check`` reads every session of the history database (see
:func:`relavium_lsp.store.salvage.scan_history`) and lists what does not read; exit status 1
if anything is damaged. ``recover`` copies every readable session into a fresh encrypted
database with the same key and puts it in place, keeping the damaged file beside it, and
reports what was lost. Both print ids and counts only — never message text or a key.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from relavium_lsp.commands import Subcommands
from relavium_lsp.errors import RelaviumError
from relavium_lsp.keychain import usable_keychain
from relavium_lsp.paths import KEY_FILE_NAME, history_db_path, relavium_home
from relavium_lsp.store.keys import KEY_ENV, KEYRING_ACCOUNT, KEYRING_SERVICE, resolve_db_key
from relavium_lsp.store.salvage import HistoryScan, recover_history, scan_history


def register(subparsers: Subcommands) -> None:
    """Add the ``recover`` subcommand."""
    parser = subparsers.add_parser(
        "recover",
        help="copy every readable session of a damaged history database into a fresh one",
        description="Copy every session that still reads into a fresh encrypted database "
        "(same key) and put it in place; the damaged file is kept as "
        "history.db.damaged-<time>. Close every editor using relavium-lsp first.",
    )
    parser.add_argument("--history", metavar="PATH", help="history database to recover")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=run_recover)


def key_available(home: Path) -> bool:
    """Whether some key source exists, so that resolving the key will not create one."""
    if os.environ.get(KEY_ENV, "").strip() or os.path.lexists(home / KEY_FILE_NAME):
        return True
    backend = usable_keychain()
    if backend is None:
        return False
    try:
        return backend.get_password(KEYRING_SERVICE, KEYRING_ACCOUNT) is not None
    except Exception:  # a failing backend means the server will fall back to the key file
        return False


def _no_key_message(path: Path) -> str | None:
    """Why the database cannot be read (no key source: resolving would create a new key)."""
    if key_available(relavium_home()):
        return None
    return (
        f"{path} exists but no key was found ({KEY_ENV} unset, no keychain entry, no key "
        "file); set the key it was created with — a new key would not open it"
    )


def run_recover(arguments: argparse.Namespace) -> int:
    """Recover; exit status 0 when every session was copied, 1 when some were lost."""
    path = history_db_path(arguments.history)
    if not path.exists():
        print(f"{path} does not exist; nothing to recover")
        return 1
    problem = _no_key_message(path)
    if problem is not None:
        print(f"cannot recover: {problem}")
        return 1
    try:
        recovery = recover_history(path, resolve_db_key(relavium_home()))
    except RelaviumError as error:
        print(f"cannot recover {path}: {error.message}")
        return 1
    scan = recovery.scan
    if arguments.json:
        print(json.dumps({**_scan_document(scan), "keptDamaged": str(recovery.kept_damaged)}))
    else:
        print(f"recovered {recovery.copied} session(s) into a fresh {path}")
        print(f"the damaged file is kept as {recovery.kept_damaged}")
        _print_losses(scan)
        print("event logs and cost rows are not copied (each session's totals are)")
    return 0 if not scan.unreadable and scan.listing_error is None else 1


def run_check(history: str | None, *, as_json: bool) -> int:
    """``doctor --check``: read every session; exit status 1 if anything is damaged."""
    path = history_db_path(history)
    if not path.exists():
        print(f"{path} does not exist yet; nothing to check")
        return 0
    problem = _no_key_message(path)
    if problem is not None:
        print(json.dumps({"ok": False, "error": problem}) if as_json else problem)
        return 1
    try:
        scan = scan_history(path, resolve_db_key(relavium_home()))
    except RelaviumError as error:
        print(json.dumps({"ok": False, "error": error.message}) if as_json else error.message)
        return 1
    if as_json:
        print(json.dumps(_scan_document(scan)))
    elif scan.healthy:
        print(f"{path}: integrity ok, all {len(scan.readable)} session(s) read")
    else:
        print(f"{path} is damaged: {'; '.join(scan.integrity[:3])}")
        print(f"{len(scan.readable)} session(s) read completely")
        _print_losses(scan)
        print("run `relavium-lsp recover` (with every editor closed) to copy what reads")
    return 0 if scan.healthy else 1


def _print_losses(scan: HistoryScan) -> None:
    if scan.listing_error is not None:
        print(f"the session list itself does not read ({scan.listing_error})")
    for session_id, why in scan.unreadable.items():
        print(f"lost: session {session_id} ({why})")
    for session_id, why in scan.damaged_logs.items():
        print(f"damaged event log or costs: session {session_id} ({why})")
    if scan.memory_error is not None:
        print(f"lost: the workspace memories ({scan.memory_error})")


def _scan_document(scan: HistoryScan) -> dict[str, Any]:
    return {
        "ok": scan.healthy,
        "path": str(Path(scan.path)),
        "integrity": scan.integrity,
        "readable": [record.id for record, _ in scan.readable],
        "unreadable": scan.unreadable,
        "damagedLogs": scan.damaged_logs,
        "listingError": scan.listing_error,
    }

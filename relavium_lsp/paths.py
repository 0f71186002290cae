"""Where relavium keeps its files, and how private they are.

Everything lives under one home directory (``RELAVIUM_HOME``, else ``~/.relavium``):
``config.toml``, ``history.db`` (plus its ``-wal``/``-shm`` companions), ``history.key`` on
machines without a keychain, and ``media/``. Directories are 0700 and files 0600 because
the history holds conversations about private code.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

HOME_ENV = "RELAVIUM_HOME"
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
HISTORY_DB_NAME = "history.db"
KEY_FILE_NAME = "history.key"
GLOBAL_CONFIG_NAME = "config.toml"


def relavium_home() -> Path:
    """The home directory: ``$RELAVIUM_HOME`` when set and non-empty, else ``~/.relavium``."""
    configured = os.environ.get(HOME_ENV, "").strip()
    if configured:
        return Path(configured).expanduser().absolute()
    return Path.home() / ".relavium"


def history_db_path(override: str | None = None) -> Path:
    """The history database: ``override`` (the client's ``historyPath``) or the home default."""
    if override is not None and override.strip():
        return Path(override.strip()).expanduser().absolute()
    return relavium_home() / HISTORY_DB_NAME


def global_config_path(home: Path | None = None) -> Path:
    """The global ``config.toml`` inside ``home`` (default: :func:`relavium_home`)."""
    return (home if home is not None else relavium_home()) / GLOBAL_CONFIG_NAME


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if missing and make sure only the owner can enter it.

    A missing leaf is created 0700; an existing directory with group/other bits is tightened
    to 0700. Parents that must be created get the process umask like any ``mkdir -p``.
    """
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    tighten_mode(path, PRIVATE_DIR_MODE)
    return path


def tighten_mode(path: Path, mode: int) -> None:
    """Set ``path`` to ``mode`` when it grants anything to group or other."""
    if stat.S_IMODE(path.stat().st_mode) & 0o077:
        os.chmod(path, mode)

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from relavium_lsp.paths import (
    ensure_private_dir,
    global_config_path,
    history_db_path,
    relavium_home,
)


def test_home_from_environment_or_user_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELAVIUM_HOME", str(tmp_path / "custom"))
    assert relavium_home() == tmp_path / "custom"
    assert history_db_path() == tmp_path / "custom" / "history.db"
    assert global_config_path() == tmp_path / "custom" / "config.toml"
    monkeypatch.setenv("RELAVIUM_HOME", "  ")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert relavium_home() == tmp_path / "user" / ".relavium"
    monkeypatch.setenv("RELAVIUM_HOME", "~/elsewhere")
    assert relavium_home() == tmp_path / "user" / "elsewhere"


def test_relative_home_becomes_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RELAVIUM_HOME", "rel")
    assert relavium_home() == tmp_path / "rel"


def test_history_path_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert history_db_path("~/db/h.db") == tmp_path / "db" / "h.db"
    monkeypatch.setenv("RELAVIUM_HOME", str(tmp_path / "home"))
    assert history_db_path("") == tmp_path / "home" / "history.db"
    assert history_db_path(None) == tmp_path / "home" / "history.db"


def test_ensure_private_dir_creates_and_tightens(tmp_path: Path) -> None:
    created = ensure_private_dir(tmp_path / "a" / "b")
    assert stat.S_IMODE(created.stat().st_mode) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir()
    os.chmod(loose, 0o777)
    ensure_private_dir(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700

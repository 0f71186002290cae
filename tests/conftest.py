"""Test-wide isolation: no test may read or write the real user's home, config or keychain."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Point HOME, RELAVIUM_HOME and the XDG directories at a fresh temp directory."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RELAVIUM_HOME", str(home / ".relavium"))
    for variable in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(variable, str(home / variable.lower()))
    for variable in (
        "RELAVIUM_DB_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "PYTHON_KEYRING_BACKEND",
    ):
        monkeypatch.delenv(variable, raising=False)
    yield home

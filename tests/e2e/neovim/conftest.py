"""Every Neovim test runs twice: on Debian's Neovim 0.7 and on the current stable 0.11.

``scripts/install-neovim.sh`` (which ``make test`` runs first) installs both. A missing or
wrong binary fails the test and says how to get it: these tests are never skipped.
"""

from __future__ import annotations

import pytest

from tests.e2e.neovim.nvim_harness import NEOVIM_VERSIONS, NVIM_BINARY_ENV, resolve_nvim


@pytest.fixture(autouse=True, params=NEOVIM_VERSIONS, ids=lambda version: f"nvim{version}")
def nvim_version(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The Neovim this test runs on (the harness starts the binary this fixture picks)."""
    version: str = request.param
    monkeypatch.setenv(NVIM_BINARY_ENV, resolve_nvim(version))
    return version

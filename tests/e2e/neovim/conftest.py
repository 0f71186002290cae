"""Every Neovim test needs ``nvim``: without it they fail (never skip) and say how to get it."""

from __future__ import annotations

import pytest

from tests.e2e.neovim.nvim_harness import nvim_executable


@pytest.fixture(autouse=True)
def _require_nvim() -> None:
    nvim_executable()

"""``commands.startup.gc_paused``: start-up runs without the cyclic GC (issue 25, cold start)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from relavium_lsp.commands.startup import gc_paused


@pytest.fixture(autouse=True)
def _restore_gc() -> Iterator[None]:
    yield
    gc.unfreeze()  # what a test froze goes back to the collected generations
    gc.enable()


def test_the_body_runs_without_the_collector_and_what_it_built_is_frozen() -> None:
    gc.unfreeze()
    with gc_paused():
        assert not gc.isenabled()
        built = [[index] for index in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(built)


def test_the_collector_comes_back_when_the_body_fails() -> None:
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("start-up failed")
    assert gc.isenabled()


def test_with_the_collector_already_off_it_changes_nothing() -> None:
    gc.unfreeze()
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0

"""A write-behind commit waits while a turn starts, unless someone waits for it (issue 25).

Uses ``test_bus_owned``'s setup: a real encrypted store, the bus numbering a session whose
lease it holds, a second connection reading the durable log.
"""

from __future__ import annotations

import pytest

from relavium_lsp.engine import bus_channel
from tests.unit.engine.engine_harness import until
from tests.unit.engine.test_bus_owned import (  # noqa: F401 (the fixture)
    Setup,
    _token,
    _until_numbering,
    setup,
)

HOUR_S = 3600.0


@pytest.fixture(autouse=True)
def short_gathering(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bus_channel, "WRITE_BEHIND_GATHER_S", 0.0)
    monkeypatch.setattr(bus_channel, "WRITE_BEHIND_LONGEST_S", 0.001)


async def test_the_write_behind_waits_for_the_gate_and_writes_once_it_opens(
    setup: Setup,  # noqa: F811
) -> None:
    gate = setup.store.quiet_gate
    gate.limit_s = HOUR_S
    await setup.hold_lease("a")
    await _until_numbering(setup)
    hold = setup.store.turn_starting()
    deferred = gate.deferrals
    setup.bus.emit(setup.session_id, _token("while a turn starts"))
    await until(lambda: bool(setup.seen), "the token's delivery")  # delivered at once
    await until(lambda: gate.deferrals > deferred, "the write to wait")
    assert setup.log() == []
    hold.release()
    await until(lambda: len(setup.log()) == 1, "the write once the gate opened")
    await setup.bus.disown(setup.session_id)


async def test_a_drain_does_not_wait_for_the_gate(setup: Setup) -> None:  # noqa: F811
    gate = setup.store.quiet_gate
    gate.limit_s = HOUR_S
    await setup.hold_lease("a")
    await _until_numbering(setup)
    with setup.store.turn_starting():
        deferred = gate.deferrals
        setup.bus.emit(setup.session_id, _token("flushed"))
        await until(lambda: gate.deferrals > deferred, "the write to wait")
        await setup.bus.drain(setup.session_id)  # ends the wait: written with the gate held
        assert len(setup.log()) == 1
        assert gate.quiet_until() is not None
    await setup.bus.disown(setup.session_id)

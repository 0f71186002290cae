"""Attack: a client that starts sessions in a loop (issue 16 item 8, what is retained).

Each live session held ~30 KB for the life of the process. Idle ones beyond
``MAX_LIVE_SESSIONS`` are now dropped, least recently used first, and reload from the store
on next use; a session with remembered "always allow" answers is kept.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.engine.sessions import live
from tests.unit.engine.engine_harness import engine, scripted, text_reply


async def test_idle_live_sessions_are_bounded_and_reload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "MAX_LIVE_SESSIONS", 5)
    async with engine(tmp_path, scripted(text_reply("Reloaded fine."))) as h:
        context = SessionContext(working_dir=str(h.workspace))
        first = await h.engine.start(context=context)
        remembered = await h.engine.start(context=context)
        kept = await h.engine._live.get(remembered.id)
        kept.scope.approvals.remember("write_file", str(h.workspace))
        for _ in range(20):
            await h.engine.start(context=context)
        served = h.engine._live._live
        assert len(served) <= 5
        assert first.id not in served  # the oldest idle one went
        assert remembered.id in served  # remembered approvals are not thrown away
        result = await h.engine.send(first.id, "still there?")
        assert result.stop_reason == "stop"
        assert result.text.strip() == "Reloaded fine."

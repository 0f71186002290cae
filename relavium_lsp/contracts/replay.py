"""Replaying a session (``docs/design.md`` §9, seed 004): params, the report, the audit row.

A replay sends a session's completed turns again, into a new session marked as a replay
(its source's kind is ``replay``, its ``triggerId`` the replayed session), against the
session's own recordings: its model answers come from the transcript, its tool results from
the tool cassette. The tool replay mode decides, per call, by the tool's side-effect class:

========== ====== ========= ================= ==============
mode       pure   read-only external-stateful side-effecting
========== ====== ========= ================= ==============
recorded   —      —         —                 —
auto       live   live      —                 —
live       live   live      live              —
mixed      the tools named in ``liveTools`` run live (never a side-effecting one)
========== ====== ========= ================= ==============

(— : served from the recording). A side-effecting tool never runs in a replay: a replay
writes, runs and sends nothing.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from relavium_lsp.contracts.base import WireModel

ToolReplayMode = Literal["auto", "live", "recorded", "mixed"]
# Where the recorded tool results came from: the cassette an export stored, or (when none
# was stored) the session's own transcript and event log.
CassetteSource = Literal["stored", "transcript"]
ReplayStatus = Literal["running", "matched", "differed", "stopped"]
MAX_LIVE_TOOLS = 64


class ReplaySessionParams(WireModel):
    """``relavium/replaySession``: replay a session into a new one.

    Answers once the replay session exists (its events stream as a live turn's do, and
    ``session:replay_completed`` closes it), or with ``wait: true`` when it has finished,
    with the report.
    """

    session_id: str = Field(min_length=1, max_length=64)
    tool_replay_mode: ToolReplayMode = "auto"
    # mixed: the tools that run live (by name); every other call is served from the recording.
    live_tools: list[str] | None = Field(default=None, max_length=MAX_LIVE_TOOLS)
    wait: bool = False

    @model_validator(mode="after")
    def _live_tools_for_mixed(self) -> ReplaySessionParams:
        if self.live_tools is not None and self.tool_replay_mode != "mixed":
            raise ValueError("liveTools is only for toolReplayMode 'mixed'")
        if any(not 1 <= len(name) <= 200 for name in self.live_tools or ()):
            raise ValueError("a tool name is 1 to 200 characters")
        return self


class ReplayReport(WireModel):
    """How a replay went: what it replayed, how tools were served, and what differed.

    ``matches``: the replayed transcript equals the original's replayed turns, message for
    message (role and content; ids and times always differ). ``stopped``: a turn ended with
    an error or was aborted, so later turns were not sent.
    """

    session_id: str
    replay_session_id: str
    mode: ToolReplayMode
    cassette: CassetteSource
    turns_replayed: int
    skipped_turn_sequences: list[int] = Field(default_factory=list)
    skipped_system_messages: int = 0
    live_tool_calls: int = 0
    recorded_tool_calls: int = 0
    missing_recordings: int = 0
    differences: list[str] = Field(default_factory=list)
    matches: bool
    stopped: bool = False


class ReplaySessionResult(WireModel):
    """Result of ``relavium/replaySession``."""

    replay_session_id: str
    # The completed turns it sends (interrupted and unanswered ones are skipped).
    turns_to_replay: int
    report: ReplayReport | None = None


class ReplayAuditRecord(WireModel):
    """One replay of a session (every replay writes one; ``relavium/listReplays``)."""

    id: str
    session_id: str
    replay_session_id: str | None = None
    mode: ToolReplayMode
    status: ReplayStatus
    turns_replayed: int
    differences: int
    live_tool_calls: int
    recorded_tool_calls: int
    cassette: CassetteSource
    detail: str | None = None
    created_at: str
    finished_at: str | None = None


class ListReplaysResult(WireModel):
    """Result of ``relavium/listReplays``: the replays of a session (or into it), oldest first."""

    replays: list[ReplayAuditRecord]

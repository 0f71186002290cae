"""The orphan tool-result rule over a tail, carried over from the previous turn's (issue 25).

``drop_orphan_tool_results`` drops a tool message unless every result in it answers a call
made earlier in the tail. On an agent's history (a tool round every few messages) that is a
Python step per message, every turn. A turn's tail is the previous turn's with some of the
oldest messages dropped and new ones appended, and a message's fate depends only on what is
before it, so this keeps, per recent tail, where each call id is made and answered (absolute
positions, as ``llm/run_carry.py``) and the orphans; the next tail decides its new messages,
and re-decides only the tool messages answering a call whose message was dropped at the
front. Anything else — a tail that is not such a continuation, a tool message that itself
makes calls — is decided afresh by the plain rule. The result is exactly the plain rule's
(``tests/unit/store/test_store_tail_walk.py``).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

from relavium_lsp.contracts.content import ToolCallPart, ToolResultPart
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.store.identity_runs import Positions, common_run


@dataclass(frozen=True, eq=False)
class _Decided:
    messages: tuple[SessionMessage, ...]
    origin: int
    where: Positions
    calls: dict[str, tuple[int, ...]]  # call id → the (absolute) positions making it
    answers: dict[str, tuple[int, ...]]  # call id → the tool messages answering it
    orphans: list[int]  # the tool messages dropped (absolute, ascending)


_KEPT: list[_Decided] = []
_LOCK = threading.Lock()
_MAX_KEPT = 8
_MAX_MESSAGES = 65_536


def carried_orphan_rule(
    messages: list[SessionMessage],
    plain: Callable[[list[SessionMessage]], list[SessionMessage]],
) -> list[SessionMessage]:
    """``plain(messages)`` (the orphan rule), carried over from a tail this one continues."""
    held = tuple(messages)
    if not held:
        return plain(messages)
    with _LOCK:  # the chain's indexes are shared along it: one caller at a time
        previous, at = _find(held)
        decided: _Decided | None = None
        if previous is not None:
            same = common_run(held, previous.messages, at)
            if at + same == len(previous.messages):  # the old tail's rest, whole, then more
                decided = _continue(held, previous, at, same)
        if decided is None:
            decided = _decide(held, 0, Positions(held, 0), {}, {}, [], 0)
        _keep(decided, previous)
        return plain(messages) if decided is None else _kept(decided)


def _continue(
    held: tuple[SessionMessage, ...], previous: _Decided, at: int, same: int
) -> _Decided | None:
    origin = previous.origin + at
    where = previous.where.extended(held, origin, same)
    calls, answers = previous.calls, previous.answers
    if len(calls) + len(answers) > 4 * len(held) + 64:
        return None  # too many ids of messages long gone: decided afresh
    orphans = previous.orphans[bisect_left(previous.orphans, origin) :]
    # Tool messages answering a call made only in what was dropped are orphans now.
    recheck: set[int] = set()
    for message in previous.messages[:at]:
        for part in message.content:
            if isinstance(part, ToolCallPart):
                recheck.update(p for p in answers.get(part.id, ()) if p >= origin)
    if recheck:
        gone = set(orphans)
        for position in sorted(recheck):
            if position not in gone and not _answered(
                held[position - origin], position, origin, calls
            ):
                orphans.append(position)
        orphans.sort()
    return _decide(held, same, where, calls, answers, orphans, origin)


def _decide(
    held: tuple[SessionMessage, ...],
    start: int,
    where: Positions,
    calls: dict[str, tuple[int, ...]],
    answers: dict[str, tuple[int, ...]],
    orphans: list[int],
    origin: int,
) -> _Decided | None:
    """Decide ``held[start:]`` after what is decided (None: a case left to the plain rule)."""
    for index in range(start, len(held)):
        message = held[index]
        position = origin + index
        if message.role == "tool":
            ids = [p.tool_call_id for p in message.content if isinstance(p, ToolResultPart)]
            if any(isinstance(p, ToolCallPart) for p in message.content):
                return None  # a tool message that makes calls: whether they count depends
            for call_id in ids:
                answers[call_id] = (*answers.get(call_id, ()), position)
            if not _answered(message, position, origin, calls):
                orphans.append(position)
        else:
            for part in message.content:
                if isinstance(part, ToolCallPart):
                    calls[part.id] = (*calls.get(part.id, ()), position)
    return _Decided(held, origin, where, calls, answers, orphans)


def _answered(
    message: SessionMessage, position: int, origin: int, calls: dict[str, tuple[int, ...]]
) -> bool:
    """Whether every result of this tool message answers a call made in the tail before it."""
    ids = [p.tool_call_id for p in message.content if isinstance(p, ToolResultPart)]
    if not ids:
        return False
    for call_id in ids:
        made = calls.get(call_id, ())
        first = bisect_left(made, origin)
        if first == len(made) or made[first] >= position:
            return False
    return True


def _kept(decided: _Decided) -> list[SessionMessage]:
    messages, origin = decided.messages, decided.origin
    if not decided.orphans:
        return list(messages)
    kept: list[SessionMessage] = []
    begin = 0
    for position in decided.orphans:
        kept.extend(messages[begin : position - origin])
        begin = position - origin + 1
    kept.extend(messages[begin:])
    return kept


def _find(held: tuple[SessionMessage, ...]) -> tuple[_Decided | None, int]:
    for decided in reversed(_KEPT):
        at = decided.where.find(held[0], decided.messages, decided.origin)
        if at is not None:
            return decided, at
    return None, 0


def _keep(decided: _Decided | None, replaced: _Decided | None) -> None:
    if replaced is not None and replaced in _KEPT:
        _KEPT.remove(replaced)  # its chain continues in the new one (or starts over)
    if decided is None or len(decided.messages) > _MAX_MESSAGES:
        return
    _KEPT.append(decided)
    total = sum(len(kept.messages) for kept in _KEPT)
    while len(_KEPT) > _MAX_KEPT or total > _MAX_MESSAGES:
        total -= len(_KEPT.pop(0).messages)

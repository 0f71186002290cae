"""The trust rule: a project file can only tighten the user's settings (``docs/design.md`` §8).

A repository you clone is not you. Every field a ``project.toml`` may set has one rule here
(:data:`RULES`), and every merge of a block the project shares with ``config.toml`` —
``[chat]``, ``[delegation]`` (and its per-agent tables), ``[peers]``, ``[introspection]`` —
asks :func:`tighten` for the project's value against the user's own (their file's value, or
the built-in default). A looser project value is replaced by the user's, with one warning.
``tests/unit/config/test_config_trust.py`` enumerates every field of the project model and
fails on a field without a rule, or a rule that lets a project loosen.

Rules (``kind``):

- ``lower`` — a limit; smaller is tighter (``None``, no limit, is the loosest).
- ``less_often`` — how often something automatic runs: ``0`` (never) is tightest, otherwise
  larger is tighter.
- ``order`` — one of ``order``, listed from tightest to loosest.
- ``true_is_looser`` / ``false_is_looser`` — a switch.
- ``subset`` — an allowlist: a project keeps only entries the user's own list has.
- ``union`` — a protect-list: both files' entries count.
- ``tier_paths`` — ``allowed_paths``: the ``project`` scope tier *is* the workspace plus the
  project's path list, so a project's list counts only when the user's own ``fs_scope``
  allows that tier (§6).
- ``preference`` — no trust in it (which model, when to compact, how long to wait for an
  answer); the project wins per field.

Not merged here: ``[providers]`` (a project may add endpoints, which never receive a stored
key, §5) and ``[mcp]`` (a project's server starts only after the user trusts that exact
definition, and ``auto_approve_read_only`` is read from the user's file only, §6.1).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

RuleKind = Literal[
    "lower",
    "less_often",
    "order",
    "true_is_looser",
    "false_is_looser",
    "subset",
    "union",
    "tier_paths",
    "preference",
]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rule:
    """How a project's value compares with the user's (module doc)."""

    kind: RuleKind
    order: tuple[str, ...] = ()  # for ``order``: tightest first


APPROVAL_ORDER = ("ask", "auto_edits", "never_ask")
SCOPE_ORDER = ("sandboxed", "project", "full")
ON_EXCEED_ORDER = ("fail", "pause_for_approval", "warn")
INPUT_FILTER_ORDER = ("task_only", "last_n", "full_history")

CHAT_RULES: dict[str, Rule] = {
    "default_model": Rule("preference"),
    "fs_scope": Rule("order", SCOPE_ORDER),
    "max_turns": Rule("lower"),
    "max_tool_turns": Rule("lower"),
    "max_messages": Rule("lower"),
    "auto_compact": Rule("preference"),
    "compact_threshold": Rule("preference"),
    "max_cost_microcents": Rule("lower"),
    "on_exceed": Rule("order", ON_EXCEED_ORDER),
    "allowed_commands": Rule("subset"),
    "allowed_command_globs": Rule("subset"),
    "allowed_domains": Rule("subset"),
    "allowed_paths": Rule("tier_paths"),
    "approval": Rule("order", APPROVAL_ORDER),
    "approval_timeout_s": Rule("preference"),
    "disk_write_fallback": Rule("true_is_looser"),
    "protected_paths": Rule("union"),
}
DELEGATION_RULES: dict[str, Rule] = {
    "max_depth": Rule("lower"),
    "max_concurrent_children": Rule("lower"),
    "input_filter": Rule("order", INPUT_FILTER_ORDER),
    "input_last_n": Rule("lower"),
    "strip_tool_results": Rule("false_is_looser"),
}
PEERS_RULES: dict[str, Rule] = {
    "max_message_chars": Rule("lower"),
    "max_recipients": Rule("lower"),
    "max_hops": Rule("lower"),
}
INTROSPECTION_RULES: dict[str, Rule] = {
    "enabled": Rule("true_is_looser"),
    "on_new_session": Rule("true_is_looser"),
    "every_turns": Rule("less_often"),
    "idle_seconds": Rule("less_often"),
    "idle_on_paid_providers": Rule("true_is_looser"),
}
RULES: dict[str, dict[str, Rule]] = {
    "chat": CHAT_RULES,
    "delegation": DELEGATION_RULES,
    "peers": PEERS_RULES,
    "introspection": INTROSPECTION_RULES,
}


def _no_looser(rule: Rule, own: Any, project: Any) -> Any:
    """The tightest value the project may have: its own, or as much of it as the user allows."""
    kind = rule.kind
    if kind == "preference":
        return project
    if kind == "lower":
        return project if own is None else min(own, project)
    if kind == "less_often":
        return 0 if 0 in (own, project) else max(own, project)
    if kind == "order":
        return project if rule.order.index(project) <= rule.order.index(own) else own
    if kind == "true_is_looser":
        return project and own
    if kind == "false_is_looser":
        return project or own
    if kind == "subset":
        allowed = set(own or ())
        return [entry for entry in project if entry in allowed]
    if kind == "union":
        return [*(own or ()), *(entry for entry in project if entry not in (own or ()))]
    raise ValueError(f"{kind} needs more than the two values")  # tier_paths: see tighten_paths


def tighten(block: str, name: str, own: Any, project: Any) -> Any:
    """The effective value of ``[block].name``: ``project`` as far as it is no looser than ``own``.

    ``own`` is the user's effective value (their file's, else the default); ``project`` is
    ``None`` when the project does not set the field (then ``own`` stands).
    """
    if project is None:
        return own
    value = _no_looser(RULES[block][name], own, project)
    if value != project and RULES[block][name].kind != "union":
        warn_ignored(block, name, project)
    return value


def tighten_paths(own_scope: str, own_paths: Sequence[str], project: Sequence[str] | None) -> Any:
    """``allowed_paths``: the project's list when the user's own scope allows the project tier."""
    if project is None:
        return list(own_paths)
    if SCOPE_ORDER.index(own_scope) < SCOPE_ORDER.index("project"):
        warn_ignored("chat", "allowed_paths", "(a path list)")
        return list(own_paths)
    return list(project)


def warn_ignored(block: str, name: str, value: object) -> None:
    """One warning for a project value the user's own configuration does not allow."""
    _log.warning(
        "project.toml sets [%s].%s = %r, which is looser than your own configuration; "
        "ignored (set it in ~/.relavium/config.toml or your editor settings to allow it)",
        block,
        name,
        value,
    )

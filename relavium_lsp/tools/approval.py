"""The one approval gate every side-effecting call passes (``docs/design.md`` §6).

Modes (``[chat].approval``):

- ``ask`` (default) — every ``fs_write`` / ``process`` / ``egress`` call asks.
- ``auto_edits`` — ``fs_write`` calls whose resolved path is inside the workspace (or the
  server temp dir) are approved; writes reaching a ``project``/``full`` root and every other
  side effect still ask.
- ``never_ask`` — explicit opt-in: nothing asks …
- … except tools marked ``always_ask`` (``git_commit``) and writes to protected files
  (:mod:`~relavium_lsp.tools.protected`: our config, editor/task configs, ``.envrc``, git
  metadata, CI workflows, hooks, plus ``[chat].protected_paths``), which ask in every mode
  and are never remembered by "always allow".

"Always allow for this session" stores ``(tool id, scope key)`` in the session's
:class:`~relavium_lsp.tools.base.ApprovalMemory`. Scope keys are chosen by each tool: the
resolved parent directory for ``write_file`` (that directory only, not below it), the working
directory and exact argv for ``run_command``, and ``host[:port]`` for ``http_request``.

Asking goes through ``ToolCallContext.ask_user``, the session's one way to ask (the cost cap
uses it too): it emits ``agent:approval_requested`` (the preview holds a path, a command line
or a host, never contents) and waits at most ``approval_timeout_s``. No answer, a failed
request or ``reject`` raise :class:`~relavium_lsp.errors.ToolDenied`. If the turn is aborted
the awaiting task is cancelled: ``CancelledError`` propagates and nothing runs afterwards.
"""

from __future__ import annotations

import logging

from relavium_lsp.errors import ToolDenied
from relavium_lsp.tools.base import ApprovalNeed, ToolCallContext
from relavium_lsp.tools.host import ApprovalRequest

logger = logging.getLogger(__name__)


def needs_prompt(
    ctx: ToolCallContext, tool_id: str, need: ApprovalNeed, *, always_ask: bool
) -> bool:
    """Whether this call must be put to the user (see the module doc for the rules)."""
    if always_ask or need.protected is not None:
        return True
    if ctx.approvals.allows(tool_id, need.scope_key):
        return False
    mode = ctx.policy.approval
    if mode == "never_ask":
        return False
    if mode == "auto_edits" and need.action == "fs_write" and need.inside_workspace:
        return False
    return True


def _describe(need: ApprovalNeed) -> str:
    preview = need.preview
    target = preview.command or preview.path or preview.host or need.action
    return f"{need.action} ({target})"


async def require_approval(
    ctx: ToolCallContext,
    *,
    tool_id: str,
    call_id: str,
    need: ApprovalNeed,
    always_ask: bool = False,
) -> None:
    """Return when the call may run; raise :class:`ToolDenied` when it may not."""
    if not needs_prompt(ctx, tool_id, need, always_ask=always_ask):
        return
    request = ApprovalRequest(
        session_id=ctx.session_id,
        call_id=call_id,
        tool_id=tool_id,
        action=need.action,
        preview=need.preview,
        change=need.change,
    )
    timeout_s = ctx.policy.approval_timeout_s
    try:
        decision = await ctx.ask_user(request)
    except TimeoutError:
        raise ToolDenied(
            f"nobody answered the approval request for {_describe(need)} within "
            f"{timeout_s:g} s, so it was rejected; do not retry it unasked"
        ) from None
    except Exception as error:
        # A host that cannot ask must not turn into a silent approval.
        logger.warning("approval request failed: %s", type(error).__name__)
        raise ToolDenied(
            f"the approval request for {_describe(need)} could not be shown, so it was rejected"
        ) from None
    if decision == "approve_always":
        if not always_ask and need.protected is None:
            ctx.approvals.remember(tool_id, need.scope_key)
        return
    if decision == "approve":
        return
    raise ToolDenied(f"the user rejected {_describe(need)}; do not retry it unasked")

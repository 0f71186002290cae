"""A code block the user applies from the chat, run as the agent's own edit would be.

The user clicks "Apply" on a code block: the write goes through the same ``write_file`` tool a
turn uses — the session's filesystem jail, the approval policy and prompt (shown as a tool
card by the editor), and the editor host, so the edit lands as an undoable
``workspace/applyEdit``. The call is announced with the usual ``agent:tool_call`` /
``agent:tool_result`` events; it is not a model turn, so nothing is added to the transcript.
"""

from __future__ import annotations

import asyncio
import secrets

from relavium_lsp.contracts.content import ToolCallPart, ToolResultPart
from relavium_lsp.engine.sessions.session import AgentSession
from relavium_lsp.errors import SessionBusy, SessionEnded
from relavium_lsp.tools.base import ToolCallContext

WRITE_TOOL = "write_file"
USER_MODEL = "user"


def new_call_id() -> str:
    """A call id that cannot collide with a provider's (they never start with ``apply_``)."""
    return f"apply_{secrets.token_hex(8)}"


async def apply_user_edit(
    session: AgentSession, path: str, content: str, call_id: str
) -> ToolResultPart:
    """Write ``content`` to ``path`` through ``write_file`` and its approval."""
    if session.record.status == "ended":
        raise SessionEnded(f"session {session.id} was cancelled; resume it to continue")
    if session.busy:
        raise SessionBusy(f"session {session.id} is running a turn; apply the code afterwards")
    scope = session.scope
    context = ToolCallContext(
        session_id=session.id,
        context=session.record.context,
        policy=session.policy,
        host=scope.host,
        emit=scope.emit,
        ask_user=scope.ask_user,
        artifacts=scope.store,
        model=USER_MODEL,
        allowed_tools=frozenset({WRITE_TOOL}),
        temp_dir=scope.temp_dir,
        approvals=scope.approvals,
        session_title=session.record.title,
        protected_paths=scope.protected_paths,
    )
    call = ToolCallPart(id=call_id, name=WRITE_TOOL, args={"path": path, "content": content})
    task = asyncio.ensure_future(scope.tools.dispatch(call, context))
    session.user_edit = task
    try:
        answer = await task
    finally:
        session.user_edit = None
        # The approval prompt marks the session awaiting_approval, then streaming: settle it.
        await session.set_status("idle")
        await scope.flush_events()
    return answer.result

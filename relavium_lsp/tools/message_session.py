"""``message_session``: send a message to another session of this workspace (§2.5, seed 001).

An ordinary entry of an agent's ``tools`` list, so which agents may talk to other sessions
is configured per agent, like ``delegate``. The work happens in the engine
(``ToolCallContext.delegator``): ``await_reply: false`` appends the message to the
recipient's transcript (context for its next turn) and returns a receipt; ``await_reply:
true`` runs a turn there with it and returns the reply, the sender ``awaiting_peer``
meanwhile. The safety rules (same workspace, size caps, a hop limit, busy recipients
refused) are the engine's.
"""

from __future__ import annotations

from pydantic import Field

from relavium_lsp.contracts.peers import PEER_TEXT_CHARS_CEILING
from relavium_lsp.errors import ToolError
from relavium_lsp.tools.base import (
    PeerRequest,
    PreparedCall,
    ToolArgs,
    ToolCallContext,
    ToolDefinition,
    ToolRun,
)

MESSAGE_SESSION_TOOL = "message_session"


class MessageSessionArgs(ToolArgs):
    """Arguments of ``message_session``."""

    to: str = Field(
        min_length=1,
        max_length=64,
        description=(
            "A session id, or an agent id: that agent's most recently active session in this "
            "workspace receives the message."
        ),
    )
    # The workspace's [peers] cap (8,000 by default) is the engine's to enforce.
    text: str = Field(min_length=1, max_length=PEER_TEXT_CHARS_CEILING, description="The message.")
    await_reply: bool = Field(
        default=False,
        description=(
            "true: the recipient answers now and its reply is this tool's result. false: "
            "the message waits in its transcript for its next turn."
        ),
    )


def message_session_tools() -> list[ToolDefinition[MessageSessionArgs]]:
    """The ``message_session`` tool."""

    async def prepare(args: MessageSessionArgs, ctx: ToolCallContext) -> PreparedCall:
        delegator = ctx.delegator
        if delegator is None:
            raise ToolError("messaging other sessions is not available in this session")

        async def run() -> ToolRun:
            outcome = await delegator.message_peer(
                PeerRequest(
                    to=args.to,
                    text=args.text,
                    await_reply=args.await_reply,
                    call_id=ctx.call_id or None,
                )
            )
            return ToolRun(
                outcome.text,
                failed=outcome.failed,
                error_code="tool_failed" if outcome.failed else None,
            )

        return PreparedCall(run=run)

    return [
        ToolDefinition(
            name=MESSAGE_SESSION_TOOL,
            description=(
                "Send a message to another chat session of this workspace (by session id or "
                "agent id). Optionally wait for its reply."
            ),
            args_model=MessageSessionArgs,
            side_effect="egress",
            replay="side-effecting",
            prepare=prepare,
        )
    ]

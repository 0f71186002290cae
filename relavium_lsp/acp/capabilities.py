"""What this agent tells an ACP client about itself in ``initialize``."""

from __future__ import annotations

from acp.schema import (
    AgentCapabilities,
    Implementation,
    McpCapabilities,
    PromptCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
)

from relavium_lsp import __version__


def agent_capabilities() -> AgentCapabilities:
    """``session/load``, ``session/list|resume|close|delete``, text + embedded context prompts.

    MCP servers over stdio and Streamable HTTP (not SSE); no images or audio in prompts, no
    terminals, no ``session/fork`` (not in the stable v1 schema). Modes and config options
    come with each session, not here.
    """
    return AgentCapabilities(
        load_session=True,
        prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
        mcp_capabilities=McpCapabilities(http=True, sse=False),
        session_capabilities=SessionCapabilities(
            list=SessionListCapabilities(),
            delete=SessionDeleteCapabilities(),
            resume=SessionResumeCapabilities(),
            close=SessionCloseCapabilities(),
        ),
    )


def agent_info() -> Implementation:
    """The agent's name and version."""
    return Implementation(name="relavium-lsp", title="Relavium", version=__version__)

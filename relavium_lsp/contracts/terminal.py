"""Live output of a running command: ``agent:tool_output`` events.

``run_command`` and the background terminals stream what the program writes while it runs,
throttled (one event per interval at most) and capped per call, so a client can show it live;
the tool's result (``agent:tool_result`` and the model's ``tool_result``) still carries the
kept output once the command ends.
"""

from __future__ import annotations

from typing import Literal

from relavium_lsp.contracts.base import WireModel


class AgentToolOutput(WireModel):
    """A piece of a running tool's terminal output (in order; ``text`` is decoded UTF-8)."""

    type: Literal["agent:tool_output"] = "agent:tool_output"
    tool_id: str
    call_id: str
    text: str
    # Set on the last event of a call whose stream hit the cap: the rest is in the result.
    truncated: bool = False

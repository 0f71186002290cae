"""Whose opaque reasoning state a signature is, so each wire format takes back only its own.

Several providers hand back something the model needs on the next call and nobody else can
read: Anthropic's thinking signatures, OpenAI Responses' encrypted reasoning items, Gemini's
thought signatures, Bedrock Converse's reasoning signatures. On the seam all of them travel
in :attr:`~relavium_lsp.llm.seam.ReasoningDelta.signature` (and the in-flight
:class:`~relavium_lsp.contracts.content.ReasoningPart`). A fallback chain may hand one
provider's history to another, so every format but Anthropic's tags its value with its
name (``"<format>:<payload>"``); Anthropic signatures are base64 and never hold a colon, so
they stay as the Messages API sends them. A wire mapping sends back only the values it owns
and leaves the others out (the reasoning text alone carries nothing a model could use).

Where they are kept: in flight with the turn's messages, and across turns encrypted in the
database beside the message (``store/reasoning_signatures.py``); never in an event, a
transcript or an export (``docs/design.md`` §5).
"""

from __future__ import annotations

RESPONSES = "oai-responses"
GEMINI = "gemini"
CONVERSE = "bedrock-converse"
_SEPARATOR = ":"


def tagged(wire_format: str, payload: str) -> str:
    """``payload`` marked as belonging to ``wire_format``."""
    return f"{wire_format}{_SEPARATOR}{payload}"


def owned_by(signature: str | None, wire_format: str) -> str | None:
    """The payload when ``signature`` belongs to ``wire_format``, else ``None``."""
    if not signature:
        return None
    prefix = wire_format + _SEPARATOR
    return signature[len(prefix) :] if signature.startswith(prefix) else None


def is_anthropic(signature: str | None) -> bool:
    """Whether ``signature`` is an (untagged) Anthropic thinking signature."""
    return bool(signature) and _SEPARATOR not in signature  # type: ignore[operator]

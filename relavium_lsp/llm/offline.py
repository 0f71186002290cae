"""The bundled offline model: a recorded demo conversation plus a helpful default answer.

It is what a session uses when no provider is configured, and what ``make demo`` and tests
run against: :func:`offline_provider` replays ``cassettes/offline.json`` (recorded by
``python -m relavium_lsp.testing.record_demo``) and answers anything it has no recording for
with a short, deterministic explanation of how to configure a real provider.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from relavium_lsp.contracts.agent import OFFLINE_MODEL_ID, OFFLINE_PROVIDER_ID
from relavium_lsp.contracts.content import TextPart
from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.contracts.memory import INTROSPECTION_REQUEST
from relavium_lsp.llm.cassette import CassetteError, CassetteProvider
from relavium_lsp.llm.seam import LlmChunk, LlmRequest, StopChunk, TextDelta

OFFLINE_CASSETTE_NAME = "offline.json"

OFFLINE_EXPLANATION = (
    f"I am Relavium's offline demo model (`{OFFLINE_MODEL_ID}`). I replay a recorded demo "
    "conversation and have no recorded answer for this message, so nothing was sent to any "
    "AI service.\n\n"
    "To chat with a real model, set one up from your editor: pick a provider (OpenAI, "
    "Anthropic, or a local server such as Ollama, llama.cpp, vLLM or LM Studio), a model and "
    "your API key, which goes to the OS keychain:\n"
    '- VS Code: run **"Relavium: Set Up a Model"** from the Command Palette (or choose '
    '"Add a model…" in the model picker).\n'
    "- Neovim: run `:RelaviumSetup`.\n\n"
    "From a terminal instead: run `relavium-lsp keys set anthropic` (or set "
    "`ANTHROPIC_API_KEY`) and put "
    '`default_model = "anthropic/claude-sonnet-4-5"` under `[preferences]` in '
    "`~/.relavium/config.toml`; for a local OpenAI-compatible server add a "
    '`[providers.ollama]` table (or `kind = "openai"`, `base_url` and '
    "`allow_local_endpoint = true` under a name of your own) and use "
    '`default_model = "ollama/<model name>"`. `relavium-lsp doctor` checks the result.\n\n'
    "For example, `~/.relavium/config.toml` for Anthropic:\n\n"
    "```toml\n"
    "[preferences]\n"
    'default_model = "anthropic/claude-sonnet-4-5"\n'
    "```"
)


def offline_explanation(request: LlmRequest) -> list[LlmChunk]:
    """The answer to any unrecorded request: the explanation, streamed line by line.

    An introspection checkpoint gets a deterministic checkpoint instead (see
    :func:`offline_checkpoint`), so checkpoints and workspace memory work offline too.
    """
    texts = _user_texts(request)
    if texts and texts[-1].strip() == INTROSPECTION_REQUEST:
        return _stream(offline_checkpoint(texts[:-1]))
    return _stream(OFFLINE_EXPLANATION)


def offline_checkpoint(user_texts: list[str]) -> str:
    """A checkpoint written from the user's messages alone, the same every time.

    It has all three parts the introspection pass asks for, including a ``## Offline
    model notes`` section for the workspace memory naming the latest request.
    """
    asked = [" ".join(text.split()) for text in user_texts if text.strip()]
    if not asked:
        return (
            "DESCRIPTION: Nothing new since the last checkpoint\n"
            "MEMORY:\n- Nothing new since the last checkpoint (offline model).\n"
            "WORKSPACE MEMORY:\n(none)\n"
        )
    latest = asked[-1][:200]
    return (
        f"DESCRIPTION: {asked[0][:100]}\n"
        "MEMORY:\n"
        f"- {len(asked)} user message(s) since the last checkpoint (offline model).\n"
        f"- Latest request: {latest}\n"
        "WORKSPACE MEMORY:\n"
        "## Offline model notes\n"
        f"- The latest request checkpointed here: {latest}\n"
    )


def _user_texts(request: LlmRequest) -> list[str]:
    return [
        "\n".join(part.text for part in message.content if isinstance(part, TextPart))
        for message in request.messages
        if message.role == "user"
    ]


def _stream(text: str) -> list[LlmChunk]:
    lines = text.splitlines(keepends=True)
    chunks: list[LlmChunk] = [TextDelta(text=line) for line in lines]
    chunks.append(StopChunk(stop_reason="stop", usage=TokenUsage()))
    return chunks


@functools.cache
def _bundled_document() -> dict[str, Any]:
    resource = resources.files("relavium_lsp.llm").joinpath("cassettes", OFFLINE_CASSETTE_NAME)
    try:
        document = json.loads(resource.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CassetteError(
            f"the bundled cassette {OFFLINE_CASSETTE_NAME} cannot be read ({type(exc).__name__})"
        ) from None
    if not isinstance(document, dict):
        raise CassetteError(f"the bundled cassette {OFFLINE_CASSETTE_NAME} is not an object")
    return document


# The offline model stands in for a real one in the editor: replay at a readable pace so
# the answer visibly streams (instantly replayed deltas would arrive as a single event).
OFFLINE_PACE_S = 0.03


def offline_provider() -> CassetteProvider:
    """A fresh offline provider (its replay position starts at the beginning)."""
    return CassetteProvider(
        OFFLINE_PROVIDER_ID,
        _bundled_document(),
        on_unmatched=offline_explanation,
        pace_s=OFFLINE_PACE_S,
    )

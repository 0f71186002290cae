"""``relavium/listModels``: the models a picker can offer in the active workspace.

Every provider the workspace configures or its agents use is asked for its ``/models`` list
(cached a few minutes; ``refresh: true`` asks again), and every model the configuration names
is added. Entries carry the context window and prices where known; a provider that cannot
be reached is listed under ``providers`` with the reason. Keys are never part of a reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from relavium_lsp.contracts.wire import (
    ListModelsParams,
    ListModelsResult,
    ModelEntry,
    ProviderModelsStatus,
)
from relavium_lsp.llm.model_directory import ModelEntryFacts
from relavium_lsp.server import methods
from relavium_lsp.server.features.context import detect_context
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer


def setup(server: RelaviumServer) -> None:
    """Register ``relavium/listModels``."""
    register_request(server, methods.LIST_MODELS, ListModelsParams, list_models)


async def list_models(ls: RelaviumServer, params: ListModelsParams) -> Result:
    """Listed and configured models of the active workspace, with context windows and prices."""
    engine = await get_engine(ls)
    context = await detect_context(ls)
    report = await engine.list_models(context.working_dir, refresh=params.refresh)
    return ListModelsResult(
        models=[_entry(facts) for facts in report.models],
        providers=[
            ProviderModelsStatus(
                provider_id=status.provider_id,
                ok=status.ok,
                listed=status.listed,
                message=status.message,
            )
            for status in report.providers
        ],
    )


def _entry(facts: ModelEntryFacts) -> ModelEntry:
    info = facts.info
    return ModelEntry(
        provider_id=facts.provider_id,
        model=facts.model,
        ref=f"{facts.provider_id}/{facts.model}",
        context_window=facts.context_window,
        input_microcents_per_mtok=info.input_microcents_per_mtok if info else None,
        output_microcents_per_mtok=info.output_microcents_per_mtok if info else None,
        cache_read_microcents_per_mtok=info.cache_read_microcents_per_mtok if info else None,
        cache_write_microcents_per_mtok=info.cache_write_microcents_per_mtok if info else None,
        listed=facts.listed,
        configured=facts.configured,
    )

"""Tools the editor answers: diagnostics, symbols, references, definitions (``editor_*``).

The editor already knows the problems its other language servers found, the symbols of a
file and where a name is defined and used. These tools ask it through the host
(:class:`EditorIntelligence`; over LSP, the ``relavium/editorQuery`` request) and exist only
for a client that advertised the feature (``experimental.relavium.editorTools``): for any
other client the model never sees them. Paths are jailed before asking; answers are capped,
bounded by a timeout, and anything the client names outside the scope is left out.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import Field

from relavium_lsp.contracts.editor_tools import (
    EditorFeature,
    EditorQueryParams,
    EditorQueryResult,
)
from relavium_lsp.errors import ToolError
from relavium_lsp.tools.base import PreparedCall, ToolArgs, ToolCallContext, ToolDefinition, ToolRun
from relavium_lsp.tools.jail import ScopeRoots, resolve_in_scope

EDITOR_TIMEOUT_S = 10.0
MAX_ITEMS = 200


@runtime_checkable
class EditorIntelligence(Protocol):
    """A host whose editor answers language questions."""

    def editor_features(self) -> frozenset[str]:
        """The :data:`EditorFeature` values the client advertised."""
        ...

    async def editor_query(self, params: EditorQueryParams) -> EditorQueryResult:
        """Ask the editor; raises on a failed or invalid answer."""
        ...


def supports(ctx: ToolCallContext, feature: EditorFeature) -> bool:
    """Whether the call's editor answers ``feature``."""
    host = getattr(ctx.host, "inner", ctx.host)
    return isinstance(host, EditorIntelligence) and feature in host.editor_features()


class DiagnosticsArgs(ToolArgs):
    """Arguments of ``editor_diagnostics``."""

    path: str | None = Field(
        default=None, max_length=4096, description="A file; omit for every open file's problems."
    )


class SymbolsArgs(ToolArgs):
    """Arguments of ``editor_symbols``."""

    path: str | None = Field(default=None, max_length=4096, description="A file's symbols.")
    query: str | None = Field(
        default=None, max_length=500, description="Or: workspace symbols matching this name."
    )


class PositionArgs(ToolArgs):
    """A symbol's position: file, 1-based line and column."""

    path: str = Field(min_length=1, max_length=4096)
    line: int = Field(ge=1, description="1-based line of the symbol.")
    character: int = Field(default=1, ge=1, description="1-based column inside the name.")


def _in_scope(raw: str, roots: ScopeRoots) -> str | None:
    """The workspace-relative spelling of a path the client named, if it is in scope."""
    try:
        resolved = Path(raw).resolve()
    except (OSError, ValueError):
        return None
    return roots.display(resolved) if roots.contains(resolved) else None


def _format(kind: EditorFeature, result: EditorQueryResult, roots: ScopeRoots) -> str:
    lines: list[str] = []
    hidden = 0
    if kind == "diagnostics":
        for item in result.diagnostics[:MAX_ITEMS]:
            where = _in_scope(item.path, roots)
            if where is None:
                hidden += 1
                continue
            source = (
                f" [{item.source}{' ' + item.code if item.code else ''}]" if item.source else ""
            )
            lines.append(
                f"{where}:{item.line}:{item.character}: {item.severity}: {item.message}{source}"
            )
        empty = "No problems reported."
        total = len(result.diagnostics)
    elif kind == "symbols":
        for symbol in result.symbols[:MAX_ITEMS]:
            where = _in_scope(symbol.path, roots)
            if where is None:
                hidden += 1
                continue
            inside = f" (in {symbol.container})" if symbol.container else ""
            lines.append(
                f"{where}:{symbol.line}:{symbol.character}: {symbol.kind} {symbol.name}{inside}"
            )
        empty = "No symbols found."
        total = len(result.symbols)
    else:
        for location in result.locations[:MAX_ITEMS]:
            where = _in_scope(location.path, roots)
            if where is None:
                hidden += 1
                continue
            lines.append(f"{where}:{location.line}:{location.character}")
        empty = "Nothing found."
        total = len(result.locations)
    notes = []
    if total > MAX_ITEMS:
        notes.append(f"{total - MAX_ITEMS:,} more not shown")
    if hidden:
        notes.append(f"{hidden:,} outside the scope left out")
    tail = f"\n[{'; '.join(notes)}]" if notes else ""
    return ("\n".join(lines) if lines else empty) + tail


def editor_tools() -> list[ToolDefinition[Any]]:
    """The four editor tools (each available only where the client answers it)."""

    def prepare_for(kind: EditorFeature) -> Any:
        async def prepare(args: ToolArgs, ctx: ToolCallContext) -> PreparedCall:
            roots = ctx.scope_roots()
            path: str | None = getattr(args, "path", None)
            absolute = None
            if path is not None:
                absolute = str(resolve_in_scope(path, roots, must_exist=True, for_write=False))
            query = getattr(args, "query", None)
            if kind == "symbols" and absolute is None and not query:
                raise ToolError("give a path (its symbols) or a query (workspace symbols)")
            params = EditorQueryParams(
                session_id=ctx.session_id,
                kind=kind,
                path=absolute,
                line=getattr(args, "line", None),
                character=getattr(args, "character", None),
                query=query,
                max_items=MAX_ITEMS,
            )

            async def run() -> ToolRun:
                host = getattr(ctx.host, "inner", ctx.host)
                if not isinstance(host, EditorIntelligence):
                    raise ToolError("this editor does not answer editor questions")
                try:
                    async with asyncio.timeout(EDITOR_TIMEOUT_S):
                        result = await host.editor_query(params)
                except TimeoutError:
                    raise ToolError(
                        f"the editor did not answer within {EDITOR_TIMEOUT_S:g} s"
                    ) from None
                return ToolRun(_format(kind, result, roots))

            return PreparedCall(run=run)

        return prepare

    def definition(
        name: str, kind: EditorFeature, args_model: type[ToolArgs], description: str
    ) -> ToolDefinition[Any]:
        return ToolDefinition(
            name=name,
            description=description,
            args_model=args_model,
            side_effect="read",
            replay="external-stateful",  # the editor's state is not part of a recording
            prepare=prepare_for(kind),
            available=lambda ctx: supports(ctx, kind),
        )

    return [
        definition(
            "editor_diagnostics",
            "diagnostics",
            DiagnosticsArgs,
            "Problems the editor's language servers report (errors, warnings) for a file, or "
            "for every open file. Use it after an edit to see whether the code still checks.",
        ),
        definition(
            "editor_symbols",
            "symbols",
            SymbolsArgs,
            "Symbols from the editor's language servers: a file's outline (path) or "
            "workspace symbols matching a name (query).",
        ),
        definition(
            "editor_references",
            "references",
            PositionArgs,
            "Every reference to the symbol at path:line:character, from the editor's "
            "language servers.",
        ),
        definition(
            "editor_definition",
            "definition",
            PositionArgs,
            "Where the symbol at path:line:character is defined, from the editor's language "
            "servers.",
        ),
    ]

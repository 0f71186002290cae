"""The tool registry: the engine's :class:`~relavium_lsp.tools.base.ToolDispatcher`.

``dispatch`` runs one call through the same steps every time:

1. emit ``agent:tool_call`` with sanitized input;
2. refuse unknown tools and tools outside ``ctx.allowed_tools`` (``tool_unavailable``);
3. validate the arguments with the tool's pydantic model (``validation``: the model reads
   which field was wrong and may correct itself);
4. ``prepare`` — policy without side effects (scope jail, allowlists, egress guard);
   refusals are ``tool_denied`` and worded so the model does not retry them;
5. the approval gate (:mod:`relavium_lsp.tools.approval`);
6. run, timed;
7. bound the result for the model (the full text saved as an artifact when cut);
8. emit ``agent:tool_result`` (success, summary, duration, error code) and return the
   ``tool_result`` part the model reads (with any media the tool returned).

Arguments are never interpolated: ``{{secrets.*}}`` or ``{{ctx.*}}`` in tool arguments is
passed through literally. ``read_tool_output`` is a companion of every tool list: it only
reads this session's own artifacts, so it is always allowed and listed whenever any tool is.
Only ``asyncio.CancelledError`` escapes ``dispatch`` (after a ``cancelled`` tool result).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any, cast, get_args

from pydantic import ValidationError

from relavium_lsp.contracts.content import ToolCallPart, ToolResultPart
from relavium_lsp.contracts.events import AgentToolCall, AgentToolResult, ErrorCode
from relavium_lsp.errors import ToolDenied, ToolError
from relavium_lsp.llm.seam import ToolSpec
from relavium_lsp.tools.approval import require_approval
from relavium_lsp.tools.base import (
    SessionResources,
    ToolAnswer,
    ToolCallContext,
    ToolDefinition,
    ToolLimits,
    ToolRun,
    ToolSelection,
    ToolSource,
)
from relavium_lsp.tools.bounding import (
    bound_output,
    sanitize_input,
    summarize_output,
    truncate_bytes,
)
from relavium_lsp.tools.delegate import delegate_tools
from relavium_lsp.tools.edit_file import edit_tools
from relavium_lsp.tools.editor_tools import editor_tools
from relavium_lsp.tools.fs import fs_tools
from relavium_lsp.tools.git import git_tools
from relavium_lsp.tools.http import http_tools
from relavium_lsp.tools.message_session import message_session_tools
from relavium_lsp.tools.netguard import EgressGuard
from relavium_lsp.tools.plan import plan_tools
from relavium_lsp.tools.process import process_tools
from relavium_lsp.tools.search import search_tools
from relavium_lsp.tools.terminals import TerminalJobs, terminal_tools
from relavium_lsp.tools.tool_output import tool_output_tools

logger = logging.getLogger(__name__)

READ_TOOL_OUTPUT = "read_tool_output"
_VALIDATION_ERRORS_SHOWN = 8
_ERROR_CODES = frozenset(get_args(ErrorCode))


class ToolRegistry:
    """Tool definitions by name, dispatched under policy.

    ``sources`` add tools that exist only at run time (MCP servers): :meth:`select` asks
    them for the entries they claim, and their definitions travel with the turn in
    ``ToolCallContext.turn_tools``, through the same dispatch as the built-ins.
    """

    def __init__(
        self, definitions: Iterable[ToolDefinition[Any]] = (), sources: Sequence[ToolSource] = ()
    ) -> None:
        self._tools: dict[str, ToolDefinition[Any]] = {}
        self._specs: dict[str, ToolSpec] = {}
        self._sources = tuple(sources)
        self._resources: list[SessionResources] = []
        for definition in definitions:
            self.register(definition)

    def register(self, definition: ToolDefinition[Any]) -> None:
        """Add a tool; names are unique."""
        if definition.name in self._tools:
            raise ValueError(f"tool {definition.name!r} is already registered")
        self._tools[definition.name] = definition
        self._specs[definition.name] = _spec(definition)

    def hold(self, resources: SessionResources) -> None:
        """Free ``resources`` with each session and on :meth:`close_resources`."""
        self._resources.append(resources)

    async def release_session(self, session_id: str) -> None:
        """A session ended: its background terminals stop."""
        for resources in self._resources:
            await resources.release_session(session_id)

    async def close_resources(self) -> None:
        """The engine shuts down: every background terminal stops."""
        for resources in self._resources:
            await resources.close()

    @property
    def names(self) -> tuple[str, ...]:
        """Every registered tool name, in registration order."""
        return tuple(self._tools)

    def get(self, name: str) -> ToolDefinition[Any] | None:
        """The definition registered under ``name``."""
        return self._tools.get(name)

    def specs(self, names: Iterable[str]) -> list[ToolSpec]:
        """LLM-visible specs for the named tools (unknown names skipped, companion added)."""
        chosen: list[ToolSpec] = []
        for name in dict.fromkeys(names):
            spec = self._specs.get(name)
            if spec is not None:
                chosen.append(spec)
        companion = self._specs.get(READ_TOOL_OUTPUT)
        if chosen and companion is not None and companion not in chosen:
            chosen.append(companion)
        return chosen

    async def select(self, entries: Sequence[str], ctx: ToolCallContext) -> ToolSelection:
        """Built-ins named by ``entries`` plus what the sources resolve for the others."""
        claimed: dict[int, list[str]] = {}
        builtin: list[str] = []
        for entry in dict.fromkeys(entries):
            owner = next((i for i, s in enumerate(self._sources) if s.claims(entry)), None)
            if owner is None:
                builtin.append(entry)
            else:
                claimed.setdefault(owner, []).append(entry)
        builtin = [name for name in builtin if self._available(name, ctx)]
        specs = self.specs(builtin)
        turn_tools: dict[str, ToolDefinition[Any]] = {}
        for index, source in enumerate(self._sources):
            # Asked even without entries: a source may hold tools the session was given.
            for definition in await source.resolve(claimed.get(index, []), ctx):
                if definition.name not in self._tools:
                    turn_tools.setdefault(definition.name, definition)
        dynamic = [_spec(definition) for definition in turn_tools.values()]
        companion = self._specs.get(READ_TOOL_OUTPUT)
        if dynamic and companion is not None and companion not in specs:
            specs.append(companion)
        return ToolSelection(
            specs=[*specs, *dynamic],
            allowed=frozenset(builtin) | frozenset(turn_tools),
            turn_tools=turn_tools,
        )

    def _available(self, name: str, ctx: ToolCallContext) -> bool:
        definition = self._tools.get(name)
        return definition is None or definition.available is None or definition.available(ctx)

    def _is_allowed(self, name: str, ctx: ToolCallContext) -> bool:
        return name in ctx.allowed_tools or name == READ_TOOL_OUTPUT

    def _lookup(self, name: str, ctx: ToolCallContext) -> ToolDefinition[Any] | None:
        return self._tools.get(name) or ctx.turn_tools.get(name)

    async def dispatch(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolAnswer:
        """Run one call under policy; never raises except for cancellation."""
        definition = self._lookup(call.name, ctx)
        ctx = dataclasses.replace(ctx, call_id=call.id)
        ctx.emit(tool_call_event(call, definition, ctx.model))
        timer = _Timer()
        try:
            run = await self._execute(definition, call, ctx, timer)
            text = await self._bounded(definition, run.text, call, ctx)
        except asyncio.CancelledError:
            ctx.emit(
                AgentToolResult(
                    tool_id=call.name,
                    call_id=call.id,
                    success=False,
                    output_summary="The turn was aborted; the call did not complete.",
                    duration_ms=timer.elapsed_ms(),
                    error_code="cancelled",
                )
            )
            raise
        ctx.emit(
            AgentToolResult(
                tool_id=call.name,
                call_id=call.id,
                success=not run.failed,
                output_summary=summarize_output(text),
                duration_ms=timer.elapsed_ms(),
                error_code=run.error_code if run.failed else None,
                diff=None if run.failed else run.diff,
            )
        )
        result = ToolResultPart(tool_call_id=call.id, result=text, is_error=run.failed)
        return ToolAnswer(result=result, media=run.media)

    async def _execute(
        self,
        definition: ToolDefinition[Any] | None,
        call: ToolCallPart,
        ctx: ToolCallContext,
        timer: _Timer,
    ) -> ToolRun:
        if definition is None or not self._is_allowed(call.name, ctx):
            known = [*self._tools, *ctx.turn_tools]
            available = ", ".join(sorted(n for n in known if self._is_allowed(n, ctx)))
            return ToolRun(
                f"Error: the tool {call.name!r} is not available in this session. "
                f"Available tools: {available or 'none'}.",
                failed=True,
                error_code="tool_unavailable",
            )
        try:
            args = definition.args_model.model_validate(call.args)
        except ValidationError as error:
            return ToolRun(_validation_message(call.name, error), True, "validation")
        timer.start()
        try:
            prepared = await definition.prepare(args, ctx)
            if prepared.approval is not None:
                timer.pause()
                await require_approval(
                    ctx,
                    tool_id=call.name,
                    call_id=call.id,
                    need=prepared.approval,
                    always_ask=definition.always_ask,
                )
                timer.resume()
            return await prepared.run()
        except ToolDenied as denied:
            return ToolRun(
                f"Refused by policy: {denied.message}. This is not a transient error; "
                "do not retry the same call.",
                failed=True,
                error_code="tool_denied",
            )
        except ToolError as error:
            return ToolRun(
                f"Error: {error.message}", failed=True, error_code=_error_code(error.code)
            )
        except OSError as error:
            return ToolRun(
                f"Error: {error.strerror or type(error).__name__}",
                failed=True,
                error_code="tool_failed",
            )
        except Exception:
            logger.exception("tool %s failed unexpectedly", call.name)
            return ToolRun(
                f"Error: {call.name} failed unexpectedly (internal error).",
                failed=True,
                error_code="internal",
            )

    async def _bounded(
        self,
        definition: ToolDefinition[Any] | None,
        text: str,
        call: ToolCallPart,
        ctx: ToolCallContext,
    ) -> str:
        if definition is not None and not definition.bounded_by_artifact:
            return truncate_bytes(text)[0]

        async def save(full_text: str) -> str:
            return await ctx.artifacts.save_artifact(ctx.session_id, call.id, full_text)

        try:
            return (await bound_output(text, save)).text
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("saving the full output of %s failed", call.name)
            cut, _ = truncate_bytes(text)
            return cut + "\n[... output truncated; the full output could not be saved ...]"


class _Timer:
    """Run time of a call, excluding the time spent waiting for the user's approval."""

    def __init__(self) -> None:
        self._total = 0.0
        self._since: float | None = None

    def start(self) -> None:
        self._since = time.perf_counter()

    def pause(self) -> None:
        if self._since is not None:
            self._total += time.perf_counter() - self._since
            self._since = None

    def resume(self) -> None:
        self.start()

    def elapsed_ms(self) -> int:
        running = 0.0 if self._since is None else time.perf_counter() - self._since
        return int((self._total + running) * 1000)


def _spec(definition: ToolDefinition[Any]) -> ToolSpec:
    return ToolSpec(
        name=definition.name,
        description=definition.description,
        parameters=definition.parameters_schema(),
    )


def _error_code(code: str) -> ErrorCode:
    """A ToolError's code as an event ErrorCode (session codes never come from tools)."""
    return cast("ErrorCode", code) if code in _ERROR_CODES else "tool_failed"


def _validation_message(tool: str, error: ValidationError) -> str:
    problems = []
    for item in error.errors(include_url=False, include_input=False)[:_VALIDATION_ERRORS_SHOWN]:
        location = ".".join(str(part) for part in item["loc"]) or "(arguments)"
        problems.append(f"- {location}: {item['msg']}")
    more = error.error_count() - _VALIDATION_ERRORS_SHOWN
    if more > 0:
        problems.append(f"- … and {more} more")
    return f"Error: invalid arguments for {tool}:\n" + "\n".join(problems)


def default_registry(
    *,
    egress_guard: EgressGuard | None = None,
    limits: ToolLimits | None = None,
    sources: Sequence[ToolSource] = (),
) -> ToolRegistry:
    """Every built-in tool, plus ``sources`` (``egress_guard`` is the test seam for HTTP)."""
    limits = limits or ToolLimits()
    guard = egress_guard or EgressGuard()
    jobs = TerminalJobs(limits)
    definitions: list[ToolDefinition[Any]] = [
        *fs_tools(limits),
        *edit_tools(limits),
        *search_tools(limits),
        *process_tools(limits),
        *terminal_tools(jobs),
        *git_tools(limits),
        *http_tools(guard, limits),
        *plan_tools(),
        *editor_tools(),
        *tool_output_tools(),
        *delegate_tools(),
        *message_session_tools(),
    ]
    registry = ToolRegistry(definitions, sources)
    registry.hold(jobs)
    return registry


def tool_call_event(
    call: ToolCallPart, definition: ToolDefinition[Any] | None, model: str
) -> AgentToolCall:
    """The ``agent:tool_call`` event for a call, with its input sanitized for clients."""
    return AgentToolCall(
        tool_id=call.name,
        call_id=call.id,
        tool_input=sanitize_input(
            call.args,
            summarized=definition.summarized_fields if definition else frozenset(),
            redacted=definition.redacted_fields if definition else frozenset(),
        ),
        model=model,
    )

"""What a tool is, as the registry sees it.

A :class:`ToolDefinition` pairs the model-visible surface (name, description, a pydantic
arguments model whose JSON Schema the model sees) with what only configuration decides: the
side-effect class that drives the approval gate, the replay class used by export/replay, and
the limits in :class:`ToolLimits`. The model can never set a limit: every arguments model
forbids unknown fields, so ``{"timeout": 9999}`` is a validation error, not an override.

Running a call has two steps. ``prepare`` applies policy (scope jail, allowlists, the egress
guard) without side effects and returns a :class:`PreparedCall`; the gate then asks for
approval if ``PreparedCall.approval`` says so; only then does ``PreparedCall.run`` act.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from relavium_lsp.contracts.content import MediaPart
from relavium_lsp.contracts.diff import FileDiff
from relavium_lsp.contracts.events import ApprovalAction, ApprovalPreview, ErrorCode
from relavium_lsp.tools.base import SideEffect, ToolCallContext
from relavium_lsp.tools.host import FileChange

ReplayClass = Literal["pure", "read-only", "side-effecting"]


class ToolArgs(BaseModel):
    """Base of every tool's arguments: camelCase keys as the model sends them, nothing extra."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        extra="forbid",
        frozen=True,
    )


ArgsT = TypeVar("ArgsT", bound=ToolArgs)


@dataclass(frozen=True)
class ToolLimits:
    """Config-only bounds for the built-in tools (never model-settable)."""

    read_max_bytes: int = 10 * 1024 * 1024
    write_max_bytes: int = 5 * 1024 * 1024
    list_max_entries: int = 2_000
    list_max_depth: int = 6
    search_max_matches: int = 500
    # Below the 50 KB the model sees whole (tools/bounding.py), so a search is never cut.
    search_max_output_bytes: int = 48_000
    find_max_results: int = 1_000
    search_max_file_bytes: int = 2 * 1024 * 1024
    search_timeout_s: float = 15.0
    command_timeout_s: float = 120.0
    command_max_output_bytes: int = 1024 * 1024
    terminal_max_jobs: int = 4
    terminal_max_lifetime_s: float = 3600.0
    git_timeout_s: float = 30.0
    http_timeout_s: float = 30.0
    http_max_response_bytes: int = 2 * 1024 * 1024
    http_max_redirects: int = 5


@dataclass(frozen=True)
class ToolRun:
    """What a tool produced; ``failed`` marks a result the model should read as an error.

    ``media`` (images and other binary parts an MCP tool returned) is kept beside the text
    result in the tool message; the text should mention it.
    """

    text: str
    failed: bool = False
    error_code: ErrorCode | None = None
    media: tuple[MediaPart, ...] = ()
    # The change a file tool made, for the transcript (``agent:tool_result``), not the model.
    diff: FileDiff | None = None


@dataclass(frozen=True)
class ApprovalNeed:
    """What the approval gate needs to decide about one side-effecting call.

    ``scope_key`` is what "always allow for this session" remembers together with the tool
    id; ``inside_workspace`` lets ``auto_edits`` approve writes that stay in the workspace;
    ``protected`` (the matching pattern, see :mod:`~relavium_lsp.tools.protected`) makes the
    call ask whatever the mode or remembered answers; ``change`` is the file change a write
    makes (its diff goes with the question).
    """

    action: ApprovalAction
    preview: ApprovalPreview
    scope_key: str
    inside_workspace: bool = False
    protected: str | None = None
    change: FileChange | None = None


@dataclass(frozen=True)
class PreparedCall:
    """A call that passed policy: what to ask (if anything) and what to run afterwards."""

    run: Callable[[], Awaitable[ToolRun]]
    approval: ApprovalNeed | None = None


@dataclass(frozen=True)
class ToolDefinition(Generic[ArgsT]):
    """One tool: its model-visible surface, its policy classes and its implementation.

    ``summarized_fields`` are argument fields shown in events only as length + head (file
    contents, request bodies); ``redacted_fields`` never appear in events at all.
    ``always_ask`` forces the approval prompt whatever the mode or remembered answers.
    ``bounded_by_artifact`` is off only for ``read_tool_output``, which pages by itself.
    ``input_schema`` is set for tools whose arguments are described by someone else's JSON
    Schema (MCP tools): the model sees it as is, and ``args_model`` checks it. ``available``
    hides a tool from turns whose context cannot run it (no client support).
    """

    name: str
    description: str
    args_model: type[ArgsT]
    side_effect: SideEffect
    replay: ReplayClass
    prepare: Callable[[ArgsT, ToolCallContext], Awaitable[PreparedCall]]
    summarized_fields: frozenset[str] = frozenset()
    redacted_fields: frozenset[str] = frozenset()
    always_ask: bool = False
    bounded_by_artifact: bool = True
    input_schema: dict[str, Any] | None = None
    # When set, the tool exists for a turn only if this says so (editor tools need a client
    # that answers them); otherwise the model never sees it.
    available: Callable[[ToolCallContext], bool] | None = None

    def parameters_schema(self) -> dict[str, Any]:
        """The JSON Schema the model sees (camelCase keys, no extra properties)."""
        if self.input_schema is not None:
            return dict(self.input_schema)
        schema: dict[str, Any] = _without_titles(
            _inlined(self.args_model.model_json_schema(by_alias=True))
        )
        # The class docstring is for developers; the tool description speaks to the model.
        schema.pop("description", None)
        return schema


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with nested models' ``$ref``s replaced by their definitions.

    Some providers' tool-schema validators refuse ``$defs``; argument models never recurse.
    """
    definitions = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/$defs/"):
                return resolve(definitions[reference.removeprefix("#/$defs/")])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def _without_titles(node: Any) -> Any:
    """Drop pydantic's generated ``title`` keys: noise for the model, not constraints."""
    if isinstance(node, dict):
        return {
            key: _without_titles(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_without_titles(item) for item in node]
    return node

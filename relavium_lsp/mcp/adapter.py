"""An MCP server's tool as a :class:`~relavium_lsp.tools.base.ToolDefinition`.

The definition runs through the same registry dispatch as every built-in (sanitized
``agent:tool_call``, argument validation, the approval gate, bounding with artifacts,
``agent:tool_result``); only the pieces below are MCP-specific:

- **name** — ``mcp__SERVER__TOOL`` (:mod:`relavium_lsp.contracts.mcp`).
- **arguments** — the model sees the server's JSON Schema as is; :class:`McpArguments`
  validates against it with ``jsonschema`` (errors name the field, like the built-ins').
- **approval** — every call asks (action ``process`` for a stdio server, ``egress`` for an
  HTTP one; "always allow" remembers the tool for the session). A tool the server marks
  ``readOnlyHint`` runs unasked only when the user's own config sets
  ``auto_approve_read_only`` for that server: the hint is the server's claim, not a fact.
- **replay** — ``read-only`` for a ``readOnlyHint`` tool, else ``side-effecting`` (unknown
  means side-effecting), so a replay answers from the recording.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, ClassVar

from pydantic import ConfigDict, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from relavium_lsp.contracts.events import ApprovalAction, ApprovalPreview
from relavium_lsp.contracts.mcp import exposed_name
from relavium_lsp.mcp.connection import ListedTool
from relavium_lsp.mcp.pool import ManagedServer
from relavium_lsp.tools.base import (
    ApprovalNeed,
    PreparedCall,
    ToolArgs,
    ToolCallContext,
    ToolDefinition,
    ToolRun,
)

MAX_DESCRIPTION = 2_000
MAX_PROBLEM_CHARS = 300
_log = logging.getLogger(__name__)


class McpArguments(ToolArgs):
    """Any JSON object, checked against the tool's JSON Schema (set per tool)."""

    model_config = ConfigDict(extra="allow")
    schema_validator: ClassVar[Any] = None

    @model_validator(mode="before")
    @classmethod
    def _matches_schema(cls, data: Any) -> Any:
        validator = cls.schema_validator
        if validator is None or not isinstance(data, dict):
            return data
        errors = sorted(validator.iter_errors(data), key=lambda error: list(error.absolute_path))
        if errors:
            raise ValidationError.from_exception_data(
                cls.__name__,
                [
                    InitErrorDetails(
                        type=PydanticCustomError(
                            "json_schema",
                            "{problem}",
                            {"problem": error.message[:MAX_PROBLEM_CHARS]},
                        ),
                        loc=tuple(error.absolute_path),
                        input=None,
                    )
                    for error in errors
                ],
            )
        return data

    def arguments(self) -> dict[str, Any]:
        """The arguments exactly as the model sent them."""
        return dict(self.model_extra or {})


def arguments_model(schema: dict[str, Any], label: str) -> type[McpArguments]:
    """An arguments model for one tool; raises ``jsonschema.SchemaError`` for a bad schema."""
    from jsonschema.validators import Draft202012Validator, validator_for

    validator_class = validator_for(schema, default=Draft202012Validator)
    validator_class.check_schema(schema)
    return type(
        f"McpArguments_{hashlib.sha256(label.encode()).hexdigest()[:12]}",
        (McpArguments,),
        {"schema_validator": validator_class(schema), "__module__": __name__},
    )


def model_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema the model sees: the server's, minus ``$schema``, always an object."""
    shown = {key: value for key, value in schema.items() if key != "$schema"}
    shown.setdefault("type", "object")
    if shown.get("type") == "object":
        shown.setdefault("properties", {})
    return shown


def tool_definition(server: ManagedServer, tool: ListedTool) -> ToolDefinition[Any] | None:
    """The definition for one listed tool, or ``None`` when its schema is unusable."""
    from jsonschema.exceptions import SchemaError

    name = exposed_name(server.name, tool.name)
    try:
        args_model = arguments_model(tool.input_schema, name)
    except SchemaError as error:
        _log.warning(
            "MCP server %r: tool %r has an invalid input schema (%s); not offered",
            server.name,
            tool.name,
            error.message[:200],
        )
        return None
    definition = server.definition
    side_effect: ApprovalAction = "egress" if definition.transport == "http" else "process"
    runs_unasked = (
        tool.read_only and definition.origin == "user" and definition.config.auto_approve_read_only
    )
    approval = (
        None
        if runs_unasked
        else ApprovalNeed(
            action=side_effect,
            preview=_preview(server, tool),
            scope_key=f"mcp:{server.name}",
        )
    )

    async def prepare(args: McpArguments, ctx: ToolCallContext) -> PreparedCall:
        arguments = args.arguments()

        async def run() -> ToolRun:
            return await server.call(tool.name, arguments)

        return PreparedCall(run=run, approval=approval)

    description = tool.description.strip() or tool.title or tool.name
    return ToolDefinition(
        name=name,
        description=f"{description[:MAX_DESCRIPTION]}\n(Tool {tool.name!r} of MCP server "
        f"{server.name!r}.)",
        args_model=args_model,
        side_effect=side_effect,
        # A read-only MCP tool still reads a server's state, which the recording does not hold.
        replay="external-stateful" if tool.read_only else "side-effecting",
        prepare=prepare,
        input_schema=model_schema(tool.input_schema),
    )


def _preview(server: ManagedServer, tool: ListedTool) -> ApprovalPreview:
    if server.definition.transport == "http":
        return ApprovalPreview(
            host=server.definition.host(), command=f"MCP {server.name}: {tool.name}"
        )
    return ApprovalPreview(command=f"MCP {server.name}: {tool.name}")

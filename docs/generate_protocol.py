"""Generate ``docs/protocol.md`` — the LSP reference — from the pydantic contracts.

Run ``python docs/generate_protocol.py`` to rewrite the file, or with ``--check`` to exit 1
when it is out of date (a test does that). Methods come from
:mod:`relavium_lsp.server.methods`, shapes from :mod:`relavium_lsp.contracts.wire` and
:mod:`relavium_lsp.contracts.events`, so the reference cannot drift from the code.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from relavium_lsp.contracts import events, wire
from relavium_lsp.contracts.base import WireModel
from relavium_lsp.server import methods

OUTPUT = Path(__file__).with_name("protocol.md")
Direction = Literal["client → server", "server → client"]

# (method, direction, kind, params, result); None result = no result (a notification).
REQUESTS: tuple[tuple[str, Direction, str, type[BaseModel], type[BaseModel] | str | None], ...] = (
    (methods.START_SESSION, "client → server", "request", wire.StartSessionParams,
     wire.StartSessionResult),
    (methods.SEND_MESSAGE, "client → server", "request", wire.SendMessageParams,
     wire.SendMessageResult),
    (methods.ABORT_TURN, "client → server", "request", wire.AbortTurnParams,
     wire.AbortTurnResult),
    (methods.CANCEL_SESSION, "client → server", "request", wire.SessionRefParams, "{}"),
    (methods.RESUME_SESSION, "client → server", "request", wire.SessionRefParams,
     wire.ResumeSessionResult),
    (methods.LIST_SESSIONS, "client → server", "request", wire.ListSessionsParams,
     wire.ListSessionsResult),
    (methods.GET_TRANSCRIPT, "client → server", "request", wire.GetTranscriptParams,
     wire.GetTranscriptResult),
    (methods.SESSION_EVENTS, "client → server", "request", wire.SessionEventsParams,
     wire.SessionEventsResult),
    (methods.RENAME_SESSION, "client → server", "request", wire.RenameSessionParams, "{}"),
    (methods.DELETE_SESSION, "client → server", "request", wire.SessionRefParams, "{}"),
    (methods.COMPACT_SESSION, "client → server", "request", wire.CompactSessionParams,
     "the terminal compaction event (`session:compacted` or `session:trimmed`)"),
    (methods.EXPORT_SESSION, "client → server", "request", wire.ExportSessionParams,
     wire.ExportSessionResult),
    (methods.FORK_SESSION, "client → server", "request", wire.ForkSessionParams,
     wire.ForkSessionResult),
    (methods.LIST_AGENTS, "client → server", "request", wire.EmptyParams, wire.ListAgentsResult),
    (methods.EDITOR_STATE, "client → server", "notification", wire.EditorStateParams, None),
    (methods.REQUEST_APPROVAL, "server → client", "request", wire.RequestApprovalParams,
     wire.RequestApprovalResult),
    (methods.OPEN_UNTITLED, "server → client", "request", wire.OpenUntitledParams,
     wire.OpenUntitledResult),
    (methods.CODE_ACTION_ASK, "client → server", "command", wire.SelectionCommandParams,
     wire.SelectionTurnResult),
    (methods.CODE_ACTION_EXPLAIN, "client → server", "command", wire.SelectionCommandParams,
     wire.SelectionTurnResult),
    (methods.CODE_ACTION_EXPORT, "client → server", "command", wire.ExportChatParams,
     wire.ExportSessionResult),
)  # fmt: skip
EXTRA_TYPES: tuple[type[BaseModel], ...] = (
    wire.SendMessageAccepted,
    wire.InitializationOptions,
    wire.RelaviumClientCapabilities,
    wire.ConfigurationSettings,
)


def _event_payloads() -> list[type[BaseModel]]:
    union = typing.get_args(events.EventPayload)[0]
    return list(typing.get_args(union))


def _type_name(annotation: Any, seen: list[type[BaseModel]]) -> str:
    """A short, readable type; nested models are noted in ``seen`` for the Types section."""
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(arguments[0], seen)
    if origin in (typing.Union, types.UnionType):
        parts = [_type_name(item, seen) for item in arguments if item is not type(None)]
        if type(None) in arguments:
            parts.append("null")
        return " \\| ".join(parts)
    if origin is Literal:
        return " \\| ".join(f"`{json.dumps(value)}`" for value in arguments)
    if origin in (list, tuple, typing.Sequence):
        return f"{_type_name(arguments[0], seen)}[]" if arguments else "array"
    if origin is dict:
        return f"object of {_type_name(arguments[1], seen)}" if len(arguments) == 2 else "object"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation not in seen:
            seen.append(annotation)
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    names = {str: "string", int: "integer", float: "number", bool: "boolean", Any: "any"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except TypeError:
        return repr(value)


def _wire_name(model: type[BaseModel], name: str, field: FieldInfo) -> str:
    if issubclass(model, WireModel):
        return field.alias or name
    return name


def _fields_table(model: type[BaseModel], seen: list[type[BaseModel]]) -> list[str]:
    if not model.model_fields:
        return ["_(no fields: `{}` or `null`)_"]
    lines = ["| field | type | required | default |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        required = "yes" if field.is_required() else ""
        default = ""
        if not field.is_required() and field.default is not None:
            default = f"`{_json(field.default)}`"
        type_name = _type_name(field.annotation, seen)
        lines.append(
            f"| `{_wire_name(model, name, field)}` | {type_name} | {required} | {default} |"
        )
    return lines


def _doc(model: type[BaseModel]) -> str:
    return (model.__doc__ or "").strip().splitlines()[0]


def _result_text(result: type[BaseModel] | str | None, seen: list[type[BaseModel]]) -> str:
    if result is None:
        return "— (notification)"
    if isinstance(result, str):
        return result if result != "{}" else "`{}`"
    return _type_name(result, seen)


def _method_sections(seen: list[type[BaseModel]]) -> Iterable[str]:
    yield "## Methods"
    yield ""
    yield "| method | direction | kind | params | result |"
    yield "| --- | --- | --- | --- | --- |"
    for method, direction, kind, params, result in REQUESTS:
        yield (
            f"| `{method}` | {direction} | {kind} | {_type_name(params, seen)} | "
            f"{_result_text(result, seen)} |"
        )
    yield ""
    yield (
        "Every client → server request is also a `workspace/executeCommand` command named "
        f"`{methods.command_name(methods.START_SESSION)}` etc. (the params object as its only "
        "argument). Server → client requests are sent only when the client declared them in "
        "`capabilities.experimental.relavium` (see [RelaviumClientCapabilities]"
        "(#relaviumclientcapabilities)); otherwise the server falls back to standard LSP "
        "(`window/showMessageRequest`, `window/showDocument`). File writes always arrive as "
        "`workspace/applyEdit`."
    )
    yield ""
    yield (
        f"`{methods.SEND_MESSAGE}` answers when the turn settles ([SendMessageResult]"
        "(#sendmessageresult)); with `wait: false` it answers as soon as the turn has begun "
        "([SendMessageAccepted](#sendmessageaccepted)) and the settled turn arrives as the "
        "`session:turn_completed` event. The "
        f"`{methods.command_name(methods.SEND_MESSAGE)}` command does not wait unless `wait` "
        "is `true`. A `workDoneToken` in its params gets `$/progress` begin / report / end "
        "for the turn."
    )
    yield ""
    yield (
        "Commands (kind `command`) are `workspace/executeCommand` commands only: the ones a "
        "plain client's `textDocument/codeAction` offers on a selection (\"Ask Relavium\", "
        "\"Explain\") and anywhere (\"Export this chat\"). Clients that declared "
        "`experimental.relavium` get no code actions. `workspace/didChangeConfiguration` "
        "settings may carry a `relavium` section ([ConfigurationSettings]"
        "(#configurationsettings)), used for sessions started afterwards."
    )
    yield ""


def _event_sections(seen: list[type[BaseModel]]) -> Iterable[str]:
    yield "## Events"
    yield ""
    yield (
        f"Each event is a `{methods.SESSION_EVENT}` notification whose params are one flat "
        "envelope: `type`, `sessionId`, `sequenceNumber` (monotonic per session), `timestamp` "
        f"and the payload fields below. Missed events can be fetched with "
        f"`{methods.SESSION_EVENTS}`."
    )
    yield ""
    for payload in _event_payloads():
        event_type = payload.model_fields["type"].default
        yield f"### `{event_type}`"
        yield ""
        yield _doc(payload)
        yield ""
        fields = [name for name in payload.model_fields if name != "type"]
        if not fields:
            yield "_(no payload fields)_"
        else:
            yield from (line for line in _fields_table(payload, seen) if "| `type` |" not in line)
        yield ""
    yield f"Error codes (`error.code`): {', '.join(f'`{code}`' for code in typing.get_args(events.ErrorCode))}."  # noqa: E501
    yield ""
    reserved = ", ".join(f"`{name}`" for name in events.RESERVED_EVENT_TYPES)
    yield f"Reserved (declared, never emitted): {reserved}."
    yield ""


def render() -> str:
    """The whole reference document."""
    seen: list[type[BaseModel]] = []
    lines = [
        "# relavium-lsp protocol reference",
        "",
        "<!-- Generated by `python docs/generate_protocol.py` from relavium_lsp/contracts; "
        "do not edit by hand. -->",
        "",
        "JSON is camelCase. Fields marked required must be present; others may be omitted "
        "(a `null` result field is omitted too). Malformed params get JSON-RPC `InvalidParams` "
        "(-32602); domain errors use -32001…-32099 with a stable `data.code`.",
        "",
    ]
    lines.extend(_method_sections(seen))
    lines.extend(_event_sections(seen))
    lines.extend(["## Types", ""])
    for model in EXTRA_TYPES:
        if model not in seen:
            seen.append(model)
    index = 0
    while index < len(seen):  # tables may add nested models as they go
        model = seen[index]
        index += 1
        lines.extend([f"### {model.__name__}", "", _doc(model), ""])
        lines.extend(_fields_table(model, seen))
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the reference, or with ``--check`` report whether it is current."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 if protocol.md is stale")
    arguments = parser.parse_args(argv)
    text = render()
    if arguments.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is out of date: run python docs/generate_protocol.py")
            return 1
        print(f"{OUTPUT} is up to date")
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``docs/protocol.md``: the protocol reference for people, from a :class:`Protocol`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel

from protocol_gen.shapes import (
    ArrayOf,
    Choice,
    MapOf,
    ModelRef,
    ModelShape,
    OneOf,
    Protocol,
    TypeExpr,
)
from relavium_lsp.rpc_errors import DOMAIN_ERROR_CODES
from relavium_lsp.server import methods


def _type_name(expr: TypeExpr, seen: list[type[BaseModel]]) -> str:
    """A short, readable type; nested models are noted in ``seen`` for the Types section."""
    if isinstance(expr, OneOf):
        parts = [_type_name(member, seen) for member in expr.members]
        if expr.nullable:
            parts.append("null")
        return " \\| ".join(parts)
    if isinstance(expr, Choice):
        return " \\| ".join(f"`{value!r}`".replace("'", '"') for value in expr.values)
    if isinstance(expr, ArrayOf):
        return f"{_type_name(expr.item, seen)}[]" if expr.item is not None else "array"
    if isinstance(expr, MapOf):
        return f"object of {_type_name(expr.value, seen)}" if expr.value is not None else "object"
    if isinstance(expr, ModelRef):
        if expr.model not in seen:
            seen.append(expr.model)
        return f"[{expr.model.__name__}](#{expr.model.__name__.lower()})"
    return expr.name


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except TypeError:
        return repr(value)


def _fields_table(shape: ModelShape, seen: list[type[BaseModel]]) -> list[str]:
    if not shape.fields:
        return ["_(no fields: `{}` or `null`)_"]
    lines = ["| field | type | required | default |", "| --- | --- | --- | --- |"]
    for field in shape.fields:
        required = "yes" if field.required else ""
        default = ""
        if not field.required and field.default is not None:
            default = f"`{_json(field.default)}`"
        type_name = _type_name(field.type, seen)
        lines.append(f"| `{field.wire_name}` | {type_name} | {required} | {default} |")
    return lines


def _result_text(result: type[BaseModel] | str | None, seen: list[type[BaseModel]]) -> str:
    if result is None:
        return "— (notification)"
    if isinstance(result, str):
        return result if result != "{}" else "`{}`"
    return _type_name(ModelRef(result), seen)


def _method_sections(protocol: Protocol, seen: list[type[BaseModel]]) -> Iterable[str]:
    yield "## Methods"
    yield ""
    yield "| method | direction | kind | params | result |"
    yield "| --- | --- | --- | --- | --- |"
    for row in protocol.rows:
        yield (
            f"| `{row.method}` | {row.direction} | {row.kind} | "
            f"{_type_name(ModelRef(row.params), seen)} | {_result_text(row.result, seen)} |"
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
        'plain client\'s `textDocument/codeAction` offers on a selection ("Ask Relavium", '
        '"Explain") and anywhere ("Export this chat"). Clients that declared '
        "`experimental.relavium` get no code actions. `workspace/didChangeConfiguration` "
        "settings may carry a `relavium` section ([ConfigurationSettings]"
        "(#configurationsettings)), used for sessions started afterwards."
    )
    yield ""


def _event_sections(protocol: Protocol, seen: list[type[BaseModel]]) -> Iterable[str]:
    yield "## Events"
    yield ""
    yield (
        f"Each event is a `{methods.SESSION_EVENT}` notification whose params are one flat "
        "envelope: `type`, `sessionId`, `sequenceNumber` (monotonic per session), `timestamp` "
        f"and the payload fields below. Missed events can be fetched with "
        f"`{methods.SESSION_EVENTS}`."
    )
    yield ""
    for payload in protocol.events:
        yield f"### `{payload.tag}`"
        yield ""
        yield payload.doc
        yield ""
        if all(field.wire_name == "type" for field in payload.fields):
            yield "_(no payload fields)_"
        else:
            yield from (line for line in _fields_table(payload, seen) if "| `type` |" not in line)
        yield ""
    codes = ", ".join(f"`{code}`" for code in protocol.error_codes)
    yield f"Error codes (`error.code`): {codes}."
    yield ""
    reserved = ", ".join(f"`{name}`" for name in protocol.reserved_event_types)
    yield f"Reserved (declared, never emitted): {reserved}."
    yield ""


ERRORS_NOTE = (
    "Several editor windows share one history database, each with its own server. While one "
    "runs a turn of a session it holds that session's lease; the others may read, watch, "
    "export and abort it (`relavium/abortTurn` asks the owner through the database, and it "
    "stops within one heartbeat), but `sendMessage`, `compactSession`, `deleteSession` and "
    '`cancelSession` fail with `session_running_elsewhere` (show it as "running in another '
    'window"). A lease whose owner died, or whose heartbeat is older than the lease timeout '
    "(`RELAVIUM_LEASE_TIMEOUT_S`, default 15 s), is taken over: the cut turn gets one "
    "interruption marker and the session lists as idle."
)


def _version_section(protocol: Protocol) -> Iterator[str]:
    yield "## Versions"
    yield ""
    yield (
        "The `initialize` result carries two numbers a client checks before it uses the "
        f"server: `serverInfo.version` (the package version, now `{protocol.package_version}`, "
        "shared by the wheel, the VS Code extension and the Neovim plugin) and "
        "`capabilities.experimental.relavium.protocolVersion` (the wire protocol version, now "
        f"`{protocol.protocol_version}`; see [RelaviumServerCapabilities]"
        "(#relaviumservercapabilities)). The protocol version goes up by one on a breaking "
        "change — a method, notification or field removed or renamed, a field made required "
        "or changed in type or meaning, a closed set losing a value; additive changes keep "
        "it. The clients' generated protocol modules carry both as `PACKAGE_VERSION` and "
        "`PROTOCOL_VERSION`: a client that finds another protocol version offers the matching "
        "server."
    )
    yield ""


def _error_section() -> Iterator[str]:
    yield "## Errors"
    yield ""
    yield "| `data.code` | JSON-RPC code |"
    yield "| --- | --- |"
    for kind, number in DOMAIN_ERROR_CODES.items():
        yield f"| `{kind}` | {number} |"
    yield ""
    yield ERRORS_NOTE
    yield ""


def render(protocol: Protocol) -> str:
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
    lines.extend(_version_section(protocol))
    lines.extend(_method_sections(protocol, seen))
    lines.extend(_error_section())
    lines.extend(_event_sections(protocol, seen))
    lines.extend(["## Types", ""])
    for model in protocol.extra_types:
        if model not in seen:
            seen.append(model)
    index = 0
    while index < len(seen):  # tables may add nested models as they go
        shape = protocol.models[seen[index]]
        index += 1
        lines.extend([f"### {shape.name}", "", shape.doc, ""])
        lines.extend(_fields_table(shape, seen))
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"

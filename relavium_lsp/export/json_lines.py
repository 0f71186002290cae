"""One line of a JSON Lines document: written byte-stable, read strictly (both formats here).

The session transcript (``relavium-session/*``) and the tool cassette
(``relavium-tool-cassette/*``) write compact JSON with sorted keys, one record per line, and
read each line as exactly one record of a discriminated union: no duplicate keys, no
``NaN``/``Infinity``, no coercion. A bad line is an :class:`ExportError` naming the line.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.errors import ExportError

T = TypeVar("T")


def dump_line(record: WireModel) -> str:
    """The record's line (without the newline): compact, keys sorted, text kept readable."""
    return json.dumps(record.to_wire(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def split_lines(text: str) -> list[str]:
    """The lines of a document whose last line ends with a newline (or not)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def parse_line(adapter: TypeAdapter[T], number: int, line: str) -> T:
    """Validate line ``number`` as one record of ``adapter``'s union."""
    try:
        raw = json.loads(line, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)
    except ValueError as error:  # json.JSONDecodeError is a ValueError
        reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        raise ExportError(f"not valid JSON: {reason}", line=number) from None
    try:
        return adapter.validate_python(raw, strict=True, by_alias=True, by_name=False)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(step) for step in first["loc"]) or "record"
        raise ExportError(f"{where}: {first['msg']}", line=number) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result

"""Reading ``config.toml`` / ``project.toml`` with :mod:`tomllib`, errors pointing at a line.

``tomllib`` reports syntax errors with their line (and rejects duplicate keys); for
validation errors a small line scanner maps key paths (table headers, dotted keys) to the
line where they are written. It is best effort — an error inside an inline table points at
the table's line — but never wrong about the file or the field.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from relavium_lsp.config.locate import KeyPath, config_error_from_validation, read_config_text
from relavium_lsp.errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)

_BARE_OR_QUOTED = r'[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\''
_DOTTED = rf"(?:{_BARE_OR_QUOTED})(?:\s*\.\s*(?:{_BARE_OR_QUOTED}))*"
_TABLE_HEADER = re.compile(rf"^\s*\[\[?\s*(?P<name>{_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_KEY_VALUE = re.compile(rf"^\s*(?P<key>{_DOTTED})\s*=")
_KEY_PART = re.compile(_BARE_OR_QUOTED)
_DECODE_LOCATION = re.compile(r"\s*\(at line (?P<line>\d+), column \d+\)|\s*\(at end of document\)")


def load_toml_model(path: Path, model: type[ModelT]) -> tuple[ModelT, dict[KeyPath, int]]:
    """Parse ``path``, validate it strictly as ``model``; also return its key-line map."""
    text = read_config_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        location = _DECODE_LOCATION.search(message)
        line = None
        if location is not None and location.group("line"):
            line = int(location.group("line"))
        elif location is not None:
            line = text.count("\n") + 1
        reason = _DECODE_LOCATION.sub("", message).strip() or "invalid TOML"
        raise ConfigError(f"invalid TOML: {reason}", file=str(path), line=line) from None
    lines = toml_key_lines(text)
    try:
        return model.model_validate(data, strict=True), lines
    except ValidationError as error:
        raise config_error_from_validation(error, path, lines) from None


def toml_key_lines(text: str) -> dict[KeyPath, int]:
    """Map every table header and ``key = value`` line to its key path (1-based lines)."""
    lines: dict[KeyPath, int] = {}
    table: tuple[str, ...] = ()
    in_multiline: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline is not None:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = _TABLE_HEADER.match(line)
        if header is not None:
            table = _split_key(header.group("name"))
            lines.setdefault(table, number)
            continue
        key_value = _KEY_VALUE.match(line)
        if key_value is None:
            continue
        path = (*table, *_split_key(key_value.group("key")))
        for end in range(len(table) + 1, len(path) + 1):
            lines.setdefault(path[:end], number)
        rest = line[key_value.end() :]
        for quotes in ('"""', "'''"):
            if rest.count(quotes) % 2 == 1:
                in_multiline = quotes
                break
    return lines


def _split_key(dotted: str) -> tuple[str, ...]:
    parts: list[str] = []
    for part in _KEY_PART.findall(dotted):
        if part[:1] in ('"', "'"):
            part = part[1:-1]
        parts.append(part)
    return tuple(parts)

"""Turning a pydantic ``ValidationError`` into a :class:`ConfigError` with file, line and field.

Both loaders produce a ``{key path: line}`` map while reading a file (YAML from ruamel's
position data, TOML from a line scanner); a validation error's ``loc`` is looked up in it,
walking up to the nearest enclosing key that has a line when the key itself is missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from relavium_lsp.errors import ConfigError

KeyPath = tuple[str | int, ...]
LineMap = Mapping[KeyPath, int]

MAX_CONFIG_BYTES = 1_000_000

_FRIENDLY: dict[str, str] = {
    "extra_forbidden": "unknown key",
    "missing": "required key is missing",
}


def format_key_path(path: KeyPath) -> str:
    """``("fallback_chain", 1, "model")`` → ``fallback_chain[1].model``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def line_for(path: KeyPath, lines: LineMap) -> int | None:
    """The line of ``path``, else of its nearest ancestor that has one."""
    for end in range(len(path), -1, -1):
        line = lines.get(path[:end])
        if line is not None:
            return line
    return None


def config_error_from_validation(error: ValidationError, file: Path, lines: LineMap) -> ConfigError:
    """The first problem of ``error`` (in file order) as a :class:`ConfigError`."""
    problems = [_describe(item, lines) for item in error.errors(include_url=False)]
    problems.sort(key=lambda problem: (problem[0] is None, problem[0] or 0))
    line, field, message = problems[0]
    if len(problems) > 1:
        extra = len(problems) - 1
        message += f" (and {extra} more problem{'s' if extra > 1 else ''})"
    return ConfigError(message, file=str(file), line=line, field=field or None)


def _describe(item: Mapping[str, Any], lines: LineMap) -> tuple[int | None, str, str]:
    path = _key_path(item["loc"], lines)
    kind = str(item.get("type", ""))
    message = _FRIENDLY.get(kind, str(item.get("msg", "invalid value")))
    if kind == "string_pattern_mismatch" and path and path[-1] == "id":
        message = "must be kebab-case: lowercase letters and digits joined by single hyphens"
    return line_for(path, lines), format_key_path(path), message


def _key_path(loc: tuple[Any, ...], lines: LineMap) -> KeyPath:
    """Keep the parts of a pydantic ``loc`` that name real keys (drop validator tags)."""
    path: list[str | int] = []
    for part in loc:
        candidate = (*path, part)
        if isinstance(part, int) or tuple(candidate) in lines or _is_plain_key(part):
            path.append(part)
    return tuple(path)


def _is_plain_key(part: Any) -> bool:
    # Tags pydantic inserts for unions/validators look like "function-after[...]" or
    # "list[str]"; file keys never contain brackets or parentheses.
    return isinstance(part, str) and not any(mark in part for mark in "[](),")


def read_config_text(path: Path) -> str:
    """Read a config file as UTF-8, refusing oversized or non-regular files."""
    if not path.is_file():
        raise ConfigError("is not a regular file", file=str(path))
    with path.open("rb") as handle:
        data = handle.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"is larger than {MAX_CONFIG_BYTES} bytes", file=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ConfigError("is not valid UTF-8", file=str(path), line=line) from None

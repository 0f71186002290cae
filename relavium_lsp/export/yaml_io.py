r"""Deterministic YAML out, plain data with line numbers in — with ruamel.yaml.

Output rules (so the same data always gives the same bytes, and reading them back gives the
same data):

- mapping keys sorted (code-point order) at every level, sequences kept in order;
- block style; sequences indented by 4 with the dash at 2 (``indent(2, 4, 2)``);
- width effectively unlimited, so no plain or quoted scalar is ever folded;
- a string holding a character that cannot stand verbatim in YAML text (control
  characters, ``\r``, NEL, U+2028/9, a BOM) is double-quoted with escapes;
- other multi-line strings are literal blocks (``|``);
- a string that a YAML 1.1 *or* 1.2 reader would take for something else (``yes``, ``on``,
  ``null``, ``1.0``, ``0x1f``, ``2024-01-01``…) is single-quoted;
- ``None`` is written ``null``; non-ASCII text is written as is (UTF-8).

Input is parsed with the round-trip loader only to keep line numbers; the result is
converted to plain ``dict`` / ``list`` / scalars. Anchors and aliases are refused (they
serve no purpose in a scaffold and let a small file expand into a huge one), and so are
duplicate keys and non-string keys.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.representer import RoundTripRepresenter

from relavium_lsp.errors import ExportError
from relavium_lsp.export.yaml_scalars import STR_TAG, looks_like_another_type
from relavium_lsp.export.yaml_writer import Unsupported, write_yaml

_NULL_TAG = "tag:yaml.org,2002:null"
_UNLIMITED_WIDTH = 2**30
# Characters a literal block may hold verbatim: YAML's printable set minus every character
# a reader would treat as (or normalise to) a line break, and minus the byte-order mark.
# Anything else — control characters, \r, NEL, U+2028/9 — needs the escapes of a
# double-quoted scalar, or it would not read back as the same string.
_BLOCK_SAFE = re.compile(
    "[\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*"
)


class _StableRepresenter(RoundTripRepresenter):
    """Round-trip representer with explicit, data-only choices of scalar style."""


def _represent_str(representer: RoundTripRepresenter, data: str) -> Any:
    style: str | None = None
    if not _BLOCK_SAFE.fullmatch(data):
        style = '"'
    elif "\n" in data:
        style = "|"
    elif looks_like_another_type(data):
        style = "'"
    return representer.represent_scalar(STR_TAG, data, style=style)


def _represent_none(representer: RoundTripRepresenter, data: None) -> Any:
    return representer.represent_scalar(_NULL_TAG, "null")


_StableRepresenter.add_representer(str, _represent_str)
_StableRepresenter.add_representer(type(None), _represent_none)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list | tuple):
        return [_sorted(item) for item in value]
    return value


def dump_yaml(data: dict[str, Any]) -> str:
    """Serialize plain data (dicts, lists, str, int, float, bool, None) deterministically.

    The dedicated writer (:mod:`.yaml_writer`) produces ruamel's exact bytes for the data an
    export holds, about fifty times faster; whatever it does not reproduce (a complex key, an
    unusual type) goes through ruamel itself, so the output never depends on the path.
    """
    try:
        return write_yaml(data)
    except Unsupported:
        return dump_ruamel(data)


def dump_ruamel(data: dict[str, Any]) -> str:
    """The reference serializer: ruamel.yaml's emitter with the rules in the module doc."""
    yaml = YAML(typ="rt")
    yaml.Representer = _StableRepresenter
    yaml.width = _UNLIMITED_WIDTH
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.allow_unicode = True
    stream = io.StringIO()
    yaml.dump(_sorted(data), stream)
    return stream.getvalue()


@dataclass(frozen=True)
class LoadedYaml:
    """Plain data, plus the parsed tree it came from to find the line (1-based) of a location."""

    data: Any
    root: Any

    def line_of(self, location: Sequence[str | int]) -> int:
        """The line of the deepest node of ``location`` that exists (unknown steps skipped)."""
        node = self.root
        line = _start_line(node)
        for step in location:
            if isinstance(node, CommentedMap) and step in node:
                line = node.lc.key(step)[0] + 1
                node = node[step]
            elif isinstance(node, CommentedSeq) and isinstance(step, int) and step < len(node):
                line = node.lc.item(step)[0] + 1
                node = node[step]
            else:
                continue
            if isinstance(node, CommentedMap | CommentedSeq):
                line = max(line, _start_line(node))
        return line


def _start_line(node: Any) -> int:
    lc = getattr(node, "lc", None)
    return 1 if lc is None or lc.line is None else int(lc.line) + 1


def load_yaml(text: str) -> LoadedYaml:
    """Parse one YAML document; any problem is an :class:`ExportError` with its line."""
    yaml = YAML(typ="rt")
    try:
        root = yaml.load(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = None if mark is None else mark.line + 1
        raise ExportError(f"not valid YAML: {error.problem or error.context}", line=line) from None
    except YAMLError as error:
        raise ExportError(f"not valid YAML: {type(error).__name__}") from None
    except AssertionError:  # ruamel asserts on a %YAML directive it does not know (1.91)
        raise ExportError("not valid YAML: unsupported %YAML directive") from None
    return LoadedYaml(data=_to_plain(root, set()), root=root)


def _to_plain(node: Any, seen: set[int]) -> Any:
    if isinstance(node, CommentedMap | CommentedSeq):
        # An alias hands back the very object its anchor made: meeting one twice is an alias.
        if node.yaml_anchor() is not None or id(node) in seen:
            raise ExportError("anchors and aliases are not allowed", line=_start_line(node))
        seen.add(id(node))
        if isinstance(node, CommentedMap):
            plain: Any = {}
            for key, value in node.items():
                if not isinstance(key, str):
                    line = node.lc.key(key)[0] + 1
                    raise ExportError(f"mapping keys must be strings (got {key!r})", line=line)
                plain[str(key)] = _to_plain(value, seen)
        else:
            plain = [_to_plain(item, seen) for item in node]
        return plain
    return _plain_scalar(node)


def _plain_scalar(value: Any) -> Any:
    # ruamel's round-trip scalars subclass the builtins; hand out the builtins themselves.
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    # Anything else (a timestamp, a binary, a tagged value) is left as is: the strict schema
    # rejects it where a string or number was expected.
    return value

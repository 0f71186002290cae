"""Read a YAML document into plain data through libyaml's C parser, when that is safe.

ruamel.yaml's round-trip loader (:func:`yaml_io.load_yaml`) is the reference reader: it keeps
line numbers for error messages and refuses anchors, aliases, duplicate and non-string keys.
It is also pure Python, ≈ 4 µs per character: 15 s for a long session's export. This module
reads the same plain data from libyaml's event stream (PyYAML's C extension) in a fraction of
that, for documents that stay inside a subset where the two readers provably agree:

- one document, no ``%YAML``/``%TAG`` directives, no tags, no anchors, no aliases;
- string keys, none repeated;
- plain scalars typed by ruamel's own YAML 1.2 resolver (:mod:`.yaml_scalars`), and turned
  into values only for the canonical spellings of null, booleans, decimal integers and
  floats (anything else — ``0o17``, ``1_000``, a timestamp, ``<<`` — leaves the subset).

Outside the subset, when libyaml rejects the text, or when PyYAML's C extension is missing,
:func:`load_plain_fast` returns ``None`` and the caller uses ruamel, so answers and error
messages (with their line numbers) are ruamel's. The differential tests in
``tests/unit/export/test_yaml_fast_load.py`` check both readers agree on generated and
mutated documents.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from relavium_lsp.export.yaml_scalars import NULL_TAG, STR_TAG, plain_tag

try:  # PyYAML built with libyaml (its C loaders); without it every document goes to ruamel.
    from yaml import (
        AliasEvent,
        CBaseLoader,
        DocumentStartEvent,
        MappingEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceEndEvent,
        SequenceStartEvent,
        StreamEndEvent,
        YAMLError,
    )
except ImportError:  # pragma: no cover - every supported platform has PyYAML wheels with it
    CBaseLoader = None


_BOOL_TAG = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
# libyaml reads YAML 1.1, where NEL and the Unicode separators break lines and a byte-order
# mark may start any document; ruamel reads them as content (a leading byte-order mark is
# skipped by both). Such text goes to ruamel.
_OUTSIDE_CHARACTERS = re.compile("[\x85\u2028\u2029\ufeff]")
_TAB = re.compile("\t")
_DECIMAL_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_DECIMAL_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_SPECIAL_FLOATS = {
    ".inf": float("inf"),
    ".Inf": float("inf"),
    ".INF": float("inf"),
    "+.inf": float("inf"),
    "+.Inf": float("inf"),
    "+.INF": float("inf"),
    "-.inf": float("-inf"),
    "-.Inf": float("-inf"),
    "-.INF": float("-inf"),
    ".nan": float("nan"),
    ".NaN": float("nan"),
    ".NAN": float("nan"),
}


class _OutsideSubset(Exception):  # control flow only: never escapes this module
    pass


def _plain_value(text: str) -> Any:
    """The value ruamel's round-trip loader gives the plain scalar ``text`` (or leave)."""
    tag = plain_tag(text)
    if tag == STR_TAG:
        return text
    if tag == NULL_TAG:
        return None
    if tag == _BOOL_TAG and text in ("true", "True", "TRUE", "false", "False", "FALSE"):
        return text[0] in "tT"
    if tag == _INT_TAG and _DECIMAL_INT.fullmatch(text):
        return int(text)
    if tag == _FLOAT_TAG:
        special = _SPECIAL_FLOATS.get(text)
        if special is not None:
            return special
        if _DECIMAL_FLOAT.fullmatch(text):
            return float(text)
    raise _OutsideSubset(text)


def _build(parser: Any, spans: list[tuple[int, int]] | None) -> Any:
    """Plain data from the parser's events; ``_OutsideSubset`` for anything beyond the subset.

    With ``spans``, the character spans of quoted and literal scalars' contents are collected
    into it (for the tab check in :func:`load_plain_fast`).
    """
    # Each open collection: [container, pending key or _NO_KEY]; a mapping alternates keys
    # and values, a sequence only takes values.
    stack: list[list[Any]] = []
    root: Any = None
    documents = 0
    no_key = stack  # a sentinel no key can equal
    plain: dict[str, Any] = {}

    def add(value: Any) -> None:
        nonlocal root
        if not stack:
            root = value
            return
        frame = stack[-1]
        container = frame[0]
        if type(container) is list:
            container.append(value)
        elif frame[1] is no_key:
            if type(value) is not str or value in container:
                raise _OutsideSubset("key")
            frame[1] = value
        else:
            container[frame[1]] = value
            frame[1] = no_key

    while True:
        event = parser.get_event()
        kind = type(event)
        if kind is ScalarEvent:
            if event.anchor is not None or event.tag is not None:
                raise _OutsideSubset("anchor or tag")
            text = event.value
            style = event.style
            if style:
                if style == ">":
                    raise _OutsideSubset("folded scalar")  # the readers fold edge cases apart
                if spans is not None:
                    spans.append((event.start_mark.index, event.end_mark.index))
                add(text)
            else:  # keys and short values repeat: type each spelling once
                value = plain.get(text, plain)
                if value is plain:
                    value = plain[text] = _plain_value(text)
                add(value)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if event.anchor is not None or event.tag is not None:
                raise _OutsideSubset("anchor or tag")
            container: Any = {} if kind is MappingStartEvent else []
            add(container)  # a collection is never a key: a complex key leaves the subset
            stack.append([container, no_key])
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            stack.pop()
        elif kind is AliasEvent:
            raise _OutsideSubset("alias")
        elif kind is DocumentStartEvent:
            documents += 1
            if documents > 1 or event.version is not None or event.tags:
                raise _OutsideSubset("directives or several documents")
        elif kind is StreamEndEvent:
            return root


def load_plain_fast(text: str) -> Any | None:
    """Plain data for one YAML document, or ``None``: read it with ruamel instead.

    ``None`` is also the answer for a document whose data *is* null (empty, or ``~``): the
    reference reader gives those their proper message.
    """
    if CBaseLoader is None or _OUTSIDE_CHARACTERS.search(text, 1 if text[:1] == "\ufeff" else 0):
        return None
    spans: list[tuple[int, int]] | None = [] if "\t" in text else None
    try:
        # The base loader only for its libyaml event stream (``get_event``): nothing is
        # constructed or resolved by PyYAML.
        data = _build(CBaseLoader(text), spans)
    except (_OutsideSubset, YAMLError, RecursionError):
        return None
    if spans is not None and not _tabs_inside(text, spans):
        return None
    return data if isinstance(data, dict) else None


def _tabs_inside(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether every tab sits inside a quoted or literal scalar (ruamel refuses others)."""
    spans.sort()
    starts = [start for start, _ in spans]
    for match in _TAB.finditer(text):
        position = match.start()
        index = bisect.bisect_right(starts, position) - 1
        if index < 0:
            return False
        start, end = spans[index]
        # A literal block's header line is not content: ruamel refuses a tab there.
        content_start = text.find("\n", start, end) if text[start] == "|" else start
        if not content_start < position < end:
            return False
    return True

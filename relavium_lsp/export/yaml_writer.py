r"""A small, fast YAML writer that produces exactly the bytes of :func:`yaml_io.dump_ruamel`.

The export format's rules live in :mod:`relavium_lsp.export.yaml_io`: sorted keys, block
style, ``indent(mapping=2, sequence=4, offset=2)``, unlimited width, and a per-string choice of
scalar style. ruamel.yaml applies them through its pure-Python representer → serializer →
emitter pipeline, which costs seconds for a long session (≈ 3 µs per character of output).
This module walks the same plain data (dicts, lists, str, int, float, bool, None) once and
writes the same text directly: the emitter's decisions for this subset are reproduced with a
few regular expressions instead of a per-character state machine.

Where the emitter's output gets subtle — a key ruamel would write as a complex ``? key``
(multi-line or long), a non-string key, a float whose text a reader would not take back as
a float, any type outside JSON's — :class:`Unsupported` is raised and the caller falls back
to ruamel itself, so the bytes never depend on which path wrote them. The differential tests
(``tests/unit/export/test_yaml_writer.py``) compare both paths on generated data.

What the emitter does, for the record (ruamel.yaml 0.18-0.19, ``emitter.py``):

- ``analyze_scalar`` decides which styles a string allows (plain needs no leading/trailing
  space, no line break, no character outside YAML's printable set, no indicator such as a
  leading ``-``/``?``/``:`` followed by a space, ``: ``, `` #``, a leading ``[{&*!|>'"%@``…);
- ``choose_scalar_style`` combines that with the style the representer asked for
  (``_represent_str`` in ``yaml_io``: ``"`` for text a block cannot hold, ``|`` for other
  multi-line text, ``'`` for text another reader would type, else none);
- a literal block's content sits two columns deeper than its key (or its dash); its header
  carries an indentation indicator when the text starts with a space or a break, and ``-`` or
  ``+`` chomping; a document whose last scalar is a ``|+`` block ends with ``...``;
- a sequence under a key puts its dash two columns deeper than the key and the item four; a
  sequence directly inside a sequence starts on the dash's line (``-   - x``); empty
  collections are written in flow style (``[]``, ``{}``).
"""

from __future__ import annotations

import re
from typing import Any

from relavium_lsp.export.yaml_scalars import looks_like_another_type, resolves_as

# Characters a literal block may hold verbatim (kept in step with yaml_io._BLOCK_SAFE).
_BLOCK_SAFE = re.compile(
    "[\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*"
)
# analyze_scalar's "special characters": outside YAML's printable set (with allow_unicode).
_SPECIAL = "[^\n\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
_BREAK = "[\n\x85\u2028\u2029]"
_WHITESPACE = "[\0 \t\r\n\x85\u2028\u2029]"
# Anything that rules out a plain scalar in block context, apart from a leading or trailing
# space: a special character, a line break, or one of analyze_scalar's block indicators.
_NOT_PLAIN = re.compile(
    f"{_SPECIAL}|{_BREAK}"
    r"|\A(?:---|\.\.\.)"
    "|\\A[#,\\[\\]{}&*!|>'\"%@`]"
    f"|\\A[?\\-](?={_WHITESPACE}|\\Z)"
    f"|:(?={_WHITESPACE}|\\Z)"
    f"|(?<={_WHITESPACE})#"
)
# What rules out single quotes: a special character, or a space next to a line break.
_NOT_SINGLE = re.compile(f"{_SPECIAL}|{_BREAK} | {_BREAK}")
# Most strings are short printable ASCII that no rule above touches: recognise them at once.
_SIMPLE_PLAIN = re.compile(r"[0-9A-Za-z_/(][\x20-\x22\x24-\x39\x3b-\x7e]*")
# Double-quoted scalars: what must be escaped, and how (emitter.write_double_quoted).
_NEEDS_ESCAPE = re.compile(
    '["\\\\\x85\u2028\u2029\ufeff]|[^\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]'
)
_ESCAPES = {
    "\0": "0",
    "\x07": "a",
    "\x08": "b",
    "\t": "t",
    "\n": "n",
    "\x0b": "v",
    "\x0c": "f",
    "\r": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\xa0": "_",
    "\u2028": "L",
    "\u2029": "P",
}
# Past this length (plus the 5 characters of the implicit ``!!str`` tag the emitter counts)
# ruamel writes a key as ``? key``; stay well clear of the boundary and let ruamel do it.
_MAX_SIMPLE_KEY = 100
_FLOAT_TAG = "tag:yaml.org,2002:float"
_INFINITY = float("inf")


class Unsupported(Exception):  # a signal to fall back, not an error
    """The data holds something this writer does not reproduce; use ruamel instead."""


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    short = _ESCAPES.get(character)
    if short is not None:
        return "\\" + short
    code = ord(character)
    if code <= 0xFF:
        return f"\\x{code:02X}"
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"


def _double_quoted(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _single_quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _plain_allowed(text: str) -> bool:
    return text[0] != " " and text[-1] != " " and _NOT_PLAIN.search(text) is None


def _inline_style(text: str, requested: str | None) -> str:
    """The one-line rendering of a string the representer did not send to a literal block."""
    if requested == '"':
        return _double_quoted(text)
    if requested is None:
        if text == "":
            return "''"
        if _plain_allowed(text):
            return text
        if "'" in text or "\n" in text:
            return _double_quoted(text)
    if _NOT_SINGLE.search(text) is None:
        return _single_quoted(text)
    return _double_quoted(text)


def _requested_style(text: str) -> str | None:
    """What ``yaml_io._represent_str`` asks the emitter for."""
    if not _BLOCK_SAFE.fullmatch(text):
        return '"'
    if "\n" in text:
        return "|"
    if looks_like_another_type(text):
        return "'"
    return None


def _literal(text: str, indent: int) -> tuple[str, bool]:
    """A literal block for ``text`` with content at ``indent``; and whether it keeps breaks."""
    hints = "2" if text[0] in " \n" else ""
    keep = False
    if text[-1] != "\n":
        hints += "-"
    elif len(text) == 1 or text[-2] == "\n":
        hints += "+"
        keep = True
    pad = " " * indent
    body = "\n".join(pad + line if line else "" for line in text.split("\n"))
    if text[-1] != "\n":
        body += "\n"
    return f" |{hints}\n{body}", keep


class _Writer:
    """One document's worth of output, plus per-document memo of rendered strings."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.open_ended = False  # the last scalar written was a ``|+`` block
        self._keys: dict[str, str] = {}
        self._inline: dict[str, str | None] = {}

    def key(self, key: object) -> str:
        if type(key) is not str:
            raise Unsupported("non-string key")
        rendered = self._keys.get(key)
        if rendered is None:
            if len(key) > _MAX_SIMPLE_KEY or re.search(_BREAK, key):
                raise Unsupported("complex key")
            if _SIMPLE_PLAIN.fullmatch(key) and key[-1] != " ":
                rendered = f"'{key}'" if looks_like_another_type(key) else key
            else:
                rendered = _inline_style(key, _requested_style(key))
            self._keys[key] = rendered
        return rendered

    def scalar(self, value: object, indent: int) -> str:
        """A scalar value and its line end; block content (if any) sits at ``indent``."""
        self.open_ended = False
        kind = type(value)
        if kind is str:
            return self.string(value, indent)  # type: ignore[arg-type]
        if value is None:
            return " null\n"
        if kind is bool:
            return " true\n" if value else " false\n"
        if kind is int:
            return f" {value}\n"
        if kind is float:
            return f" {_float_text(value)}\n"  # type: ignore[arg-type]
        raise Unsupported(f"type {kind.__name__}")

    def string(self, text: str, indent: int) -> str:
        cached = self._inline.get(text, "")
        if cached:
            return cached
        if cached is None:  # known to need a literal block, whose indent varies
            block, self.open_ended = _literal(text, indent)
            return block
        if _SIMPLE_PLAIN.fullmatch(text) and text[-1] != " ":
            rendered = f" '{text}'\n" if looks_like_another_type(text) else f" {text}\n"
        else:
            requested = _requested_style(text)
            if requested == "|":
                self._inline[text] = None
                block, self.open_ended = _literal(text, indent)
                return block
            rendered = f" {_inline_style(text, requested)}\n"
        self._inline[text] = rendered
        return rendered

    def mapping(self, mapping: dict[Any, Any], indent: int, inline: bool) -> None:
        """Keys in code-point order at ``indent``; the first continues the line if ``inline``."""
        out = self.out
        pad = " " * indent
        try:
            keys = sorted(mapping)
        except TypeError:
            raise Unsupported("unsortable keys") from None
        for position, key in enumerate(keys):
            if position or not inline:
                out.append(pad)
            out.append(self.key(key))
            out.append(":")
            self.value(mapping[key], indent)

    def sequence(self, items: list[Any] | tuple[Any, ...], dash: int, inline: bool) -> None:
        """Items with their dash at column ``dash``; the first continues the line if ``inline``."""
        out = self.out
        pad = " " * dash
        for position, item in enumerate(items):
            if position or not inline:
                out.append(pad)
            out.append("-")
            if isinstance(item, dict) and item:
                self.open_ended = False
                out.append(" ")
                self.mapping(item, dash + 2, inline=True)
            elif isinstance(item, list | tuple) and item:
                self.open_ended = False
                out.append("   ")
                self.sequence(item, dash + 4, inline=True)
            else:
                out.append(self.flow_or_scalar(item, dash + 2))

    def value(self, value: object, indent: int) -> None:
        """What follows ``key:`` for a key at column ``indent``."""
        if isinstance(value, dict) and value:
            self.open_ended = False
            self.out.append("\n")
            self.mapping(value, indent + 2, inline=False)
        elif isinstance(value, list | tuple) and value:
            self.open_ended = False
            self.out.append("\n")
            self.sequence(value, indent + 2, inline=False)
        else:
            self.out.append(self.flow_or_scalar(value, indent + 2))

    def flow_or_scalar(self, value: object, indent: int) -> str:
        if isinstance(value, dict):  # empty (non-empty ones are handled by the callers)
            self.open_ended = False
            return " {}\n"
        if isinstance(value, list | tuple):
            self.open_ended = False
            return " []\n"
        return self.scalar(value, indent)


def _float_text(value: float) -> str:
    """``SafeRepresenter.represent_float`` for YAML 1.2, refusing text that would not read back."""
    if value != value:
        return ".nan"
    if value == _INFINITY:
        return ".inf"
    if value == -_INFINITY:
        return "-.inf"
    text = repr(value).lower()
    if not resolves_as(text, _FLOAT_TAG):
        raise Unsupported("float text that reads back as another type")
    return text


def write_yaml(data: dict[str, Any]) -> str:
    """The document ruamel would write for ``data`` (see :mod:`.yaml_io`); or Unsupported."""
    if type(data) is not dict:
        raise Unsupported("the document must be a mapping")
    if not data:
        return "{}\n"
    writer = _Writer()
    writer.mapping(data, 0, inline=False)
    if writer.open_ended:
        writer.out.append("...\n")
    return "".join(writer.out)

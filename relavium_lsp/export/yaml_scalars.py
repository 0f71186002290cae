"""How YAML readers type a plain scalar: shared by the ruamel emitter setup and the fast paths.

ruamel's ``VersionedResolver.resolve`` finds a plain scalar's tag by its first character and
a short list of regular expressions; going through it costs ≈ 40 µs a call (version lookups,
tag objects). The same tables, read once from ruamel at import, answer in well under 1 µs.
``tests/unit/export/test_yaml_scalars.py`` checks the two agree.
"""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml.resolver import VersionedResolver

STR_TAG = "tag:yaml.org,2002:str"
NULL_TAG = "tag:yaml.org,2002:null"

_Table = dict[str, tuple[tuple[str, re.Pattern[str]], ...]]


def _table(version: tuple[int, int]) -> _Table:
    resolver: Any = VersionedResolver(version=version)
    return {
        # ruamel wraps its patterns in a lazy proxy; compile the real thing once here.
        first: tuple(
            (str(tag), re.compile(regexp.pattern, regexp.flags)) for tag, regexp in entries
        )
        for first, entries in resolver.versioned_resolver.items()
    }


# Both readers a document may meet: YAML 1.1 (yes/on/sexagesimal…) and YAML 1.2 — the one
# ruamel reads and writes by default.
_YAML_11 = _table((1, 1))
_YAML_12 = _table((1, 2))
_TYPED_FIRST_CHARACTERS = frozenset(_YAML_11) | frozenset(_YAML_12)


def _resolve(table: _Table, text: str) -> str:
    for tag, regexp in table.get(text[:1], ()):
        if regexp.match(text):
            return tag
    return STR_TAG


def looks_like_another_type(text: str) -> bool:
    """Whether a plain scalar ``text`` would be read back as something other than a string."""
    if text[:1] not in _TYPED_FIRST_CHARACTERS:
        return False
    return _resolve(_YAML_11, text) != STR_TAG or _resolve(_YAML_12, text) != STR_TAG


def plain_tag(text: str, version: tuple[int, int] = (1, 2)) -> str:
    """The tag a YAML reader (1.2, ruamel's default, unless asked) gives plain ``text``."""
    return _resolve(_YAML_12 if version == (1, 2) else _YAML_11, text)


def resolves_as(text: str, tag: str) -> bool:
    """Whether the plain scalar ``text`` reads back (YAML 1.2) with ``tag``."""
    return plain_tag(text) == tag

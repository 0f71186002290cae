"""Start-up without recompiling the methods attrs generates (issue 25, cold start).

Importing ``lsprotocol.types`` — most of any pygls server's start — defines about 575 attrs
classes, and for each one attrs writes the source of its ``__init__``, ``__eq__``,
``__repr__``… and passes it to ``compile()``: about 550 compilations, some 40 % of the CPU the
import takes. The source attrs writes depends only on the class definitions (the same
lsprotocol and attrs give the same text), and ``compile()`` of the same text, file name,
mode, flags and optimisation level by the same interpreter gives the same code object, which
``marshal`` stores exactly (that is what a ``.pyc`` file is).

:func:`attrs_code_cache` keeps those code objects in one file under the relavium home and,
while it is active, answers attrs' ``compile()`` calls from it (a module global in
``attr._make`` shadowing the builtin for attrs alone). attrs still does everything else —
builds the classes, executes each code object in its own namespace, fills ``linecache`` for
debuggers; only the compilation is skipped. A text not in the file is compiled as always.

The file is written the first time (or when more than a tenth of the lookups missed, say
after an upgrade), with what that start used, so it never grows past one start's worth —
unless Python was told not to write bytecode (``PYTHONDONTWRITEBYTECODE``, ``-B``). It
holds executable code, like a ``.pyc``: it is only read when the current user owns it and
nobody else can write it, in the private home directory; anything unreadable or damaged
counts as no cache.
"""

from __future__ import annotations
import __future__

import importlib.util
import marshal
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from relavium_lsp.paths import ensure_private_dir

CACHE_DIR_NAME = "cache"
# Rewrite the file when more than this fraction of the lookups missed (first start, upgrade).
REWRITE_MISS_FRACTION = 0.1

# (mode, file name, source, compiler flags, optimisation level): what compile() depends on.
Key = tuple[str, str, str, int, int]


def code_cache_path(home: Path) -> Path:
    """The cache file for this interpreter (bytecode version and ``-O`` level in the name)."""
    tag = f"{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}"
    return home / CACHE_DIR_NAME / f"attrs-code-{tag}-O{sys.flags.optimize}.marshal"


def future_flags(namespace: dict[str, Any]) -> int:
    """The compiler flags of the ``from __future__`` imports in a module's namespace.

    ``compile()`` called from that module inherits them; called from here on its behalf it
    must be given them explicitly (with ``dont_inherit``), or the code would differ.
    """
    flags = 0
    for value in namespace.values():
        if isinstance(value, __future__._Feature):
            flags |= value.compiler_flag
    return flags


@dataclass
class CachedCompile:
    """A ``compile()`` for one module that answers from ``table`` when it can."""

    table: dict[Key, CodeType]
    inherited_flags: int
    used: dict[Key, CodeType] = field(default_factory=dict)
    lookups: int = 0
    misses: int = 0

    def __call__(
        self,
        source: Any,
        filename: Any,
        mode: str,
        flags: int = 0,
        dont_inherit: bool = False,
        optimize: int = -1,
        **rest: Any,
    ) -> Any:
        """``compile()``'s signature; a cached code object when the table has this text."""
        effective = flags if dont_inherit else flags | self.inherited_flags
        if rest or not isinstance(source, str) or not isinstance(filename, str):
            # Not what attrs passes (ASTs, bytes, _feature_version): compile as always.
            return compile(source, filename, mode, effective, True, optimize, **rest)
        key = (mode, filename, source, effective, optimize)
        self.lookups += 1
        code = self.table.get(key)
        if type(code) is not CodeType:
            self.misses += 1
            code = compile(source, filename, mode, effective, True, optimize)
        self.used[key] = code
        return code


def load_table(path: Path) -> dict[Key, CodeType]:
    """The stored code objects, or none when the file is missing, foreign or damaged."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    try:
        facts = os.fstat(descriptor)
        # Executable code: only ours, and only if nobody else could have written it.
        if not stat.S_ISREG(facts.st_mode) or facts.st_uid != os.getuid():
            return {}
        if facts.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return {}
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            table = marshal.loads(handle.read())  # noqa: S302 - our own 0600 file, as above
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    finally:
        os.close(descriptor)
    return table if isinstance(table, dict) else {}


def save_table(path: Path, table: dict[Key, CodeType]) -> None:
    """Replace the file atomically (0600, in a private directory); failures are ignored."""
    import tempfile  # only when writing: it pulls in random and hashlib (cold start)

    try:
        ensure_private_dir(path.parent)
        descriptor, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError:
        return
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(marshal.dumps(table))
        os.replace(temp_name, path)
    except (OSError, ValueError):
        Path(temp_name).unlink(missing_ok=True)


@contextmanager
def attrs_code_cache(path: Path, *, write: bool | None = None) -> Iterator[CachedCompile | None]:
    """While active, attrs' generated methods come from the cache file at ``path``.

    Yields the :class:`CachedCompile` in use (its counters), or None when another cache is
    already active (nested use changes nothing). ``write`` (default: unless Python was told
    not to write bytecode, ``PYTHONDONTWRITEBYTECODE`` / ``-B``) allows (re)writing the file.
    """
    if write is None:
        write = not sys.dont_write_bytecode
    import attr._make as make  # attrs itself is light; lsprotocol imports it anyway

    if "compile" in vars(make):
        yield None
        return
    cached = CachedCompile(load_table(path), future_flags(vars(make)))
    _shadow_compile(make, cached)
    try:
        yield cached
    finally:
        delattr(make, "compile")
        if write and cached.misses > REWRITE_MISS_FRACTION * cached.lookups:
            save_table(path, cached.used)


def _shadow_compile(module: ModuleType, replacement: CachedCompile) -> None:
    # A module global named ``compile`` is found before the builtin by that module's code.
    setattr(module, "compile", replacement)  # noqa: B010 - mypy cannot see a new global

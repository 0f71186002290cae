"""``commands.code_cache``: attrs' generated methods from a file, identical to compiling them.

Behaviour only (issue 25, cold start; the saving is measured in ``bench.lsp``): a class
built with the cache behaves like one built without it, the code objects are the ones
``compile()`` gives, the second start compiles nothing, and a file someone else could have
written — or a damaged one — is never used.
"""

from __future__ import annotations
import __future__

import os
import stat
from pathlib import Path

import attr._make
import attrs
import pytest

from relavium_lsp.commands.code_cache import (
    CachedCompile,
    attrs_code_cache,
    code_cache_path,
    future_flags,
    load_table,
    save_table,
)


def _define() -> type:
    @attrs.define
    class Point:
        x: int
        y: int = 0
        tags: list[str] = attrs.field(factory=list)

    return Point


def test_a_second_start_compiles_nothing_and_builds_the_same_class(tmp_path: Path) -> None:
    path = code_cache_path(tmp_path)
    with attrs_code_cache(path, write=True) as first:
        built_first = _define()
    assert first is not None and first.lookups > 0 and first.misses == first.lookups
    assert path.exists() and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700

    with attrs_code_cache(path, write=True) as second:
        built_second = _define()
    assert second is not None and second.lookups == first.lookups and second.misses == 0
    for point_class in (built_first, built_second):
        point = point_class(1, tags=["a"])
        assert (point.x, point.y, point.tags) == (1, 0, ["a"])
        assert point == point_class(1, 0, ["a"]) and point != point_class(2)
        assert repr(point) == "Point(x=1, y=0, tags=['a'])"
    assert "compile" not in vars(attr._make)  # the builtin is attrs' compile() again


def test_cached_code_is_what_compile_gives_with_the_callers_future_flags() -> None:
    annotations = __future__.annotations.compiler_flag
    source = "def f(value: NotDefinedAnywhere) -> None:\n    return None\n"
    cached = CachedCompile({}, inherited_flags=annotations)
    code = cached(source, "<probe>", "exec")
    assert code == compile(source, "<probe>", "exec", annotations, True)
    namespace: dict[str, object] = {}
    exec(code, namespace)  # postponed annotations: the undefined name is never evaluated
    assert cached.lookups == cached.misses == 1
    plain = compile(source, "<probe>", "exec", 0, True)  # without the flag it would fail
    with pytest.raises(NameError):
        exec(plain, {})
    assert future_flags(vars(attr._make)) & annotations  # attrs' own module uses it


def test_a_full_cache_is_not_rewritten(tmp_path: Path) -> None:
    path = code_cache_path(tmp_path)
    with attrs_code_cache(path, write=True):
        _define()
    os.utime(path, (0, 0))
    with attrs_code_cache(path, write=True):
        _define()
    assert path.stat().st_mtime == 0


def test_nested_use_changes_nothing(tmp_path: Path) -> None:
    path = code_cache_path(tmp_path)
    with attrs_code_cache(path, write=True) as outer:
        with attrs_code_cache(tmp_path / "other.marshal", write=True) as inner:
            _define()
        assert inner is None and outer is not None and outer.lookups > 0
        assert "compile" in vars(attr._make)
    assert not (tmp_path / "other.marshal").exists()


def test_a_file_others_could_write_or_a_damaged_one_is_no_cache(tmp_path: Path) -> None:
    path = code_cache_path(tmp_path)
    with attrs_code_cache(path, write=True):
        _define()
    assert load_table(path)
    os.chmod(path, 0o620)  # group-writable: someone else could have put code in it
    assert load_table(path) == {}
    os.chmod(path, 0o600)
    link = tmp_path / "link.marshal"
    link.symlink_to(path)
    assert load_table(link) == {}
    path.write_bytes(b"\x00not marshal data")
    assert load_table(path) == {}
    assert load_table(tmp_path / "missing.marshal") == {}
    with attrs_code_cache(
        path, write=True
    ) as cached:  # damaged: compiled as always, then rewritten
        point = _define()(3)
    assert point.x == 3 and cached is not None and cached.misses == cached.lookups
    assert load_table(path)


def test_an_unwritable_home_only_costs_the_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "home"
    blocker.write_text("a file where the cache directory would go", encoding="utf-8")
    save_table(blocker / "cache" / "attrs.marshal", {})  # no exception
    with attrs_code_cache(blocker / "cache" / "attrs.marshal", write=True):
        assert _define()(5).x == 5


def test_nothing_is_written_when_python_writes_no_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.dont_write_bytecode", True)
    path = code_cache_path(tmp_path)
    with attrs_code_cache(path) as cached:
        _define()
    assert cached is not None and cached.misses > 0 and not path.exists()

"""search_files and find_files through the registry, on ripgrep and on the Python fallback.

Every behaviour test runs on both engines: ``rg`` (the binary the ``ripgrep`` wheel installs)
and the pure-Python worker that stands in when no binary is found.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.tools import rg as ripgrep
from relavium_lsp.tools.base import ToolLimits
from relavium_lsp.tools.registry import default_registry

SECRET = "TOPSECRET-outside"
ENGINES = ["rg", "python"]


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(ripgrep, "find_rg", lambda: None)
    else:
        assert ripgrep.find_rg() is not None, "the ripgrep wheel is a dependency"
    return str(request.param)


def test_the_ripgrep_binary_is_found_beside_the_interpreter(monkeypatch, tmp_path) -> None:
    ripgrep.find_rg.cache_clear()
    try:
        found = ripgrep.find_rg()
        assert found is not None and Path(found).name == "rg"
        monkeypatch.setenv(ripgrep.RG_ENV, "")
        ripgrep.find_rg.cache_clear()
        assert ripgrep.find_rg() is None  # an empty override turns ripgrep off
        monkeypatch.setenv(ripgrep.RG_ENV, str(tmp_path / "missing-rg"))
        ripgrep.find_rg.cache_clear()
        assert ripgrep.find_rg() is None
        monkeypatch.setenv(ripgrep.RG_ENV, found)
        ripgrep.find_rg.cache_clear()
        assert ripgrep.find_rg() == found
    finally:
        monkeypatch.delenv(ripgrep.RG_ENV, raising=False)
        ripgrep.find_rg.cache_clear()


def _big_workspace(harness, files: int = 5_000) -> Path:
    """``files`` source files, an ignored build tree, a protected folder, links outside."""
    ws = harness.workspace
    for index in range(files):
        package = ws / "src" / f"pkg{index // 100:02d}"
        package.mkdir(parents=True, exist_ok=True)
        body = f"def helper_{index}(value):\n    return value + {index}\n"
        if index == 4_321:
            body += "\nclass UniqueSymbolXyz:\n    pass\n"
        (package / f"mod{index:04d}.py").write_text(body)
    (ws / ".gitignore").write_text("build/\n*.log\n")
    (ws / ".ignore").write_text("vendor/\n")
    for ignored in ("build", "vendor"):
        (ws / ignored).mkdir()
        (ws / ignored / "copy.py").write_text("class UniqueSymbolXyz:  # ignored copy\n")
    (ws / "debug.log").write_text("UniqueSymbolXyz in a log\n")
    (ws / "private").mkdir()
    (ws / "private" / "state.py").write_text("class UniqueSymbolXyz:  # protected\n")
    (harness.outside / "leak.py").write_text(f"class UniqueSymbolXyz:  # {SECRET}\n")
    (ws / "linked_dir").symlink_to(harness.outside)
    (ws / "linked_file.py").symlink_to(harness.outside / "leak.py")
    return ws


async def test_search_finds_a_symbol_among_5000_files_skipping_ignored_and_out_of_scope(
    harness, engine
) -> None:
    ws = _big_workspace(harness)
    ctx = harness.context()
    ctx.protected_paths = (ws / "private",)
    outcome = await harness.call("search_files", {"pattern": "class UniqueSymbolXyz"}, ctx)
    assert not outcome.is_error, outcome.result
    assert outcome.result.splitlines()[0] == "src/pkg43/mod4321.py:4: class UniqueSymbolXyz:"
    assert "[1 match in 1 file in ." in outcome.result
    for absent in ("build/", "vendor/", "debug.log", "private/", "linked", SECRET):
        assert absent not in outcome.result
    # Ignored files are still reachable on request, out-of-scope ones never are.
    everything = await harness.call(
        "search_files", {"pattern": "UniqueSymbolXyz", "includeIgnored": True}, ctx
    )
    assert {"build/copy.py", "vendor/copy.py", "debug.log"} <= _paths(everything.result)
    assert "private/" not in everything.result and SECRET not in everything.result
    found = await harness.call("find_files", {"pattern": "mod432*.py"}, ctx)
    assert found.result.splitlines()[:2] == ["src/pkg43/mod4320.py", "src/pkg43/mod4321.py"]
    assert "[10 files matching 'mod432*.py' in .]" in found.result


def _paths(result: str) -> set[str]:
    return {line.split(":", 1)[0] for line in result.splitlines() if ":" in line}


async def test_a_symlink_out_of_scope_is_never_followed(harness, engine) -> None:
    ws = harness.workspace
    (harness.outside / "secret.txt").write_text(f"needle {SECRET}\n")
    (harness.outside / "nested").mkdir()
    (harness.outside / "nested" / "deep.txt").write_text(f"needle {SECRET}\n")
    (ws / "out").symlink_to(harness.outside)
    (ws / "out_file.txt").symlink_to(harness.outside / "secret.txt")
    (ws / "inside.txt").write_text("needle inside\n")
    for args in ({"pattern": "needle"}, {"pattern": "needle", "includeIgnored": True}):
        outcome = await harness.call("search_files", args)
        assert outcome.result.splitlines()[0] == "inside.txt:1: needle inside"
        assert SECRET not in outcome.result and "out" not in _paths(outcome.result)
    listed = await harness.call("find_files", {"pattern": "*.txt"})
    assert listed.result.splitlines()[0] == "inside.txt"
    assert "out" not in listed.result.replace("[1 file", "")
    for path in ("out", "out_file.txt", "out/nested"):
        denied = await harness.call("search_files", {"pattern": "needle", "path": path})
        assert denied.error_code == "tool_denied"
        assert SECRET not in denied.result
    denied = await harness.call("find_files", {"pattern": "*", "path": "out"})
    assert denied.error_code == "tool_denied"


async def test_search_options_literal_regex_case_context_and_output(harness, engine) -> None:
    ws = harness.workspace
    (ws / "a.py").write_text("import os\nneedle = 1\nx = 2\ny = 3\nz = 4\nNeedle(2)\n")
    (ws / "b.txt").write_text("no match\nNEEDLE upper\n")
    (ws / "data.bin").write_bytes(b"needle\x00\x00")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("needle in git\n")
    (ws / ".hidden").mkdir()
    (ws / ".hidden" / "conf.txt").write_text("needle hidden\n")
    plain = await harness.call("search_files", {"pattern": "needle"})
    assert plain.result.splitlines()[:2] == [
        ".hidden/conf.txt:1: needle hidden",
        "a.py:2: needle = 1",
    ]
    assert "data.bin" not in plain.result and ".git/" not in plain.result
    literal = await harness.call("search_files", {"pattern": "Needle(2)"})
    assert literal.result.startswith("a.py:6: Needle(2)")
    regex = await harness.call("search_files", {"pattern": "^N[A-Z]+", "isRegex": True})
    assert regex.result.startswith("b.txt:2: NEEDLE upper")
    insensitive = await harness.call("search_files", {"pattern": "needle", "case": "insensitive"})
    assert "[4 matches in 3 files in ." in insensitive.result
    smart_lower = await harness.call("search_files", {"pattern": "needle", "case": "smart"})
    assert "[4 matches in 3 files" in smart_lower.result
    smart_upper = await harness.call("search_files", {"pattern": "Needle", "case": "smart"})
    assert "[1 match in 1 file" in smart_upper.result
    context = await harness.call(
        "search_files",
        {"pattern": "needle", "case": "insensitive", "contextLines": 1, "glob": "*.py"},
    )
    assert context.result.splitlines()[:6] == [
        "a.py-1- import os",
        "a.py:2: needle = 1",
        "a.py-3- x = 2",
        "--",
        "a.py-5- z = 4",
        "a.py:6: Needle(2)",
    ]
    files = await harness.call(
        "search_files", {"pattern": "needle", "output": "files", "case": "insensitive"}
    )
    assert files.result.splitlines()[:3] == [".hidden/conf.txt", "a.py", "b.txt"]
    counts = await harness.call("search_files", {"pattern": "e", "output": "count", "glob": "a.py"})
    assert counts.result.splitlines()[0] == "a.py: 6"  # every match, not lines
    excluded = await harness.call("search_files", {"pattern": "needle", "glob": ["*", "!*.py"]})
    assert "a.py" not in excluded.result and ".hidden/conf.txt" in excluded.result
    one_file = await harness.call("search_files", {"pattern": "os", "path": "a.py"})
    assert one_file.result.startswith("a.py:1: import os")
    bad = await harness.call("search_files", {"pattern": "(", "isRegex": True})
    assert bad.error_code == "validation" and "invalid regular expression" in bad.result


async def test_search_from_a_subdirectory_names_paths_from_the_workspace(harness, engine) -> None:
    ws = harness.workspace
    (ws / "pkg" / "sub").mkdir(parents=True)
    (ws / "pkg" / "sub" / "m.py").write_text("target\n")
    (ws / "pkg" / ".gitignore").write_text("gen/\n")
    (ws / "pkg" / "gen").mkdir()
    (ws / "pkg" / "gen" / "g.py").write_text("target\n")
    outcome = await harness.call("search_files", {"pattern": "target", "path": "pkg"})
    assert outcome.result.splitlines()[0] == "pkg/sub/m.py:1: target"
    assert "gen" not in outcome.result
    found = await harness.call("find_files", {"pattern": "*.py", "path": "pkg"})
    assert found.result.splitlines()[0] == "pkg/sub/m.py"


async def test_search_and_find_are_capped_by_results_and_bytes(harness, engine) -> None:
    ws = harness.workspace
    (ws / "many.txt").write_text("hit\n" * 50)
    for index in range(30):
        (ws / f"f{index:02d}.md").write_text("hit\n")
    harness.registry = default_registry(limits=ToolLimits(search_max_matches=5))
    capped = await harness.call("search_files", {"pattern": "hit", "glob": "many.txt"})
    assert capped.result.count("many.txt:") == 5
    assert "stopped at the limit of 5 matches" in capped.result
    asked = await harness.call("search_files", {"pattern": "hit", "maxResults": 3, "glob": "*.txt"})
    assert asked.result.count("many.txt:") == 3
    harness.registry = default_registry(limits=ToolLimits(search_max_output_bytes=200))
    by_bytes = await harness.call("search_files", {"pattern": "hit", "glob": "many.txt"})
    assert "stopped at the 200-byte output limit" in by_bytes.result
    assert len(by_bytes.result) < 400
    harness.registry = default_registry(limits=ToolLimits(find_max_results=7))
    listed = await harness.call("find_files", {"pattern": "*.md"})
    assert len([line for line in listed.result.splitlines() if line.endswith(".md")]) == 7
    assert "stopped at the limit of 7 files" in listed.result


async def test_bad_arguments_are_validation_errors(harness) -> None:
    for name, args in (
        ("search_files", {"pattern": "x", "contextLines": 11}),
        ("search_files", {"pattern": "x", "case": "upper"}),
        ("search_files", {"pattern": "x", "glob": [""]}),
        ("find_files", {"pattern": "!*.py"}),
    ):
        outcome = await harness.call(name, args)
        assert outcome.error_code == "validation", (name, args, outcome.result)


async def test_catastrophic_regex_in_the_python_fallback_is_killed_at_the_timeout(
    harness, monkeypatch
) -> None:
    monkeypatch.setattr(ripgrep, "find_rg", lambda: None)
    harness.registry = default_registry(limits=ToolLimits(search_timeout_s=1.0))
    (harness.workspace / "evil.txt").write_text("a" * 60 + "!\n")
    outcome = await harness.call("search_files", {"pattern": "(a+)+$", "isRegex": True})
    assert outcome.is_error and "did not finish" in outcome.result


@pytest.mark.parametrize("mode", ["ask", "auto_edits", "never_ask"])
async def test_read_only_tools_never_ask_in_any_approval_mode(harness, mode) -> None:
    (harness.workspace / "a.py").write_text("needle\n")
    ctx = harness.context(approval=mode)
    for name, args in (
        ("search_files", {"pattern": "needle"}),
        ("find_files", {"pattern": "*.py"}),
        ("read_file", {"path": "a.py", "startLine": 1}),
        ("list_directory", {}),
    ):
        outcome = await harness.call(name, args, ctx)
        assert not outcome.is_error, (name, outcome.result)
    assert harness.host.requests == []
    assert harness.events_of("agent:approval_requested") == []

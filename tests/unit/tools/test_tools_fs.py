"""read_file / write_file / list_directory through the registry (search: test_tools_search)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from relavium_lsp.tools.base import ToolLimits
from relavium_lsp.tools.registry import default_registry

SECRET = "TOPSECRET-outside"


async def test_read_file_returns_disk_text_and_line_ranges(harness) -> None:
    (harness.workspace / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    outcome = await harness.call("read_file", {"path": "a.txt"})
    assert outcome.result == "one\ntwo\nthree\nfour\n"
    assert not outcome.is_error
    ranged = await harness.call("read_file", {"path": "a.txt", "startLine": 2, "endLine": 3})
    assert ranged.result == "two\nthree\n[lines 2-3 of 4]"
    tail = await harness.call("read_file", {"path": "a.txt", "startLine": 3, "endLine": 99})
    assert tail.result == "three\nfour\n[lines 3-4 of 4; end of file]"
    past = await harness.call("read_file", {"path": "a.txt", "startLine": 9})
    assert past.is_error and "only 4 lines" in past.result


async def test_read_file_prefers_the_open_buffer(harness) -> None:
    path = harness.workspace / "open.py"
    path.write_text("on disk\n")
    harness.host.buffers[path] = "unsaved editor text\n"
    outcome = await harness.call("read_file", {"path": "open.py"})
    assert outcome.result == "unsaved editor text\n"


async def test_read_file_refuses_binary_and_oversized_files(harness, tmp_path) -> None:
    (harness.workspace / "blob.bin").write_bytes(b"\x89PNG\x00\x00\x01")
    binary = await harness.call("read_file", {"path": "blob.bin"})
    assert binary.is_error and binary.error_code == "tool_failed"
    assert "binary" in binary.result
    (harness.workspace / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    assert "not UTF-8" in (await harness.call("read_file", {"path": "latin1.txt"})).result
    harness.registry = default_registry(limits=ToolLimits(read_max_bytes=100))
    (harness.workspace / "big.txt").write_text("x" * 101)
    big = await harness.call("read_file", {"path": "big.txt"})
    assert big.is_error and "read limit" in big.result


async def test_read_file_outside_is_denied_and_leaks_nothing(harness) -> None:
    (harness.outside / "secret.txt").write_text(SECRET)
    (harness.workspace / "escape").symlink_to(harness.outside / "secret.txt")
    for path in ("../outside/secret.txt", "escape", str(harness.outside / "secret.txt")):
        outcome = await harness.call("read_file", {"path": path})
        assert outcome.error_code == "tool_denied"
        assert SECRET not in outcome.result
    assert all(SECRET not in repr(event) for event in harness.events)
    results = harness.events_of("agent:tool_result")
    assert [event.error_code for event in results] == ["tool_denied"] * 3


async def test_write_file_goes_through_the_host_with_a_label(harness) -> None:
    ctx = harness.context(session_title="Fix the parser")
    outcome = await harness.call("write_file", {"path": "src/new.py", "content": "x = 1\n"}, ctx)
    assert not outcome.is_error, outcome.result
    assert (harness.workspace / "src" / "new.py").read_text() == "x = 1\n"
    assert "Created src/new.py" in outcome.result
    path, _, label = harness.host.writes[0]
    assert path == harness.workspace / "src" / "new.py"
    assert label == "Relavium: Fix the parser"
    replaced = await harness.call("write_file", {"path": "src/new.py", "content": "x = 2\n"})
    assert "Replaced" in replaced.result
    assert harness.host.writes[1][2] == "Relavium: session-1"


async def test_refused_editor_write_is_a_failure_and_disk_is_untouched(harness, make_host) -> None:
    existing = harness.workspace / "keep.txt"
    existing.write_text("original\n")
    host = make_host(refuse_writes=True)
    ctx = harness.context(host=host)
    outcome = await harness.call("write_file", {"path": "keep.txt", "content": "evil\n"}, ctx)
    assert outcome.is_error and outcome.error_code == "tool_failed"
    assert "refused" in outcome.result
    assert existing.read_text() == "original\n"
    fresh = await harness.call("write_file", {"path": "fresh.txt", "content": "x"}, ctx)
    assert fresh.is_error
    assert not (harness.workspace / "fresh.txt").exists()


async def test_write_is_revalidated_after_the_approval_wait(harness, make_host) -> None:
    (harness.workspace / "box").mkdir()
    host = make_host(hold=True)
    ctx = harness.context(host=host)
    task = asyncio.create_task(
        harness.call("write_file", {"path": "box/target.txt", "content": "pwned"}, ctx)
    )
    await host.asked.wait()
    # While the user is looking at the prompt, the directory becomes a symlink out.
    (harness.workspace / "box").rmdir()
    (harness.workspace / "box").symlink_to(harness.outside)
    assert host.release is not None
    host.release.set_result("approve")
    outcome = await task
    assert outcome.error_code == "tool_denied"
    assert not (harness.outside / "target.txt").exists()


async def test_write_into_git_directory_is_denied(harness) -> None:
    (harness.workspace / ".git" / "hooks").mkdir(parents=True)
    outcome = await harness.call(
        "write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}
    )
    assert outcome.error_code == "tool_denied"
    assert not (harness.workspace / ".git" / "hooks" / "pre-commit").exists()
    assert harness.host.requests == []


async def test_list_directory_is_bounded_and_never_follows_symlinks(harness) -> None:
    ws = harness.workspace
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "pkg" / "mod.py").write_text("pass\n")
    (ws / "README.md").write_text("hi\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref\n")
    (harness.outside / "secret.txt").write_text(SECRET)
    (ws / "out").symlink_to(harness.outside)
    shallow = await harness.call("list_directory", {})
    assert "README.md (3 bytes)" in shallow.result
    assert "src/" in shallow.result and "pkg" not in shallow.result
    assert ".git/ (skipped)" in shallow.result
    assert "out -> (symlink, not followed)" in shallow.result
    deep = await harness.call("list_directory", {"path": ".", "depth": 3})
    assert "src/pkg/mod.py (5 bytes)" in deep.result
    assert "secret.txt" not in deep.result and "HEAD" not in deep.result
    denied = await harness.call("list_directory", {"path": "out"})
    assert denied.error_code == "tool_denied"
    harness.registry = default_registry(limits=ToolLimits(list_max_entries=2))
    bounded = await harness.call("list_directory", {"depth": 3})
    assert "listing stopped after 2 entries" in bounded.result


def test_workspace_layout_is_real(harness) -> None:
    assert Path(harness.workspace).is_dir() and Path(harness.temp_dir).is_dir()

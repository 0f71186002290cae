"""What the client is shown about a call: titles, kinds, and locations only inside the jail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from relavium_lsp.acp.tool_calls import CallBook, CallRecord, describe_call
from relavium_lsp.tools.jail import ScopeRoots


@pytest.fixture
def roots(tmp_path: Path) -> ScopeRoots:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "a.py").write_text("x\n", encoding="utf-8")
    return ScopeRoots.build(workspace, "sandboxed", tmp_path / "tmp")


def test_file_tools_get_titles_kinds_and_resolved_locations(roots: ScopeRoots) -> None:
    workspace = roots.workspace
    read = describe_call("read_file", {"path": "src/a.py", "startLine": 3, "endLine": 9}, roots)
    assert (read.title, read.kind) == ("Read src/a.py (lines 3-9)", "read")
    assert [(loc.path, loc.line) for loc in read.locations] == [(str(workspace / "src/a.py"), 3)]
    write = describe_call("write_file", {"path": "src/new.py", "content": "SECRET"}, roots)
    assert (write.title, write.kind, write.target) == (
        "Write src/new.py",
        "edit",
        workspace / "src" / "new.py",
    )
    assert "SECRET" not in write.title
    listing = describe_call("list_directory", {}, roots)
    assert (listing.title, listing.kind) == ("List .", "read")
    search = describe_call("search_files", {"pattern": "needle", "path": "src"}, roots)
    assert (search.title, search.kind) == ("Search 'needle' in src", "search")
    find = describe_call("find_files", {"pattern": "*.py"}, roots)
    assert (find.title, find.kind) == ("Find '*.py' in .", "search")
    job = describe_call("terminal_start", {"command": ["npm", "run", "dev"]}, roots)
    assert (job.title, job.kind) == ("Start npm run dev (background)", "execute")
    kill = describe_call("terminal_kill", {"jobId": "t1"}, roots)
    assert (kill.title, kill.kind) == ("Stop terminal job t1", "execute")
    plan = describe_call("update_plan", {"plan": []}, roots)
    assert (plan.title, plan.kind) == ("Update the plan", "think")


@pytest.mark.parametrize(
    "path",
    ["../outside.txt", "/etc/passwd", "link/escape.txt", "/proc/self/environ", "~/x", "a\u202eb"],
)
def test_paths_the_jail_refuses_get_no_location(roots: ScopeRoots, path: str) -> None:
    outside = roots.workspace.parent / "outside"
    outside.mkdir(exist_ok=True)
    if not (roots.workspace / "link").exists():
        os.symlink(outside, roots.workspace / "link")
    description = describe_call("read_file", {"path": path}, roots)
    assert description.locations == () and description.target is None
    write = describe_call("write_file", {"path": ".git/config"}, roots)
    assert write.target is None


def test_other_tools_never_show_secrets_in_titles() -> None:
    http = describe_call(
        "http_request", {"url": "https://api.example.com/v1?token=abc123", "method": "post"}, None
    )
    assert (http.title, http.kind) == ("POST api.example.com", "fetch")
    run = describe_call("run_command", {"command": ["pytest", "-q", "a b"]}, None)
    assert (run.title, run.kind) == ("Run pytest -q 'a b'", "execute")
    commit = describe_call("git_commit", {"message": "Fix add\n\nlong body"}, None)
    assert (commit.title, commit.kind) == ("git commit: Fix add", "execute")
    assert describe_call("git_status", {}, None).kind == "read"
    assert describe_call("mystery", {}, None).kind == "other"
    long = describe_call("run_command", {"command": ["echo", "x" * 500]}, None)
    assert len(long.title) == 200 and long.title.endswith("…")


def test_the_book_tracks_calls_per_session() -> None:
    book = CallBook()
    for session_id, call_id in (("a", "1"), ("a", "2"), ("b", "1")):
        book.open(
            CallRecord(
                session_id=session_id,
                call_id=call_id,
                tool="t",
                args={},
                description=describe_call("t", {}, None),
            )
        )
    assert book.get("a", "1") is not None and book.get("b", "2") is None
    assert book.close("a", "1") is not None and book.close("a", "1") is None
    book.forget_session("a")
    assert len(book) == 1 and book.get("b", "1") is not None

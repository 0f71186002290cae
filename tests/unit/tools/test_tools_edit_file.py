"""edit_file through the registry: exact replacements on the editor's text, a diff to approve."""

from __future__ import annotations

import asyncio

from relavium_lsp.log_secrets import register_secret
from relavium_lsp.tools.host import ApprovalRequest

SOURCE = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n"


def edit(path: str, *pairs: tuple[str, str], replace_all: bool = False) -> dict[str, object]:
    return {
        "path": path,
        "edits": [{"old": old, "new": new, "replaceAll": replace_all} for old, new in pairs],
    }


async def test_several_replacements_on_an_unsaved_buffer(harness) -> None:
    path = harness.workspace / "app.py"
    path.write_text("on disk\n")
    harness.host.buffers[path] = SOURCE
    outcome = await harness.call(
        "edit_file", edit("app.py", ("a - b", "a + b"), ("add(2, 3)", "add(2, 4)"))
    )
    assert not outcome.is_error, outcome.result
    assert outcome.result == "Edited app.py: 2 replacements (+2 -2 lines)."
    [(written, text, _)] = harness.host.writes
    assert written == path
    assert text == "def add(a, b):\n    return a + b\n\n\nprint(add(2, 4))\n"
    [request] = harness.host.requests
    assert isinstance(request, ApprovalRequest) and request.change is not None
    diff = request.change.diff
    assert "-    return a - b\n+    return a + b\n" in diff.unified
    assert (diff.stat.added, diff.stat.removed) == (2, 2)
    [event] = harness.events_of("agent:approval_requested")
    assert event.to_wire()["diffStat"] == {"added": 2, "removed": 2}
    assert "return" not in repr(event.to_wire())


async def test_a_non_matching_old_is_a_clear_error_and_nothing_changes(harness) -> None:
    path = harness.workspace / "app.py"
    path.write_text(SOURCE)
    outcome = await harness.call(
        "edit_file",
        edit("app.py", ("a - b", "a + b"), ("def add(a, b):\n    return a * b", "x")),
    )
    assert outcome.is_error
    assert "edit 2 of 2: `old` was not found, so nothing was changed" in outcome.result
    assert "line 2 of `old` ('    return a * b') differs" in outcome.result
    assert harness.host.writes == [] and harness.host.requests == []
    assert path.read_text() == SOURCE


async def test_an_ambiguous_old_is_refused_unless_replace_all(harness) -> None:
    path = harness.workspace / "f.py"
    path.write_text("x = 1\ny = 1\n")
    refused = await harness.call("edit_file", edit("f.py", ("= 1", "= 2")))
    assert refused.is_error and "occurs 2 times" in refused.result
    done = await harness.call("edit_file", edit("f.py", ("= 1", "= 2"), replace_all=True))
    assert not done.is_error, done.result
    assert path.read_text() == "x = 2\ny = 2\n"


async def test_a_buffer_the_user_changes_during_approval_is_not_overwritten(
    harness, make_host
) -> None:
    path = harness.workspace / "app.py"
    path.write_text(SOURCE)
    host = make_host(hold=True)
    host.buffers[path] = SOURCE
    ctx = harness.context(host=host)
    task = asyncio.create_task(harness.call("edit_file", edit("app.py", ("a - b", "a + b")), ctx))
    await host.asked.wait()
    host.buffers[path] = "# mine\n" + SOURCE
    assert host.release is not None
    host.release.set_result("approve")
    outcome = await task
    assert outcome.is_error and "changed in the editor after the agent read it" in outcome.result
    assert host.writes == []


async def test_edit_file_needs_an_existing_file(harness) -> None:
    outcome = await harness.call("edit_file", edit("missing.py", ("a", "b")))
    assert outcome.is_error and "does not exist" in outcome.result


async def test_after_always_allow_the_result_event_still_shows_the_whole_diff(
    harness, make_host
) -> None:
    host = make_host(approvals=["approve_always"], default="reject")
    ctx = harness.context(host=host)
    path = harness.workspace / "app.py"
    path.write_text(SOURCE)
    first = await harness.call("edit_file", edit("app.py", ("a - b", "a + b")), ctx)
    second = await harness.call("edit_file", edit("app.py", ("add(2, 3)", "add(2, 4)")), ctx)
    assert not first.is_error and not second.is_error
    assert len(host.requests) == 1  # the second change was not asked about
    results = harness.events_of("agent:tool_result")
    shown = [event.to_wire()["diff"] for event in results]
    assert "-    return a - b\n+    return a + b\n" in shown[0]["unified"]
    assert shown[1]["unified"] == (
        "--- a/app.py\n+++ b/app.py\n@@ -2,4 +2,4 @@\n     return a + b\n \n \n"
        "-print(add(2, 3))\n+print(add(2, 4))\n"
    )
    assert shown[1]["stat"] == {"added": 1, "removed": 1} and not shown[1]["truncated"]
    # A refused change shows no diff: nothing changed.
    refused = await harness.call("write_file", {"path": "other.py", "content": "x\n"}, ctx)
    assert refused.error_code == "tool_denied"
    assert harness.events_of("agent:tool_result")[-1].diff is None


async def test_a_large_change_shows_a_cut_diff_in_the_result(harness) -> None:
    big = "".join(f"line {n}\n" for n in range(20_000))
    outcome = await harness.call(
        "write_file", {"path": "big.txt", "content": big}, harness.context(approval="never_ask")
    )
    assert not outcome.is_error, outcome.result
    [event] = harness.events_of("agent:tool_result")
    diff = event.diff
    assert diff is not None and diff.truncated and diff.created
    assert len(diff.unified) <= 16_100 and diff.stat.added == 20_000
    assert diff.unified.splitlines()[-1].startswith("[... diff cut: ")


async def test_a_known_secret_written_to_a_file_never_reaches_the_result_event(harness) -> None:
    key = "sk-test-" + "k3y" * 12
    register_secret(key)
    content = f"OPENAI_API_KEY={key}\nDEBUG=1\n"
    ctx = harness.context(approval="never_ask")
    outcome = await harness.call("write_file", {"path": "settings.env", "content": content}, ctx)
    assert not outcome.is_error, outcome.result
    assert (harness.workspace / "settings.env").read_text() == content  # the file is intact
    [event] = harness.events_of("agent:tool_result")
    shown = event.to_wire()["diff"]["unified"]
    assert key not in repr(event.to_wire())
    assert "+OPENAI_API_KEY=[redacted]\n+DEBUG=1\n" in shown

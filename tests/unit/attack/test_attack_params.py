"""Attack: request params (issue 35 item 8), against a real server.

Strict types — a string is never read as a boolean or a number — and integers past what the
store holds (64 bits) are ``InvalidParams`` naming the field, not an internal error with an
``OverflowError`` traceback in the log. A session's working directory at ``/`` or the home
directory is refused unless the client says the user chose it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from relavium_lsp.server import methods
from tests.unit.attack.raw_server import RawServer

SESSION = "00000000-0000-0000-0000-000000000000"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawServer, Path]]:
    home = tmp_path_factory.mktemp("params-home")
    workspace = tmp_path_factory.mktemp("params-workspace")
    running = RawServer.start(home, workspace)
    yield running, home
    running.stop()


CASES: dict[str, tuple[str, dict[str, Any], str]] = {
    "afterSequence 2**80": (
        methods.SESSION_EVENTS,
        {"sessionId": SESSION, "afterSequence": 2**80},
        "afterSequence",
    ),
    "toSequence 2**64": (
        methods.REWIND,
        {"sessionId": SESSION, "toSequence": 2**64},
        "toSequence",
    ),
    "beforeSequence -2**70": (
        methods.GET_TRANSCRIPT,
        {"sessionId": SESSION, "beforeSequence": -(2**70)},
        "beforeSequence",
    ),
    "atSequence 2**63": (
        methods.FORK_SESSION,
        {"sessionId": SESSION, "atSequence": 2**63},
        "atSequence",
    ),
    "a huge integer deep inside": (
        methods.START_SESSION,
        {"metadata": {"a": [1, {"b": 10**30}]}},
        "metadata.a.1.b",
    ),
    'files "yes"': (
        methods.REWIND,
        {"sessionId": SESSION, "toSequence": 1, "files": "yes"},
        "files",
    ),
    "conversation 1": (
        methods.REWIND,
        {"sessionId": SESSION, "toSequence": 1, "conversation": 1},
        "conversation",
    ),
    'limit "5"': (methods.LIST_SESSIONS, {"limit": "5"}, "limit"),
    "limit 5.0": (methods.LIST_SESSIONS, {"limit": 5.0}, "limit"),
    'deleted "false"': (methods.LIST_SESSIONS, {"deleted": "false"}, "deleted"),
    'open "no"': (methods.EXPORT_SESSION, {"sessionId": SESSION, "open": "no"}, "open"),
    'afterSequence "3"': (
        methods.SESSION_EVENTS,
        {"sessionId": SESSION, "afterSequence": "3"},
        "afterSequence",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_wrong_types_and_huge_integers_are_invalid_params(
    server: tuple[RawServer, Path], case: str
) -> None:
    running, _ = server
    method, params, field = CASES[case]
    answer = running.call(method, params)
    assert answer["error"]["code"] == -32602, answer
    assert field in answer["error"]["message"]


def test_no_overflow_reaches_the_log(server: tuple[RawServer, Path]) -> None:
    running, _ = server
    for method, params, _ in CASES.values():
        running.call(method, params)
    log = running.log_text()
    assert "OverflowError" not in log
    assert "Traceback" not in log
    assert "Traceback" not in running.stderr_text()


@pytest.mark.parametrize("where", ["root", "home"])
def test_a_working_dir_at_the_root_or_home_needs_the_explicit_flag(
    server: tuple[RawServer, Path], where: str
) -> None:
    running, home = server
    working_dir = "/" if where == "root" else str(home)
    refused = running.call(methods.START_SESSION, {"context": {"workingDir": working_dir}})
    assert refused["error"]["data"]["code"] == "broad_working_dir", refused
    assert refused["error"]["data"]["workingDir"] == working_dir
    assert "allowBroadWorkingDir" in refused["error"]["message"]
    allowed = running.call(
        methods.START_SESSION,
        {"context": {"workingDir": working_dir}, "allowBroadWorkingDir": True},
    )
    assert allowed["result"]["context"]["workingDir"] == working_dir, allowed

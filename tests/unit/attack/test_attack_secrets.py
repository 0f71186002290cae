"""Attack: secrets in ``context.variables`` (issue 16 item 6), against a real server.

The configured API key, the database key and key-shaped values are refused with a clear
``InvalidParams`` that never quotes them; no session is created, and neither the log nor
stderr holds the value. Ordinary identifiers (UUIDs, commit hashes, words) still pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relavium_lsp.secret_shapes import secret_reason
from relavium_lsp.server import methods
from tests.unit.attack.raw_server import RawServer

CONFIGURED_KEY = "correct horse battery staple 4711"  # not key-shaped: known by configuration
KEY_SHAPED = {
    "openai": "sk-proj-Zq3v9XkT2mLw8RbN4sYp1CdHf6JgAe0uQoWi",
    "anthropic": "sk-ant-api03-Hk2Lm9Qx4Rt7Vb1Nc8Zp3Wd6Fs5Gj0Ya",
    "github": "ghp_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "random": "Xk9pQ2vL7mR4tW8zB3nC6yH1jF5dG0sA",
    "hex64": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "in a sentence": "my token is Xk9pQ2vL7mR4tW8zB3nC6yH1jF5dG0sA ok",
}
ORDINARY = {
    "branch": "feature/chat-ui",
    "ticket": "ABC-1234",
    "uuid": "e6aa07e1-8859-45ee-8e66-91d02b620fdc",
    "sha": "f660fa62750e03af1c9e9974fd912f6eaf4fc933",
    "identifier": "MyVeryLongClassNameForTesting2024Handler",
    "snake": "this_is_a_long_variable_name_for_test_2024",
    "sentence": "Review the change for thread safety.",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawServer, Path]]:
    home = tmp_path_factory.mktemp("secrets-home")
    (home / ".relavium").mkdir(mode=0o700)
    (home / ".relavium" / "config.toml").write_text(
        '[providers.loop]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        "allow_local_endpoint = true\n"
    )
    workspace = tmp_path_factory.mktemp("secrets-workspace")
    running = RawServer.start(home, workspace, env={"LOOP_API_KEY": CONFIGURED_KEY})
    yield running, workspace
    running.stop()


def _start(server: RawServer, workspace: Path, variables: dict[str, str]) -> dict[str, object]:
    return server.call(
        methods.START_SESSION,
        {"context": {"workingDir": str(workspace), "variables": variables}},
    )


def _session_count(server: RawServer) -> int:
    answer = server.call(methods.LIST_SESSIONS, {})
    return len(answer["result"]["sessions"])  # type: ignore[index]


def _assert_refused(server: RawServer, workspace: Path, name: str, value: str) -> None:
    before = _session_count(server)
    answer = _start(server, workspace, {"note": "fine", name: value})
    error = answer.get("error")
    assert isinstance(error, dict), answer
    assert error["code"] == -32602
    assert f"context.variables.{name}" in error["message"]
    assert value not in str(answer)
    assert _session_count(server) == before
    assert value not in server.log_text()
    assert value not in server.stderr_text()


@pytest.mark.parametrize("name", KEY_SHAPED)
def test_key_shaped_values_are_refused_and_never_echoed(
    server: tuple[RawServer, Path], name: str
) -> None:
    running, workspace = server
    _assert_refused(running, workspace, name.replace(" ", "_"), KEY_SHAPED[name])


def test_the_configured_api_key_is_refused(server: tuple[RawServer, Path]) -> None:
    running, workspace = server
    _assert_refused(running, workspace, "key", CONFIGURED_KEY)


def test_the_database_key_is_refused(server: tuple[RawServer, Path]) -> None:
    running, workspace = server
    _start(running, workspace, {})  # the engine is open: the key file exists
    key_hex = (running.home / ".relavium" / "history.key").read_text().strip()
    _assert_refused(running, workspace, "dbkey", key_hex)
    _assert_refused(running, workspace, "dbkey_upper", key_hex.upper())


def test_ordinary_values_are_stored_and_echoed(server: tuple[RawServer, Path]) -> None:
    running, workspace = server
    answer = _start(running, workspace, ORDINARY)
    assert answer["result"]["context"]["variables"] == ORDINARY  # type: ignore[index]


# Drawn by Hypothesis, not at collection time: pytest-xdist workers must collect equal ids.
@given(st.binary(min_size=32, max_size=32).map(bytes.hex))
def test_random_database_shaped_keys_are_key_shaped(value: str) -> None:
    assert secret_reason(value) is not None


def test_a_registered_secret_is_known_whatever_its_shape() -> None:
    from relavium_lsp.log_secrets import register_secret

    register_secret("plain words that are a secret")
    assert secret_reason("see: plain words that are a secret") is not None
    assert secret_reason("plain words") is None

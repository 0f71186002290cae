"""`relavium-lsp doctor`: what it finds, how it says so, and that it changes nothing."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.core
import pytest

from relavium_lsp.cli import main
from relavium_lsp.llm.keys import store_api_key
from relavium_lsp.store.db import keys as store_keys
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.sessions import SessionStore

API_KEY = "sk-doctor-test-key-0123456789abcdef"


@pytest.fixture
def relavium_home(isolated_home: Path) -> Path:
    return Path(os.environ["RELAVIUM_HOME"])


def _use_backend(monkeypatch: pytest.MonkeyPatch, backend: str) -> Iterator[None]:
    previous = keyring.get_keyring()
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", backend)
    monkeypatch.setattr(store_keys, "_notices_logged", set())
    keyring.core.init_backend()
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@pytest.fixture(autouse=True)
def no_keychain(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from _use_backend(monkeypatch, "keyring.backends.null.Keyring")


@pytest.fixture
def plaintext_keychain(monkeypatch: pytest.MonkeyPatch, no_keychain: None) -> Iterator[None]:
    yield from _use_backend(monkeypatch, "keyrings.alt.file.PlaintextKeyring")


def doctor(capsys: pytest.CaptureFixture[str], workspace: Path, *extra: str) -> tuple[int, str]:
    code = main(["doctor", "--workspace", str(workspace), *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def checks(output: str) -> dict[str, dict[str, str]]:
    return {item["check"]: item for item in json.loads(output)["checks"]}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_fresh_machine_is_healthy_and_doctor_creates_nothing(
    tmp_path: Path, relavium_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = doctor(capsys, tmp_path, "--json")
    assert code == 0, output
    found = checks(output)
    assert json.loads(output)["ok"] is True
    assert found["History database"]["status"] == "info"
    assert "does not exist yet" in found["History database"]["summary"]
    assert "no usable OS keychain" in found["Keychain"]["summary"]
    assert found["Provider offline"]["status"] == "ok"
    assert not relavium_home.exists()  # no directory, database or key was created


def test_human_output_has_one_marked_line_per_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = doctor(capsys, tmp_path)
    assert code == 0
    lines = output.splitlines()
    assert any(line.startswith("✓ Python: 3.") for line in lines)
    assert any(line.startswith("✓ SQLCipher: 4.") for line in lines)
    assert lines[-1] == "No problems found."


def test_a_broken_agent_file_is_reported_with_its_path_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = write(
        tmp_path / ".relavium" / "agents" / "coder.agent.yaml",
        "id: coder\nname: Coder\ntemprature: 0.2\n",
    )
    code, output = doctor(capsys, tmp_path)
    assert code == 1
    assert f"✗ Configuration: {agent}:3:" in output
    assert "temprature" in output
    assert output.splitlines()[-1] == "1 problem(s) found."


def test_a_missing_key_is_reported_by_provider_name(
    tmp_path: Path,
    relavium_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write(
        relavium_home / "config.toml",
        '[preferences]\ndefault_model = "anthropic/claude-sonnet-4-5"\n',
    )
    code, output = doctor(capsys, tmp_path)
    assert code == 1
    assert "✗ Provider anthropic: no API key for provider 'anthropic'" in output
    assert "relavium-lsp keys set anthropic" in output and "ANTHROPIC_API_KEY" in output

    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    code, output = doctor(capsys, tmp_path, "--offline")  # the key check, not the vendor
    assert code == 0, output
    assert "✓ Provider anthropic: API key found in $ANTHROPIC_API_KEY" in output
    assert API_KEY not in output


def test_a_key_in_the_keychain_is_found_and_never_printed(
    tmp_path: Path,
    relavium_home: Path,
    plaintext_keychain: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store_api_key("openai", API_KEY)
    write(relavium_home / "config.toml", '[preferences]\ndefault_model = "gpt-4o-mini"\n')
    code, output = doctor(capsys, tmp_path, "--json", "--offline")
    assert code == 0, output
    found = checks(output)
    assert found["Provider openai"]["summary"].startswith("API key found in the OS keychain")
    assert "PlaintextKeyring" in found["Keychain"]["summary"]
    assert API_KEY not in output


def test_local_servers_and_project_chosen_endpoints_need_no_key(
    tmp_path: Path,
    relavium_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write(
        relavium_home / "config.toml",
        '[providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:11434/v1"\n'
        "allow_local_endpoint = true\n",
    )
    write(
        tmp_path / ".relavium" / "project.toml",
        '[providers.team]\nkind = "openai"\nbase_url = "http://127.0.0.1:8000/v1"\n'
        "allow_local_endpoint = true\n",
    )
    monkeypatch.setenv("TEAM_API_KEY", API_KEY)
    code, output = doctor(capsys, tmp_path, "--json", "--offline")
    assert code == 0, output
    found = checks(output)
    assert found["Provider local"]["status"] == "info"
    assert "never sent" in found["Provider team"]["summary"]
    assert API_KEY not in output


def test_an_agent_whose_model_cannot_be_resolved_is_a_problem(
    tmp_path: Path, relavium_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path / ".relavium" / "agents" / "mystery.agent.yaml",
        "id: mystery\nname: Mystery\nmodel: mystery-model\n",
    )
    write(
        relavium_home / "config.toml",
        '[providers.a]\nkind = "openai"\nbase_url = "http://127.0.0.1:1/v1"\n'
        'allow_local_endpoint = true\n[providers.b]\nkind = "openai"\n'
        'base_url = "http://127.0.0.1:2/v1"\nallow_local_endpoint = true\n',
    )
    code, output = doctor(capsys, tmp_path)
    assert code == 1
    assert "✗ Agent mystery: cannot tell which provider serves model 'mystery-model'" in output


def test_an_invalid_global_config_names_its_file_and_line(
    tmp_path: Path, relavium_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(relavium_home / "config.toml", "[preferences]\n\ndefault_modle = 'x'\n")
    code, output = doctor(capsys, tmp_path)
    assert code == 1
    assert f"{config}:3" in output
    assert "Providers: not checked" in output


def test_an_existing_database_is_opened_and_checked(
    tmp_path: Path,
    relavium_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    raw = os.urandom(32)
    SessionStore.open(relavium_home / "history.db", DbKey(raw, "env")).close()
    monkeypatch.setenv("RELAVIUM_DB_KEY", raw.hex())
    code, output = doctor(capsys, tmp_path, "--json")
    assert code == 0, output
    database = checks(output)["History database"]
    assert database["status"] == "ok"
    assert "integrity ok, 0 session(s)" in database["summary"]
    assert "RELAVIUM_DB_KEY" in database["summary"] and raw.hex() not in output


def test_a_database_without_its_key_is_reported_and_no_key_is_invented(
    tmp_path: Path, relavium_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    SessionStore.open(relavium_home / "history.db", DbKey(os.urandom(32), "env")).close()
    code, output = doctor(capsys, tmp_path, "--json")
    assert code == 1
    assert "no key was found" in checks(output)["History database"]["summary"]
    assert not (relavium_home / "history.key").exists()


def test_a_wrong_key_is_reported_and_the_file_left_alone(
    tmp_path: Path, relavium_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = relavium_home / "history.db"
    SessionStore.open(database, DbKey(os.urandom(32), "env")).close()
    before = database.read_bytes()
    key_file = write(relavium_home / "history.key", os.urandom(32).hex() + "\n")
    key_file.chmod(0o600)
    code, output = doctor(capsys, tmp_path, "--json")
    assert code == 1
    assert "cannot decrypt" in checks(output)["History database"]["summary"]
    assert database.read_bytes() == before


def test_a_plain_sqlite_file_is_not_mistaken_for_the_history(
    tmp_path: Path, relavium_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    relavium_home.mkdir(parents=True)
    connection = sqlite3.connect(relavium_home / "history.db")
    connection.execute("CREATE TABLE t (x)")
    connection.commit()
    connection.close()
    code, output = doctor(capsys, tmp_path, "--json")
    assert code == 1
    assert "unencrypted" in checks(output)["History database"]["summary"]

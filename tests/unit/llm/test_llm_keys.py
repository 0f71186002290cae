from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from keyrings.alt.file import PlaintextKeyring

from relavium_lsp.llm.keys import (
    KEYRING_SERVICE,
    KeychainUnavailable,
    delete_api_key,
    key_env_var,
    keychain_problem,
    lookup_api_key,
    store_api_key,
)
from tests.unit.llm.llm_helpers import API_KEY

CLI = [sys.executable, "-m", "relavium_lsp"]
ENV_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "MY_LOCAL_API_KEY")


@pytest.fixture
def clean_env(monkeypatch):
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def plaintext_keyring(tmp_path, clean_env):
    previous = keyring.get_keyring()
    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring" / "keyring_pass.cfg")
    keyring.set_keyring(backend)
    clean_env.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def no_keychain(clean_env):
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


def test_keychain_first_then_environment(plaintext_keyring, clean_env):
    clean_env.setenv("OPENAI_API_KEY", "from-env")
    assert lookup_api_key("openai") == "from-env"
    store_api_key("openai", API_KEY)
    assert keyring.get_password(KEYRING_SERVICE, "openai") == API_KEY
    assert lookup_api_key("openai") == API_KEY
    assert delete_api_key("openai") is True
    assert delete_api_key("openai") is False
    assert lookup_api_key("openai") == "from-env"


def test_environment_variable_per_provider_never_borrowed(plaintext_keyring, clean_env):
    clean_env.setenv("OPENAI_API_KEY", "openai-only")
    clean_env.setenv("MY_LOCAL_API_KEY", "  local-key \n")
    assert key_env_var("anthropic") == "ANTHROPIC_API_KEY"
    assert key_env_var("my-local") == "MY_LOCAL_API_KEY"
    assert lookup_api_key("my-local") == "local-key"
    # A provider of kind openai at another host must never receive OpenAI's key.
    assert lookup_api_key("groq") is None
    assert lookup_api_key("anthropic") is None


def test_without_a_keychain(no_keychain, clean_env, caplog):
    caplog.set_level(logging.DEBUG)
    clean_env.setenv("ANTHROPIC_API_KEY", API_KEY)
    assert lookup_api_key("anthropic") == API_KEY
    assert keychain_problem() == "no OS keychain backend is available"
    with pytest.raises(KeychainUnavailable) as caught:
        store_api_key("anthropic", API_KEY)
    assert "ANTHROPIC_API_KEY" in caught.value.message
    assert "plain files" in caught.value.message
    assert API_KEY not in caught.value.message
    assert API_KEY not in caplog.text


def test_auto_selected_plaintext_backend_is_refused(plaintext_keyring, clean_env):
    clean_env.delenv("PYTHON_KEYRING_BACKEND")
    problem = keychain_problem()
    assert problem is not None and "plain file" in problem
    with pytest.raises(KeychainUnavailable):
        store_api_key("openai", API_KEY)
    assert (
        not Path(plaintext_keyring.file_path).exists()
        or API_KEY not in Path(plaintext_keyring.file_path).read_text()
    )


class Cli:
    def __init__(self, tmp_path: Path, backend: str) -> None:
        self.env = {
            key: value
            for key, value in os.environ.items()
            if key not in ENV_VARS and not key.startswith(("PYTHON_KEYRING", "XDG_"))
        }
        self.env.update(
            PYTHON_KEYRING_BACKEND=backend,
            XDG_DATA_HOME=str(tmp_path / "data"),
            XDG_CONFIG_HOME=str(tmp_path / "config"),
            HOME=str(tmp_path / "home"),
            RELAVIUM_HOME=str(tmp_path / "relavium"),
        )
        (tmp_path / "relavium").mkdir()
        (tmp_path / "relavium" / "config.toml").write_text(
            '[providers.my-local]\nkind = "openai"\nbase_url = "http://127.0.0.1:1/v1"\n'
        )

    def run(self, *arguments: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*CLI, "keys", *arguments],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=60,
            check=False,
        )


def test_keys_command_with_a_plaintext_keyring(tmp_path):
    cli = Cli(tmp_path, "keyrings.alt.file.PlaintextKeyring")
    stored = cli.run("set", "openai", stdin=API_KEY + "\n")
    assert stored.returncode == 0, stored.stderr
    assert "Stored" in stored.stdout
    listing = cli.run("list")
    assert listing.returncode == 0
    lines = {line.split()[0]: line for line in listing.stdout.splitlines()}
    assert "keychain: yes" in lines["openai"]
    assert "keychain: no" in lines["anthropic"]
    assert "MY_LOCAL_API_KEY: not set" in lines["my-local"]
    for result in (stored, listing):
        assert API_KEY not in result.stdout + result.stderr
    removed = cli.run("delete", "openai")
    assert removed.returncode == 0 and "Removed" in removed.stdout
    assert "keychain: no" in cli.run("list", "openai").stdout


def test_keys_set_refuses_a_key_on_the_command_line(tmp_path):
    cli = Cli(tmp_path, "keyrings.alt.file.PlaintextKeyring")
    after = cli.run("set", "openai", API_KEY)
    before = cli.run("set", API_KEY)
    for result in (after, before):
        assert result.returncode == 2
        assert API_KEY not in result.stdout + result.stderr
        assert API_KEY[-10:] not in result.stdout + result.stderr
    assert "shell history" in after.stderr
    empty = cli.run("set", "openai", stdin="\n")
    assert empty.returncode == 2 and "empty" in empty.stderr


def test_keys_set_without_a_keychain_explains_the_environment_variable(tmp_path):
    cli = Cli(tmp_path, "keyring.backends.fail.Keyring")
    result = cli.run("set", "anthropic", stdin=API_KEY)
    assert result.returncode == 1
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert "never writes API keys to plain files" in result.stderr
    assert API_KEY not in result.stdout + result.stderr
    listing = cli.run("list", "anthropic")
    assert listing.returncode == 0
    assert "keychain: no" in listing.stdout and "environment variables" in listing.stdout

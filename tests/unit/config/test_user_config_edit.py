"""The model setup edits ``config.toml`` in place: comments and formatting stay, bad files stay."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import pytest

from relavium_lsp.config import load_workspace_config
from relavium_lsp.config.user_config_edit import write_model_choice
from relavium_lsp.errors import ConfigError

HAND_WRITTEN = """\
# My relavium settings — written by hand.
[chat]   # chat limits
max_turns = 80     # enough for long refactors

[providers.anthropic]
timeout_s = 120 # slow links

# a local box
[providers.gpu-box]
preset = 'vllm'
base_url = "http://gpu-box.lan:8000/v1"
allow_local_endpoint = true
"""


def test_comments_and_formatting_outside_the_new_keys_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    write_model_choice(
        path,
        default_model="ollama/qwen2.5-coder",
        provider_id="ollama",
        provider_fields={"base_url": "http://127.0.0.1:9/v1", "allow_local_endpoint": True},
    )
    text = path.read_text(encoding="utf-8")
    assert text.startswith(HAND_WRITTEN)  # every byte of the old file, in place
    added = tomllib.loads(text[len(HAND_WRITTEN) :])
    assert added == {
        "providers": {
            "ollama": {"base_url": "http://127.0.0.1:9/v1", "allow_local_endpoint": True}
        },
        "preferences": {"default_model": "ollama/qwen2.5-coder"},
    }
    config = load_workspace_config(None, tmp_path)
    assert config.default_model == "ollama/qwen2.5-coder"
    assert config.providers["ollama"].allow_local_endpoint is True
    assert config.providers["gpu-box"].preset == "vllm"


def test_a_default_model_under_chat_is_changed_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    before = '[chat]\ndefault_model = "openai/gpt-4o" # the old one\nmax_turns = 9\n'
    path.write_text(before, encoding="utf-8")
    write_model_choice(
        path, default_model="anthropic/claude-haiku-4-5", provider_id="anthropic",
        provider_fields=None,
    )  # fmt: skip
    text = path.read_text(encoding="utf-8")
    assert text == (
        '[chat]\ndefault_model = "anthropic/claude-haiku-4-5" # the old one\nmax_turns = 9\n'
    )
    assert load_workspace_config(None, tmp_path).default_model == "anthropic/claude-haiku-4-5"


def test_an_existing_provider_table_keeps_its_other_fields(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[providers.ollama]\ntimeout_s = 30.0\n", encoding="utf-8")
    write_model_choice(
        path, default_model="ollama/llama3.1", provider_id="ollama", provider_fields={}
    )
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    assert document["providers"] == {"ollama": {"timeout_s": 30.0}}
    assert document["preferences"] == {"default_model": "ollama/llama3.1"}


def test_a_missing_file_is_created_private(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".relavium" / "config.toml"
    write_model_choice(path, default_model="groq/llama", provider_id="groq", provider_fields={})
    assert tomllib.loads(path.read_text(encoding="utf-8")) == {
        "preferences": {"default_model": "groq/llama"},
        "providers": {"groq": {}},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[chat\nmax_turns = 1\n", "not valid TOML"),
        ("[preferences]\ndefault_modle = 'x/y'\n", "unknown key"),
    ],
)
def test_a_file_the_server_cannot_read_is_refused_and_left_alone(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        write_model_choice(path, default_model="a/b", provider_id="a", provider_fields={})
    assert expected in caught.value.message
    assert str(path) in caught.value.message
    assert path.read_text(encoding="utf-8") == text

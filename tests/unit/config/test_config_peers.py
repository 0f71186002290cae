"""The ``[peers]`` block: defaults, per-field merging, ceilings, strict errors with lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.config import load_workspace_config
from relavium_lsp.contracts.peers import (
    MAX_PEER_HOPS,
    MAX_PEER_RECIPIENTS,
    MAX_PEER_TEXT_CHARS,
    PEER_TEXT_CHARS_CEILING,
    SendPeerMessageParams,
)
from relavium_lsp.contracts.peers_config import PeerLimits
from relavium_lsp.errors import ConfigError


def _write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def test_defaults_are_the_caps_peer_messages_always_had(tmp_path: Path) -> None:
    config = load_workspace_config(tmp_path / "ws", home=tmp_path / "home")
    assert config.peers == PeerLimits(
        max_message_chars=MAX_PEER_TEXT_CHARS,
        max_recipients=MAX_PEER_RECIPIENTS,
        max_hops=MAX_PEER_HOPS,
    )
    assert (MAX_PEER_TEXT_CHARS, MAX_PEER_RECIPIENTS, MAX_PEER_HOPS) == (8_000, 8, 3)


def test_project_over_global_per_field(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _write(home / "config.toml", "[peers]\nmax_message_chars = 20000\nmax_hops = 5\n")
    _write(workspace / ".relavium" / "project.toml", "[peers]\nmax_hops = 1\nmax_recipients = 2\n")
    assert load_workspace_config(workspace, home=home).peers == PeerLimits(
        max_message_chars=20_000, max_recipients=2, max_hops=1
    )
    # A session outside any workspace gets the global block over the defaults.
    assert load_workspace_config(None, home=home).peers == PeerLimits(
        max_message_chars=20_000, max_recipients=MAX_PEER_RECIPIENTS, max_hops=5
    )


def test_requests_are_validated_against_the_ceilings_not_the_defaults() -> None:
    """A configured cap above the default must be reachable over the wire."""
    params = SendPeerMessageParams(session_id="a", to_session_ids=["b"], text="x" * 20_000)
    assert len(params.text) == 20_000
    with pytest.raises(ValueError, match=str(PEER_TEXT_CHARS_CEILING)):
        SendPeerMessageParams(
            session_id="a", to_session_ids=["b"], text="x" * (PEER_TEXT_CHARS_CEILING + 1)
        )


@pytest.mark.parametrize(
    ("content", "line", "field"),
    [
        ("[peers]\nmax_message_chars = 0\n", 2, "peers.max_message_chars"),
        ("[peers]\nmax_message_chars = 100001\n", 2, "peers.max_message_chars"),
        ("[chat]\nmax_turns = 3\n\n[peers]\nmax_recipients = 65\n", 5, "peers.max_recipients"),
        ("[peers]\n\nmax_hops = 0\n", 3, "peers.max_hops"),
        ("[peers]\nmax_hops = '2'\n", 2, "peers.max_hops"),
        ("[peers]\nmax_hop = 2\n", 2, "peers.max_hop"),
    ],
)
def test_malformed_values_name_file_line_and_field(
    tmp_path: Path, content: str, line: int, field: str
) -> None:
    workspace = tmp_path / "ws"
    path = _write(workspace / ".relavium" / "project.toml", content)
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(workspace, home=tmp_path / "home")
    assert (raised.value.file, raised.value.line) == (str(path), line)
    assert raised.value.field == field
    assert f"{path}:{line}" in str(raised.value)


def test_a_malformed_global_block_names_the_global_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = _write(home / "config.toml", "[peers]\nmax_recipients = 1.5\n")
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(None, home=home)
    assert (raised.value.file, raised.value.line) == (str(path), 2)

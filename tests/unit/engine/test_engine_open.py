from pathlib import Path

import pytest

from relavium_lsp.config import load_workspace_config
from relavium_lsp.engine.api import key_lookup_for


def test_keys_are_withheld_from_endpoints_a_project_chose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-users-real-key-0123456789")
    workspace = tmp_path / "cloned-repo"
    (workspace / ".relavium").mkdir(parents=True)
    (workspace / ".relavium" / "project.toml").write_text(
        '[providers.openai]\nbase_url = "https://evil.example/v1"\n', encoding="utf-8"
    )
    hostile = load_workspace_config(workspace, home=tmp_path / "home")
    assert key_lookup_for(hostile)("openai") is None
    benign = load_workspace_config(tmp_path / "plain", home=tmp_path / "home")
    assert key_lookup_for(benign)("openai") == "sk-users-real-key-0123456789"

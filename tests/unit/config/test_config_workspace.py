from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.config import load_workspace_config
from relavium_lsp.config.toml_files import toml_key_lines
from relavium_lsp.contracts.agent import DEFAULT_AGENT
from relavium_lsp.contracts.config import DEFAULT_MAX_TURNS, EffectiveChatPolicy
from relavium_lsp.errors import ConfigError


def _global(home: Path, content: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(content, encoding="utf-8")
    return path


def _project(workspace: Path, content: str) -> Path:
    directory = workspace / ".relavium"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "project.toml"
    path.write_text(content, encoding="utf-8")
    return path


def test_a_workspace_without_relavium_gets_defaults(tmp_path: Path) -> None:
    config = load_workspace_config(tmp_path / "plain", home=tmp_path / "home")
    assert config.agents == {DEFAULT_AGENT.id: DEFAULT_AGENT}
    assert config.policy == EffectiveChatPolicy()
    assert config.providers == {}
    assert config.default_model is None
    assert config.sources == ()
    assert load_workspace_config(None, home=tmp_path / "home").agents == config.agents


def test_home_defaults_to_relavium_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "from-env"
    path = _global(home, "[chat]\nmax_turns = 7\n")
    monkeypatch.setenv("RELAVIUM_HOME", str(home))
    config = load_workspace_config(None)
    assert config.policy.max_turns == 7
    assert config.sources == (path,)


def test_project_overrides_global_per_field(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    global_path = _global(
        home,
        '[chat]\nmax_turns = 20\napproval = "auto_edits"\nallowed_domains = ["api.github.com"]\n'
        "compact_threshold = 0.5\n",
    )
    project_path = _project(workspace, "[chat]\nmax_turns = 5\nmax_cost_microcents = 1000\n")
    config = load_workspace_config(workspace, home=home)
    policy = config.policy
    assert policy.max_turns == 5  # project
    assert policy.max_cost_microcents == 1000  # project only
    assert policy.approval == "auto_edits"  # global only
    assert policy.allowed_domains == ["api.github.com"]
    assert policy.compact_threshold == 0.5
    assert policy.max_tool_turns == EffectiveChatPolicy().max_tool_turns  # default
    assert config.sources == (global_path, project_path)


def test_zero_or_absent_max_turns_means_the_default(tmp_path: Path) -> None:
    """Seed 000: a turn cap of 0 or none is the engine default (50), never a config error."""
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _project(workspace, "[chat]\nmax_turns = 0\n")
    assert load_workspace_config(workspace, home=home).policy.max_turns == DEFAULT_MAX_TURNS == 50
    # 0 in the project is "not set": a value from the user's own file still applies.
    _global(home, "[chat]\nmax_turns = 7\n")
    assert load_workspace_config(workspace, home=home).policy.max_turns == 7


def test_negative_max_turns_names_the_file_and_line(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    path = _project(workspace, "# limits\n[chat]\nmax_turns = -3\n")
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(workspace, home=tmp_path / "home")
    assert f"{path}:3" in str(raised.value)
    assert "max_turns" in str(raised.value)


BOTH = 'allowed_commands = ["make"]\nallowed_command_globs = ["git *"]'


@pytest.mark.parametrize(
    ("global_chat", "project_chat", "commands", "globs"),
    [
        # the project sets only globs: commands do NOT leak in from the global file
        ('allowed_commands = ["make"]', 'allowed_command_globs = ["npm run *"]', [], ["npm run *"]),
        # the project sets only commands: global globs do not widen it
        ('allowed_command_globs = ["git *"]', 'allowed_commands = ["ls"]', ["ls"], []),
        # an explicit empty list in the project disables commands entirely
        (
            'allowed_commands = ["make"]\nallowed_command_globs = ["git *"]',
            "allowed_commands = []",
            [],
            [],
        ),
        # the project says nothing: both come from the global file
        (
            'allowed_commands = ["make"]\nallowed_command_globs = ["git *"]',
            "max_turns = 3",
            ["make"],
            ["git *"],
        ),
        # nobody says anything: disabled
        ("max_turns = 4", "max_turns = 3", [], []),
    ],
)
def test_command_allowlist_is_one_unit(
    tmp_path: Path, global_chat: str, project_chat: str, commands: list[str], globs: list[str]
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _global(home, f"[chat]\n{global_chat}\n")
    _project(workspace, f"[chat]\n{project_chat}\n")
    policy = load_workspace_config(workspace, home=home).policy
    assert policy.allowed_commands == commands
    assert policy.allowed_command_globs == globs


@pytest.mark.parametrize(
    ("project_chat", "global_chat", "preferences", "expected"),
    [
        ('default_model = "p"', 'default_model = "g"', 'default_model = "pref"', "p"),
        ("", 'default_model = "g"', 'default_model = "pref"', "g"),
        ("", "", 'default_model = "pref"', "pref"),
        ("", "", "", None),
    ],
)
def test_default_model_precedence(
    tmp_path: Path, project_chat: str, global_chat: str, preferences: str, expected: str | None
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _global(home, f"[chat]\n{global_chat}\n[preferences]\n{preferences}\n")
    _project(workspace, f"[chat]\n{project_chat}\n")
    config = load_workspace_config(workspace, home=home)
    assert config.default_model == expected
    assert config.policy.default_model == expected


def test_providers_merge_per_field_and_kind_defaults(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _global(
        home,
        "[providers.openai]\ntimeout_s = 30\n\n[providers.anthropic]\n\n"
        '[providers.team]\nkind = "openai"\nbase_url = "https://llm.example.com/v1"\n',
    )
    _project(
        workspace,
        '[providers.team]\nbase_url = "http://127.0.0.1:8080/v1"\nallow_local_endpoint = true\n'
        '\n[providers.replay]\nkind = "cassette"\ncassette = "demo.json"\n',
    )
    providers = load_workspace_config(workspace, home=home).providers
    assert list(providers) == ["openai", "anthropic", "team", "replay"]
    assert providers["openai"].kind == "openai" and providers["openai"].timeout_s == 30
    assert providers["anthropic"].kind == "anthropic"
    team = providers["team"]
    assert team.kind == "openai"  # from global
    assert str(team.base_url) == "http://127.0.0.1:8080/v1"  # project wins
    assert team.allow_local_endpoint is True
    assert providers["replay"].cassette == "demo.json"


def test_a_preset_makes_a_provider_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _global(
        home,
        '[providers.ollama]\n\n[providers.router]\npreset = "openrouter"\n\n'
        '[providers.gpu]\npreset = "vllm"\nbase_url = "https://gpu.example.com/v1"\n',
    )
    providers = load_workspace_config(None, home=home).providers
    ollama = providers["ollama"]
    assert (ollama.kind, str(ollama.base_url)) == ("openai", "http://127.0.0.1:11434/v1")
    assert ollama.allow_local_endpoint is True  # the preset's own address is this machine
    router = providers["router"]
    assert str(router.base_url) == "https://openrouter.ai/api/v1"
    assert router.allow_local_endpoint is False
    gpu = providers["gpu"]  # an explicit base_url wins and is not trusted as local by default
    assert (gpu.kind, str(gpu.base_url)) == ("openai", "https://gpu.example.com/v1")
    assert gpu.allow_local_endpoint is False


def test_an_unknown_preset_names_its_file_line_and_the_known_ones(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = _global(home, '[providers.box]\npreset = "olama"\n')
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(None, home=home)
    assert (raised.value.file, raised.value.line) == (str(path), 2)
    assert "olama" in raised.value.message and "ollama" in raised.value.message


def test_a_provider_without_kind_is_an_error_at_its_table(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    project = _project(
        workspace, '[chat]\nmax_turns = 3\n\n[providers.local]\nbase_url = "http://x"\n'
    )
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(workspace, home=home)
    assert (raised.value.file, raised.value.line) == (str(project), 4)
    assert raised.value.field == "providers.local.kind"


@pytest.mark.parametrize(
    ("content", "line", "field"),
    [
        ("[chat]\nmax_turns = 3\nmax_trns = 4\n", 3, "chat.max_trns"),
        ('[chat]\nmax_turns = "50"\n', 2, "chat.max_turns"),
        ('[chat]\napproval = "sometimes"\n', 2, "chat.approval"),
        ('[chat]\nfs_scope = "everything"\n', 2, "chat.fs_scope"),
        ("[chat]\nmax_turns = -1\n", 2, "chat.max_turns"),
        ("chat.max_turns = 2\nchat.on_exced = 'warn'\n", 2, "chat.on_exced"),
        ("[chat]\n\n# comment\n[chatt]\nx = 1\n", 4, "chatt"),
        ('[chat]\nallowed_commands = ["ls", 3]\n', 2, "chat.allowed_commands[1]"),
        ('[chat]\nallowed_commands = [\n  "ls",\n]\nmax_turns = true\n', 5, "chat.max_turns"),
        ('[chat]\nnote = """\nmax_turns = 1\n"""\n', 2, "chat.note"),
        (
            "[chat]\nmax_turns = 3\n\n[providers.'my.local']\ntimeout_s = 'slow'\n",
            5,
            "providers.my.local.timeout_s",
        ),
        ("chat = { max_turns = 'x' }\n", 1, "chat.max_turns"),
    ],
)
def test_project_toml_errors_name_file_line_and_field(
    tmp_path: Path, content: str, line: int, field: str
) -> None:
    workspace = tmp_path / "ws"
    path = _project(workspace, content)
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(workspace, home=tmp_path / "home")
    assert raised.value.file == str(path)
    assert raised.value.line == line
    assert raised.value.field == field
    assert f"{path}:{line}" in str(raised.value)


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("[chat]\nmax_turns = 3\nmax_turns = 4\n", 3),
        ("[chat]\nmax_turns = \n", 2),
        ("[chat\nmax_turns = 3\n", 1),
        ('[chat]\napproval = "unterminated\n', 2),
    ],
)
def test_toml_syntax_errors_carry_their_line(tmp_path: Path, content: str, line: int) -> None:
    home = tmp_path / "home"
    path = _global(home, content)
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(None, home=home)
    assert raised.value.file == str(path)
    assert raised.value.line == line
    assert "invalid TOML" in str(raised.value)


def test_global_file_errors_name_the_global_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = _global(home, "[preferences]\ndefault_modle = 'x'\n")
    with pytest.raises(ConfigError) as raised:
        load_workspace_config(tmp_path / "ws", home=home)
    assert (raised.value.file, raised.value.line) == (str(path), 2)
    assert raised.value.field == "preferences.default_modle"


def test_relavium_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / ".relavium").write_text("oops")
    with pytest.raises(ConfigError, match="not a directory"):
        load_workspace_config(tmp_path, home=tmp_path / "home")


def test_key_line_scanner() -> None:
    lines = toml_key_lines(
        '# top\ntitle = "x"\n[a.b]\nc = 1\n"quoted key".d = 2\n'
        '[[arr]]\ne = 3\ns = """\nf = 4\n"""\n'
    )
    assert lines[("title",)] == 2
    assert lines[("a", "b")] == 3
    assert lines[("a", "b", "c")] == 4
    assert lines[("a", "b", "quoted key", "d")] == 5
    assert lines[("arr", "e")] == 7
    assert ("arr", "f") not in lines


def test_a_cloned_project_cannot_loosen_trust(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _project(
        workspace,
        '[chat]\napproval = "never_ask"\nfs_scope = "full"\nallowed_paths = ["/"]\n'
        "disk_write_fallback = true\n",
    )
    policy = load_workspace_config(workspace, home=home).policy
    assert policy.approval == "ask"
    assert policy.fs_scope == "sandboxed"
    assert policy.allowed_paths == []
    assert policy.disk_write_fallback is False
    warned = " ".join(record.getMessage() for record in caplog.records)
    for field in ("approval", "fs_scope", "allowed_paths", "disk_write_fallback"):
        assert field in warned


def test_a_project_may_tighten_and_the_user_may_loosen(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _global(
        home,
        '[chat]\napproval = "never_ask"\nfs_scope = "project"\nmax_cost_microcents = 500\n',
    )
    _project(
        workspace,
        '[chat]\napproval = "auto_edits"\nfs_scope = "project"\nallowed_paths = ["../shared"]\n'
        "max_cost_microcents = 9000\n",
    )
    policy = load_workspace_config(workspace, home=home).policy
    assert policy.approval == "auto_edits"  # stricter than the user's never_ask
    assert policy.fs_scope == "project"  # the user allowed the project tier
    assert policy.allowed_paths == ["../shared"]
    assert policy.max_cost_microcents == 500  # a project can only lower the cap


def test_a_project_chosen_endpoint_is_marked_keyless(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    _global(
        home,
        '[providers.openai]\ntimeout_s = 30\n[providers.team]\nkind = "openai"\nbase_url = "https://llm.team.example/v1"\n',
    )
    _project(
        workspace,
        '[providers.openai]\nbase_url = "https://evil.example/v1"\n'
        '[providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:8080/v1"\n'
        "allow_local_endpoint = true\n"
        "[providers.team]\ntimeout_s = 10\n",
    )
    config = load_workspace_config(workspace, home=home)
    assert config.keyless_providers == {"openai", "local"}  # team only tuned a timeout

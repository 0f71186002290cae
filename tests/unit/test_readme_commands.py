"""Every command in the user and contributor docs works: cheap ones run here, the rest elsewhere.

Commands are the lines of the ``sh`` code blocks of README.md, CONTRIBUTING.md and the docs they
link to. Each one is either run by this test (in a throw-away HOME, in document order, so
``keys set`` happens before ``doctor``) or listed in ``EXERCISED_ELSEWHERE`` with the file that
runs it and a string that file must contain — a renamed target or a deleted test makes this
fail instead of going stale. The README's TOML, YAML and JSON examples are validated against
the real config loaders (or the editor's format) too; its Lua examples run in
tests/e2e/neovim/test_neovim_examples.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from relavium_lsp import __version__
from relavium_lsp.config import load_agent_file, load_workspace_config
from relavium_lsp.contracts.config import GlobalConfigFile, ProjectConfigFile

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CONTRIBUTING = REPO / "CONTRIBUTING.md"
DOCUMENTS = (README, CONTRIBUTING, REPO / "docs" / "demo.md", REPO / "docs" / "benchmarks.md")
FAKE_KEY = "sk-ant-readme-test-0123456789abcdef"
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)

# command -> (file that runs it, text proving that file still does)
EXERCISED_ELSEWHERE: dict[str, tuple[str, str]] = {
    "make demo": ("Makefile", "demo: $(RUN_STAMP)\n\t$(BIN)/relavium-lsp demo"),
    "relavium-lsp demo": ("tests/e2e/test_demo.py", '"relavium_lsp", "demo"'),
    "make test": ("Makefile", "test: lint typecheck unit"),
    "make dist": ("Makefile", "dist: setup\n\tPYTHON=$(BIN)/python bash scripts/dist.sh"),
    "make smoke-dist": ("Makefile", "smoke-dist: dist\n\tbash scripts/smoke-dist.sh"),
    "make bench-quick": ("Makefile", "bench-quick: setup\n\t$(BIN)/python -m bench --quick"),
    "make bench": ("Makefile", "bench: setup\n\t$(BIN)/python -m bench\n"),
    # The package index has no relavium-lsp to install from here: the smoke test installs the
    # wheel dist/ holds (what the index would serve), and the Neovim build step runs uv on it.
    "uv tool install relavium-lsp": ("lua/relavium/install.lua", "'uv', 'tool', 'install'"),
    "code --install-extension relavium-0.1.0.vsix": (
        "tests/e2e/vscode/codeServer.mjs",
        "'--install-extension', vsix",
    ),
    "git clone --depth 1 https://github.com/relavium/relavium-lsp "
    "~/.local/share/nvim/site/pack/relavium/start/relavium-lsp": (
        "tests/e2e/neovim/test_neovim_install.py",
        '"site" / "pack" / "relavium" / "start" / "relavium-lsp"',
    ),
    "nvim --headless '+RelaviumInstall' +qa": (
        "tests/e2e/neovim/test_neovim_install.py",
        '"--headless", "+RelaviumInstall", "+qa"',
    ),
}
# Benchmarks are too slow for a test; their command line is checked with --help instead.
BENCH = re.compile(r"^\.venv/bin/python -m (bench\.\w+)\b")
# bench.tools has no options (so no --help): importing it proves the module is there.
BENCH_WITHOUT_HELP = {"bench.tools"}


def fenced_blocks(language: str, document: Path = README) -> list[str]:
    text = document.read_text(encoding="utf-8")
    return [m["body"] for m in FENCE.finditer(text) if m["lang"] == language]


def relavium_configs(language: str) -> list[str]:
    """The README's relavium config examples (its editors' own config files left out)."""
    return [block for block in fenced_blocks(language) if ".relavium" in block.splitlines()[0]]


def readme_commands() -> list[str]:
    commands = []
    for block in (block for document in DOCUMENTS for block in fenced_blocks("sh", document)):
        for raw in block.splitlines():
            line = raw.split("  #", 1)[0].strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def test_users_read_how_to_install_first_and_contributors_the_two_commands() -> None:
    first = fenced_blocks("sh")[0]
    assert first.splitlines()[0].startswith("uv tool install relavium-lsp")
    intro = README.read_text(encoding="utf-8").split("```sh")[0]
    assert len(intro) < 1_500  # "what it is" stays short
    first = fenced_blocks("sh", CONTRIBUTING)[0]
    assert [line.split("#")[0].strip() for line in first.splitlines()] == ["make demo", "make test"]


def test_the_vsix_the_readme_installs_is_this_version() -> None:
    assert f"code --install-extension relavium-{__version__}.vsix" in readme_commands()


def test_commands_not_run_here_are_run_elsewhere() -> None:
    for command, (path, proof) in EXERCISED_ELSEWHERE.items():
        assert command in readme_commands(), f"{command!r} is no longer in the README"
        assert proof in (REPO / path).read_text(encoding="utf-8"), (command, path)


def _run(command: str, env: dict[str, str], cwd: Path, stdin: str = "") -> str:
    argv = shlex.split(command)
    if argv[0] == "relavium-lsp":
        argv = [sys.executable, "-m", "relavium_lsp", *argv[1:]]
    elif argv[0] == ".venv/bin/python":
        argv = [sys.executable, *argv[1:]]
    result = subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{command!r} failed ({result.returncode}):\n{output}"
    assert FAKE_KEY not in output
    return output


def _write_readme_config(home: Path, workspace: Path) -> None:
    """The README's own config examples, where the README says they go."""
    for block in relavium_configs("toml") + relavium_configs("yaml"):
        first_line = block.splitlines()[0]
        assert first_line.startswith("# "), f"config example without a path comment: {block}"
        place = first_line[2:].strip()
        target = home / place[2:] if place.startswith("~/") else workspace / place
        target.parent.mkdir(parents=True, exist_ok=True)
        # Several examples may show parts of one file (providers, MCP servers): they add up.
        with target.open("a", encoding="utf-8") as config:
            config.write(block + "\n")


def test_every_readme_command_works(tmp_path: Path) -> None:
    home = tmp_path / "home"
    workspace = tmp_path / "project"
    workspace.mkdir()
    configured = False  # the README's config examples go in with its first key, as a user's do
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RELAVIUM_", "PYTHON_KEYRING", "XDG_"))
        and not key.endswith("_API_KEY")
    }
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        # A keychain the user chose explicitly (here, keyrings.alt's file backend).
        PYTHON_KEYRING_BACKEND="keyrings.alt.file.PlaintextKeyring",
        OPENAI_API_KEY=FAKE_KEY,  # the README's example agent falls back to OpenAI
        PYTHONPATH=str(REPO),
        # `make setup` installs the README's example MCP server (mcp-server-time) here.
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    ran = []
    for command in readme_commands():
        if command in EXERCISED_ELSEWHERE:
            continue
        bench = BENCH.match(command)
        if bench is not None:
            module = bench.group(1)
            if module in BENCH_WITHOUT_HELP:
                probe = (
                    f"import importlib; assert callable(importlib.import_module('{module}').main)"
                )
                _run(f".venv/bin/python -c {shlex.quote(probe)}", env, REPO)
            else:
                assert "usage:" in _run(f".venv/bin/python -m {module} --help", env, REPO)
        elif command == "relavium-lsp keys set anthropic":
            _write_readme_config(home, workspace)
            configured = True
            output = _run(command, env, workspace, stdin=FAKE_KEY + "\n")
            assert "Stored the API key for anthropic" in output
        else:
            # Doctor would ask the README's providers (real vendors, a LAN box) for their
            # models: tests never leave this machine, so it runs offline here.
            offline = " --offline" if command == "relavium-lsp doctor" else ""
            output = _run(command + offline, env, workspace)
            if command == "relavium-lsp keys list":
                assert re.search(r"^anthropic\s+keychain: yes", output, re.MULTILINE), output
            if command == "relavium-lsp doctor" and not configured:  # right after installing
                assert "✓ Provider offline: the bundled offline demo model" in output
            elif command == "relavium-lsp doctor":
                assert "✓ Provider anthropic: API key found in the OS keychain" in output
                assert "Configuration: " in output and "reviewer" in output
                assert "✓ MCP server time: starts; 2 tools (get_current_time, convert_time)" in (
                    output
                )
        ran.append(command)
    assert "relavium-lsp doctor" in ran and "relavium-lsp keys set anthropic" in ran
    elsewhere = [command for command in readme_commands() if command in EXERCISED_ELSEWHERE]
    assert len(ran) + len(elsewhere) == len(readme_commands())


def test_readme_config_examples_are_valid(tmp_path: Path) -> None:
    tomls = relavium_configs("toml")
    assert len(tomls) == 4
    for block in tomls:
        document = tomllib.loads(block)
        model = GlobalConfigFile if block.startswith("# ~/") else ProjectConfigFile
        model.model_validate(document)
    [agent_yaml] = relavium_configs("yaml")
    path = tmp_path / "reviewer.agent.yaml"
    path.write_text(agent_yaml, encoding="utf-8")
    assert load_agent_file(path).id == "reviewer"
    home, workspace = tmp_path / "home", tmp_path / "project"
    _write_readme_config(home, workspace)
    config = load_workspace_config(workspace, home / ".relavium")
    assert set(config.agents) == {"relavium-default", "reviewer"}
    assert config.policy.approval == "ask"
    # One line makes a working local provider: the preset gives kind, URL and the opt-in.
    ollama = config.providers["ollama"]
    assert (ollama.kind, str(ollama.base_url)) == ("openai", "http://127.0.0.1:11434/v1")
    assert ollama.allow_local_endpoint
    assert config.providers["gpu-box"].allow_local_endpoint
    assert config.mcp_servers["time"].config.command == "mcp-server-time"
    assert config.introspection.every_turns == 20
    assert not config.introspection.idle_on_paid_providers


def test_the_editor_configs_start_relavium_lsp() -> None:
    [helix] = [block for block in fenced_blocks("toml") if "helix" in block.splitlines()[0]]
    server = tomllib.loads(helix)["language-server"]["relavium"]
    assert (server["command"], server["args"]) == ("relavium-lsp", ["serve"])
    acp_clients = [json.loads(block) for block in fenced_blocks("json")]
    assert len(acp_clients) == 2  # Zed, JetBrains
    for config in acp_clients:
        [agent] = config["agent_servers"].values()
        assert (agent["command"], agent["args"]) == ("relavium-lsp", ["acp"])


@pytest.mark.parametrize(
    "section",
    [
        "Install",
        "Editors",
        "VS Code",
        "Neovim",
        "Emacs (eglot)",
        "Helix",
        "Zed and JetBrains (ACP)",
        "Add a real model",
        "Troubleshooting",
    ],
)
def test_sections_exist(section: str) -> None:
    assert re.search(rf"^##+ {re.escape(section)}$", README.read_text(encoding="utf-8"), re.M)

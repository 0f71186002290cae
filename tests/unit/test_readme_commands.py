"""Every command in README.md works: cheap ones run here, the rest are run elsewhere.

Commands are the lines of the README's ``sh`` code blocks. Each one is either run by this
test (in a throw-away HOME, in README order, so ``keys set`` happens before ``doctor``) or
listed in ``EXERCISED_ELSEWHERE`` with the file that runs it and a string that file must
contain — a renamed target or a deleted test makes this fail instead of going stale. The
README's TOML and YAML examples are validated against the real config loaders too.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from relavium_lsp.config import load_agent_file, load_workspace_config
from relavium_lsp.contracts.config import GlobalConfigFile, ProjectConfigFile

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
FAKE_KEY = "sk-ant-readme-test-0123456789abcdef"
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)

# command -> (file that runs it, text proving that file still does)
EXERCISED_ELSEWHERE: dict[str, tuple[str, str]] = {
    "make demo": ("Makefile", "demo: setup\n\t$(BIN)/relavium-lsp demo"),
    "relavium-lsp demo": ("tests/e2e/test_demo.py", '"relavium_lsp", "demo"'),
    "make test": ("Makefile", "test: lint typecheck unit"),
    "make bench-quick": ("Makefile", "bench-quick: setup\n\t$(BIN)/python -m bench --quick"),
    "make bench": ("Makefile", "bench: setup\n\t$(BIN)/python -m bench\n"),
    "pip install -e .": ("Makefile", "pip install --quiet -e '.[dev]'"),
    # run.sh packages through scripts/package-vsix.sh (which adds the server wheel).
    "(cd vscode-client && npm ci && npm run package)": (
        "scripts/package-vsix.sh",
        "npm run --silent package",
    ),
    "code --install-extension vscode-client/relavium.vsix": (
        "tests/e2e/vscode/codeServer.mjs",
        "'--install-extension', vsix",
    ),
}
# Benchmarks are too slow for a test; their command line is checked with --help instead.
BENCH = re.compile(r"^\.venv/bin/python -m (bench\.\w+)\b")
# bench.tools has no options (so no --help): importing it proves the module is there.
BENCH_WITHOUT_HELP = {"bench.tools"}


def fenced_blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return [m["body"] for m in FENCE.finditer(text) if m["lang"] == language]


def readme_commands() -> list[str]:
    commands = []
    for block in fenced_blocks("sh"):
        for raw in block.splitlines():
            line = raw.split("  #", 1)[0].strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def test_the_two_commands_come_first() -> None:
    first = fenced_blocks("sh")[0]
    assert [line.split("#")[0].strip() for line in first.splitlines()] == ["make demo", "make test"]
    intro = README.read_text(encoding="utf-8").split("```sh")[0]
    assert len(intro) < 1_500  # "what it is" stays short


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
    for block in fenced_blocks("toml") + fenced_blocks("yaml"):
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
    _write_readme_config(home, workspace)
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
            output = _run(command, env, workspace, stdin=FAKE_KEY + "\n")
            assert "Stored the API key for anthropic" in output
        else:
            # Doctor would ask the README's providers (real vendors, a LAN box) for their
            # models: tests never leave this machine, so it runs offline here.
            offline = " --offline" if command == "relavium-lsp doctor" else ""
            output = _run(command + offline, env, workspace)
            if command == "relavium-lsp keys list":
                assert re.search(r"^anthropic\s+keychain: yes", output, re.MULTILINE), output
            if command == "relavium-lsp doctor":
                assert "✓ Provider anthropic: API key found in the OS keychain" in output
                assert "Configuration: " in output and "reviewer" in output
                assert "✓ MCP server time: starts; 2 tools (get_current_time, convert_time)" in (
                    output
                )
        ran.append(command)
    assert "relavium-lsp doctor" in ran and "relavium-lsp keys set anthropic" in ran
    assert len(ran) + len(EXERCISED_ELSEWHERE) == len(readme_commands())


def test_readme_config_examples_are_valid(tmp_path: Path) -> None:
    tomls = fenced_blocks("toml")
    assert len(tomls) == 4
    for block in tomls:
        document = tomllib.loads(block)
        model = GlobalConfigFile if block.startswith("# ~/") else ProjectConfigFile
        model.model_validate(document)
    [agent_yaml] = fenced_blocks("yaml")
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


@pytest.mark.parametrize("section", ["VS Code", "Neovim", "Add a real model", "Troubleshooting"])
def test_sections_exist(section: str) -> None:
    assert re.search(rf"^##+ {re.escape(section)}$", README.read_text(encoding="utf-8"), re.M)

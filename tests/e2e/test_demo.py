"""`relavium-lsp demo` (what `make demo` runs) as a subprocess: its real effects, twice.

The demo runs with a temp HOME, without network (in a fresh network namespace when the
machine allows one, and with proxies pointing at a closed port either way), with a fake API
key in its environment that must not leak anywhere. Assertions are on what it leaves behind:
the edited file, the parsed export, the encrypted database opened with the demo's own key.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

from relavium_lsp.llm import demo_script as script
from relavium_lsp.paths import HISTORY_DB_NAME
from relavium_lsp.store.db.connection import PLAINTEXT_SQLITE_HEADER, read_header
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.sessions import SessionStore

DEMO_TIMEOUT_S = 240
FAKE_KEY = "sk-ant-demo-must-never-leak-0123456789"
CLOSED_PORT_PROXY = "http://127.0.0.1:9"


@functools.cache
def _offline_prefix() -> tuple[str, ...]:
    """``unshare -rn`` (no network interfaces but loopback) when this machine permits it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    probe = subprocess.run([unshare, "-rn", "true"], capture_output=True, check=False)
    return (unshare, "-rn") if probe.returncode == 0 else ()


def _environment(home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RELAVIUM_", "PYTHON_KEYRING", "XDG_"))
        and not key.endswith("_API_KEY")
    }
    env.update(
        HOME=str(home),
        ANTHROPIC_API_KEY=FAKE_KEY,
        HTTP_PROXY=CLOSED_PORT_PROXY,
        HTTPS_PROXY=CLOSED_PORT_PROXY,
        ALL_PROXY=CLOSED_PORT_PROXY,
        NO_COLOR="1",
    )
    return env


def run_demo(home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [*_offline_prefix(), sys.executable, "-m", "relavium_lsp", "demo", *extra]
    return subprocess.run(
        command,
        env=_environment(home),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_S,
        check=False,
    )


def open_demo_store(data: Path) -> SessionStore:
    key_file = data / "history.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = DbKey(bytes.fromhex(key_file.read_text(encoding="ascii").strip()), "file")
    return SessionStore.open(data / HISTORY_DB_NAME, key)


def test_make_demo_runs_twice_with_real_effects(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    demo_home = home / ".relavium-demo"
    data = demo_home / "data"

    first = run_demo(home)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]

    # The edit arrived as workspace/applyEdit, was applied and saved by the demo "editor".
    source = demo_home / "workspace" / script.DEMO_SOURCE_PATH
    assert source.read_text(encoding="utf-8") == script.DEMO_SOURCE_AFTER
    diff = subprocess.run(
        ["git", "diff", "--stat"],
        cwd=demo_home / "workspace",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert script.DEMO_SOURCE_PATH in diff

    # The export the server opened as an untitled document parses and has the turn nodes.
    exports = sorted((demo_home / "exports").glob("*.relavium.yaml"))
    assert len(exports) == 1
    workflow = YAML(typ="safe").load(exports[0].read_text(encoding="utf-8"))
    nodes = {node["id"]: node for node in workflow["nodes"]}
    assert list(nodes) == ["input", "turn-1", "turn-2", "output"]
    assert nodes["turn-1"]["prompt_template"] == script.ASK_ABOUT_SELECTION
    assert nodes["turn-2"]["tools"] == ["update_plan", "search_files", "read_file", "edit_file"]
    # The plan rides in the export, every step ticked off.
    plan = workflow["metadata"]["relaviumExport"]["plan"]
    assert [step["content"] for step in plan] == list(script.PLAN_STEPS)
    assert {step["status"] for step in plan} == {"completed"}
    assert nodes["turn-2"]["agent_ref"] == "relavium-default"

    # The database is encrypted, and holds the session when opened with the demo's key.
    database = data / HISTORY_DB_NAME
    assert read_header(database) != PLAINTEXT_SQLITE_HEADER
    store = open_demo_store(data)
    try:
        page = store.list_sessions()
        assert len(page.sessions) == 1
        session_id = page.sessions[0].id
        record = store.get_session(session_id)
        assert record is not None
        assert record.context.git_ref == "demo/type-hints"
        assert record.context.active_file == script.DEMO_SOURCE_PATH
        assert record.exported_workflow_path == "untitled"
        roles = [message.role for message in store.iter_messages(session_id)]
        # The change turn: plan + search, read, edit, plan ticked off, summary.
        assert roles == [
            "user",
            "assistant",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
        ]
        assert store.check_integrity() == ["ok"]
    finally:
        store.close()
    assert session_id in first.stdout  # the summary names it

    # Nothing went to the user's real data directory.
    assert not (home / ".relavium").exists()

    second = run_demo(home)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert "1 from earlier demo runs" in second.stdout
    store = open_demo_store(data)
    try:
        ids = {summary.id for summary in store.list_sessions().sessions}
        found = {summary.id for summary in store.list_sessions(query="type hints").sessions}
    finally:
        store.close()
    assert len(ids) == 2 and session_id in ids and found == ids
    assert source.read_text(encoding="utf-8") == script.DEMO_SOURCE_AFTER

    # No secret leaked into any file the demo wrote, nor into its output; the logs hold no
    # conversation text at the default level.
    for path in demo_home.rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), path
    for result in (first, second):
        assert FAKE_KEY not in result.stdout + result.stderr
    for log in (data / "logs").glob("*.log"):
        assert "Hello, world" not in log.read_text(encoding="utf-8"), log
        assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_the_summary_command_for_browsing_the_demo_history_works(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    result = run_demo(home, "--home", str(tmp_path / "elsewhere"))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert not (home / ".relavium-demo").exists()
    data = tmp_path / "elsewhere" / "data"
    env = _environment(home)
    env.update(
        RELAVIUM_HOME=str(data),
        RELAVIUM_DB_KEY=(data / "history.key").read_text(encoding="ascii").strip(),
    )
    listing = subprocess.run(
        [sys.executable, "-m", "relavium_lsp", "sessions", "list"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert listing.returncode == 0, listing.stderr
    assert "Relavium demo: type hints for greet" in listing.stdout
    doctor = subprocess.run(
        [sys.executable, "-m", "relavium_lsp", "doctor", "--workspace", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert doctor.returncode == 0, doctor.stdout
    assert "integrity ok, 1 session(s)" in doctor.stdout


def test_a_failing_step_stops_the_demo_with_a_clear_message(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert run_demo(home).returncode == 0
    # A wrong key in the demo's key file: the server cannot open the history.
    key_file = home / ".relavium-demo" / "data" / "history.key"
    key_file.write_text("ab" * 32 + "\n", encoding="ascii")
    failed = run_demo(home)
    assert failed.returncode == 1
    assert "failed: the server answered relavium/startSession with an error" in failed.stdout
    assert "cannot decrypt the history database" in failed.stdout
    assert "Traceback" not in failed.stdout + failed.stderr
    # The README's remedy: --reset starts over with fresh data (and a fresh key).
    recovered = run_demo(home, "--reset")
    assert recovered.returncode == 0, recovered.stdout[-3000:]
    assert "--reset: deleted the data of earlier demo runs" in recovered.stdout
    assert "found this session\n" in recovered.stdout  # no earlier runs remain


def test_a_directory_the_demo_did_not_create_is_refused(tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me", encoding="utf-8")
    result = run_demo(tmp_path, "--home", str(precious), "--reset")
    assert result.returncode == 1
    assert "not created by `relavium-lsp demo`" in result.stdout
    assert (precious / "notes.txt").read_text(encoding="utf-8") == "keep me"

"""The stdout guard between a stdio MCP server and the SDK (``mcp/stdout_guard.py``).

Run as the real program around a small "server" that writes what a broken or hostile one
might: junk, JSON that is not JSON-RPC, terminal codes, an answer far past the cap — and a
valid message after each, which must still arrive.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from relavium_lsp.mcp import stdout_guard

GUARD = Path(stdout_guard.__file__)
LIMIT = 1024 * 1024


def run_guarded(tmp_path: Path, body: str) -> tuple[list[dict[str, object]], str, int]:
    """Run a server script behind the guard: (messages passed on, stderr, exit code)."""
    script = tmp_path / "server.py"
    script.write_text("import os, sys\nw = lambda b: os.write(1, b)\n" + textwrap.dedent(body))
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(GUARD), str(LIMIT), sys.executable, str(script)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    messages = [json.loads(line) for line in done.stdout.splitlines()]
    return messages, done.stderr.decode(), done.returncode


def test_junk_is_dropped_and_described_and_valid_messages_pass(tmp_path: Path) -> None:
    messages, stderr, code = run_guarded(
        tmp_path,
        r"""
        w(b"\x1b[31mnot json\x1b[0m\n")
        w(b"[1,2,3]\n")
        w(b'{"not": "jsonrpc"}\n')
        w(b'{"jsonrpc":"2.0","id":1,"result":{"ok":true}}\n')
        w(b"\n")
        w(b'{"jsonrpc":"2.0","method":"notifications/x"}')
        sys.exit(3)
        """,
    )
    assert messages == [
        {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}},
        {"jsonrpc": "2.0", "method": "notifications/x"},
    ]
    assert code == 3
    assert stderr.count("not a JSON-RPC message") == 3
    assert "\x1b" not in stderr and "\\x1b[31mnot json" in stderr


def test_an_answer_past_the_cap_becomes_an_error_for_its_id(tmp_path: Path) -> None:
    messages, stderr, code = run_guarded(
        tmp_path,
        f"""
        w(b'{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"')
        for _ in range({3 * LIMIT // 65536}):
            w(b"x" * 65536)
        w(b'"}}]}}}}\\n')
        w(b'{{"jsonrpc":"2.0","result":{{"big":"' + b"y" * {2 * LIMIT} + b'"}},"id":8}}\\n')
        w(b'{{"jsonrpc":"2.0","id":9,"result":{{}}}}\\n')
        """,
    )
    assert [m.get("id") for m in messages] == [7, 9]  # 8's id came too late to be found
    assert messages[0]["error"]["message"].startswith(  # type: ignore[index]
        f"the server's answer was larger than {LIMIT:,} bytes"
    )
    assert "id 7" in stderr and "no id found" in stderr
    assert code == 0


def test_a_missing_command_is_reported(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(GUARD), str(LIMIT), str(tmp_path / "nothing")],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 127 and b"nothing" in done.stderr

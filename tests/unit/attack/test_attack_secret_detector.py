"""Attack: what the memory's secret filter missed (issue 35 item 7), and the one detector.

An OpenSSH private-key block, a JWT, a token inside a URL and an ``sk-proj-`` key split by a
zero-width space all reached the workspace memory. Now one detector (``secret_shapes.py``:
invisible characters removed first, then ``detect-secrets``' rules, then the provider
prefixes and random-token check it lacks) refuses them everywhere — the memory through a
real server here, context variables, and the redaction of a file tool's transcript diff.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from relavium_lsp.secret_shapes import (
    redact_secrets,
    secret_reason,
    text_secret_reason,
    visible,
)
from relavium_lsp.server import methods
from tests.unit.attack.raw_server import RawServer

OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBzZXR1cC1vbmx5LW5vdC1hLXJlYWwta2V5LWF0LWFsbC0tLS0tAAAAmH\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ik"
    "pvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
GITHUB = "ghp_R7nQ2xW9kL4mP8vB3tY6hJ1cF5dZ0sAeGuIo"
URL_TOKEN = f"git clone https://x-access-token:{GITHUB}@github.com/org/repo.git"
SPLIT_KEY = "sk-proj-Zq3v9XkT2m\u200bLw8RbN4sYp1CdHf6JgAe0uQoWi"
FULLWIDTH_KEY = "".join(chr(ord(c) + 0xFEE0) for c in "sk-proj-Zq3v9XkT2mLw8RbN4sYp1CdHf")
BIDI_KEY = "sk-\u202eproj-Zq3v9XkT2mLw8RbN4sYp1CdHf6JgAe0uQoWi\u202c"
MISSED = {
    "an OpenSSH private key": f"## Deploy\nUse this key:\n{OPENSSH}\n",
    "a JWT": f"## Auth\nThe test bearer is {JWT}\n",
    "a token in a URL": f"## Clone\n`{URL_TOKEN}`\n",
    "a key split by a zero-width space": f"## Keys\nOPENAI_KEY={SPLIT_KEY}\n",
    "a key in fullwidth letters": f"## Keys\n{FULLWIDTH_KEY}\n",
    "a key around bidi controls": f"## Keys\n{BIDI_KEY}\n",
    "database credentials in a URL": "## DB\npostgres://app:s3cr3t-pa55@db.internal:5432/app\n",
}
ORDINARY = (
    "## Conventions\n- Run `make test` before committing.\n- The API lives in `src/api.py`.\n"
    "- Docs: https://docs.example.com/guide#setup and git@github.com:org/repo.git\n"
    "- Session e6aa07e1-8859-45ee-8e66-91d02b620fdc, commit f660fa62750e03af1c9e99\n"
    "- MyVeryLongClassNameForTesting2024Handler and this_is_a_long_variable_name_2024\n"
)


@pytest.mark.parametrize("case", MISSED, ids=list(MISSED))
def test_each_missed_case_is_found(case: str) -> None:
    reason = text_secret_reason(MISSED[case])
    assert reason is not None and "line" in reason
    for secret in (GITHUB, SPLIT_KEY, JWT):
        assert secret not in reason


def test_ordinary_notes_pass() -> None:
    assert text_secret_reason(ORDINARY) is None
    for line in ORDINARY.splitlines():
        assert secret_reason(line) is None, line


def test_invisible_characters_are_removed_before_looking() -> None:
    assert visible(SPLIT_KEY) == SPLIT_KEY.replace("\u200b", "")
    assert visible(FULLWIDTH_KEY).startswith("sk-proj-")
    assert secret_reason(SPLIT_KEY) is not None
    assert secret_reason(BIDI_KEY) is not None


def test_redaction_leaves_no_part_of_a_secret() -> None:
    text = "\n".join([OPENSSH, f"token {JWT}", URL_TOKEN, f"key {SPLIT_KEY}", "plain line"])
    shown = redact_secrets(text)
    for part in ("b3BlbnNzaC1rZXkt", "eyJhbGciOiJIUzI1NiIs", GITHUB, "Zq3v9XkT2m", "Lw8RbN4s"):
        assert part not in shown, part
    assert "plain line" in shown and "[redacted]" in shown


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawServer, Path]]:
    home = tmp_path_factory.mktemp("detector-home")
    workspace = tmp_path_factory.mktemp("detector-workspace")
    running = RawServer.start(home, workspace)
    yield running, workspace
    running.stop()


@pytest.mark.parametrize("case", MISSED, ids=list(MISSED))
def test_the_workspace_memory_refuses_them(server: tuple[RawServer, Path], case: str) -> None:
    running, workspace = server
    answer = running.call(
        methods.SET_WORKSPACE_MEMORY,
        {"workingDir": str(workspace), "text": MISSED[case], "baseRevision": 0},
    )
    assert "error" in answer, answer
    assert "line" in answer["error"]["message"]
    for secret in (GITHUB, "Zq3v9XkT2m", JWT[:30], "b3BlbnNzaC1rZXkt"):
        assert secret not in str(answer)
        assert secret not in running.log_text()


def test_the_workspace_memory_keeps_ordinary_notes(server: tuple[RawServer, Path]) -> None:
    running, workspace = server
    answer = running.call(
        methods.SET_WORKSPACE_MEMORY,
        {"workingDir": str(workspace), "text": ORDINARY, "baseRevision": 0},
    )
    assert answer["result"]["revision"] >= 1, answer

"""Attack: the disk under the history database fills up (issue 16 item 2).

On a small tmpfs holding ``RELAVIUM_HOME`` (database and log): a turn sent while the disk is
full ends with a message that says the disk is full and names the database — not "an internal
error (see the log)", whose log is on the same full disk — reads keep working, stderr gets at
most one line about the log, and once space returns the next turn works with nothing lost.
Needs a tmpfs mount (root with CAP_SYS_ADMIN); elsewhere it skips and says why.
"""

from __future__ import annotations

import errno
import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from relavium_lsp.logs import PrivateRotatingFileHandler
from relavium_lsp.server import methods
from tests.e2e.lsp_harness import configure_loopback_provider
from tests.unit.attack.raw_server import RawServer
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream

TMPFS_BYTES = 6 * 1024 * 1024
BIG_MESSAGE = "y" * 150_000  # needs fresh pages in the write-ahead log


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of a few MB at ``tmp_path/home/.relavium`` (skipped where it cannot mount)."""
    mount_point = tmp_path / "home" / ".relavium"
    mount_point.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES},mode=0700", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        reason = (mounted.stderr or mounted.stdout).strip() or f"exit {mounted.returncode}"
        print(f"disk-full attack skipped: cannot mount a tmpfs here ({reason})")
        pytest.skip(f"cannot mount a tmpfs here: {reason}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False, capture_output=True)


def fill(directory: Path) -> Path:
    """Write a file until the disk has no space left; returns it."""
    filler = directory / "filler"
    chunk = b"\0" * 65536
    with filler.open("wb") as handle:
        try:
            while True:
                handle.write(chunk)
                handle.flush()
        except OSError as error:
            assert error.errno == errno.ENOSPC
    for size in (4096, 512, 1):  # the last crumbs too
        try:
            with filler.open("ab") as handle:
                while True:
                    handle.write(b"\0" * size)
                    handle.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_says_so_keeps_reading_and_recovers(small_disk: Path, tmp_path: Path) -> None:
    home = small_disk.parent
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(*(openai_stream(text=["Noted."], usage=(10, 2)) for _ in range(3)))
        server = RawServer.start(home, workspace)
        try:
            started = server.call(
                methods.START_SESSION,
                {"agentRef": "coder", "context": {"workingDir": str(workspace)}},
            )
            session_id = started["result"]["sessionId"]
            first = server.call(methods.SEND_MESSAGE, {"sessionId": session_id, "text": "one"})
            assert first["result"]["stopReason"] == "stop", first

            filler = fill(small_disk)
            stderr_before = server.stderr_text()
            full = server.call(methods.SEND_MESSAGE, {"sessionId": session_id, "text": BIG_MESSAGE})
            outcome = full.get("result", {}).get("error") or full.get("error")
            assert outcome is not None, full
            assert "disk" in outcome["message"] and "full" in outcome["message"], outcome
            assert str(small_disk / "history.db") in outcome["message"]
            assert "internal error" not in outcome["message"].lower()

            transcript = server.call(methods.GET_TRANSCRIPT, {"sessionId": session_id})
            texts = [m["content"][0]["text"] for m in transcript["result"]["messages"]]
            assert texts[:2] == ["one", "Noted."]
            listed = server.call(methods.LIST_SESSIONS, {})
            assert [s["id"] for s in listed["result"]["sessions"]] == [session_id]
            new_stderr = server.stderr_text()[len(stderr_before) :]
            assert "Logging error" not in new_stderr and "Traceback" not in new_stderr
            assert new_stderr.count("cannot write the log") <= 1

            filler.unlink()
            again = server.call(methods.SEND_MESSAGE, {"sessionId": session_id, "text": "three"})
            assert again["result"]["stopReason"] == "stop", again
            transcript = server.call(methods.GET_TRANSCRIPT, {"sessionId": session_id})
            texts = [m["content"][0]["text"] for m in transcript["result"]["messages"]]
            assert texts[:2] == ["one", "Noted."] and texts[-2:] == ["three", "Noted."]
        finally:
            assert server.stop() == 0


class _FullDisk:
    """A stream whose every write fails the way a full disk does."""

    failing = True

    def write(self, text: str) -> int:
        if self.failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        return len(text)

    def flush(self) -> None:
        """Nothing buffered."""

    def seek(self, offset: int, whence: int = 0) -> int:
        """The rotation check asks where the end is."""
        return 0

    def tell(self) -> int:
        """An empty file."""
        return 0

    def close(self) -> None:
        """Nothing to close."""


def test_an_unwritable_log_says_so_once_and_again_when_it_recovers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handler = PrivateRotatingFileHandler(
        tmp_path / "x.log", maxBytes=10_000, backupCount=1, delay=True
    )
    stream = _FullDisk()
    handler.stream = stream  # type: ignore[assignment]
    record = logging.LogRecord("t", logging.WARNING, __file__, 1, "hello", None, None)
    for _ in range(50):
        handler.emit(record)
    stream.failing = False
    handler.emit(record)
    handler.close()
    err = capsys.readouterr().err
    assert err.count("cannot write the log") == 1
    assert "No space left on device" in err
    assert err.count("is writable again") == 1
    assert "Logging error" not in err and "Traceback" not in err

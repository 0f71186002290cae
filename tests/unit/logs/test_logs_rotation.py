"""The log file: rotation, private modes, levels, a quiet stderr, and no secrets."""

from __future__ import annotations

import logging
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcServerError

from relavium_lsp import logs

SECRET = "sk-live-logs-test-0123456789"


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    library_levels = {name: logging.getLogger(name).level for name in logs.CHATTY_LIBRARIES}
    rpc = logging.getLogger(logs.PYGLS_RPC_LOGGER)
    rpc_filters = list(rpc.filters)
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers, root.level = handlers, level
    for name, library_level in library_levels.items():
        logging.getLogger(name).setLevel(library_level)
    rpc.filters = rpc_filters


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_file_rotates_and_every_file_stays_private(tmp_path: Path) -> None:
    path = logs.configure_logging(tmp_path, "INFO", max_bytes=2_000, backup_count=2)
    assert path == tmp_path / "logs" / logs.LOG_FILE_NAME
    log = logging.getLogger("relavium_lsp.test")
    for number in range(200):
        log.info("line %04d %s", number, "x" * 40)
    rotated = sorted(p.name for p in path.parent.iterdir())
    assert rotated == [logs.LOG_FILE_NAME, f"{logs.LOG_FILE_NAME}.1", f"{logs.LOG_FILE_NAME}.2"]
    for file in path.parent.iterdir():
        assert file.stat().st_size <= 2_000
        assert mode(file) == 0o600, file
    assert mode(path.parent) == 0o700
    assert "line 0199" in path.read_text(encoding="utf-8")  # the newest lines are kept


def test_registered_secrets_are_redacted_in_file_and_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = logs.configure_logging(tmp_path, "DEBUG")
    logs.register_secret(SECRET)
    log = logging.getLogger("relavium_lsp.test")
    log.warning("calling with key %s", SECRET)
    try:
        raise RuntimeError(f"provider rejected {SECRET}")
    except RuntimeError:
        log.exception("request failed")
    text = path.read_text(encoding="utf-8")
    stderr = capfd.readouterr().err
    assert SECRET not in text and SECRET not in stderr
    assert text.count("[redacted]") >= 2 and "[redacted]" in stderr


def test_stderr_gets_only_warnings_and_the_file_follows_the_level(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(logs.LOG_LEVEL_ENV, "warning")
    path = logs.configure_logging(tmp_path)
    log = logging.getLogger("relavium_lsp.test")
    log.info("chatter")
    log.warning("worth knowing")
    stderr = capfd.readouterr().err
    assert "chatter" not in stderr and "worth knowing" in stderr
    text = path.read_text(encoding="utf-8")
    assert "chatter" not in text and "worth knowing" in text

    path = logs.configure_logging(tmp_path, "debug")  # the argument wins over the variable
    log.debug("details")
    assert "details" in path.read_text(encoding="utf-8")
    assert "details" not in capfd.readouterr().err


def test_unknown_level_names_mean_info() -> None:
    assert logs.log_level_number("BASIC_FORMAT") == logging.INFO
    assert logs.log_level_number("nonsense") == logging.INFO
    assert logs.log_level_number("error") == logging.ERROR


def test_library_message_bodies_are_logged_only_at_debug(tmp_path: Path) -> None:
    path = logs.configure_logging(tmp_path, "INFO")
    rpc = logging.getLogger(logs.PYGLS_RPC_LOGGER)
    rpc.info("Sending data: %s", '{"text": "private conversation"}')
    assert "private conversation" not in path.read_text(encoding="utf-8")
    path = logs.configure_logging(tmp_path, "DEBUG")
    rpc.info("Sending data: %s", '{"text": "now on purpose"}')
    assert "now on purpose" in path.read_text(encoding="utf-8")


def test_answered_jsonrpc_errors_do_not_print_tracebacks(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = logs.configure_logging(tmp_path, "INFO")
    rpc = logging.getLogger(logs.PYGLS_RPC_LOGGER)
    try:
        raise JsonRpcServerError("no session with id 'x'", -32001)
    except JsonRpcServerError:
        rpc.exception('Exception occurred for message "%s"', "42")
    try:
        raise ValueError("a real bug")
    except ValueError:
        rpc.exception('Exception occurred for message "%s"', "43")
    stderr = capfd.readouterr().err
    text = path.read_text(encoding="utf-8")
    assert "no session with id" not in stderr  # answered to the client; not an editor's concern
    assert "INFO pygls.protocol.json_rpc: answered a request with JSON-RPC error -32001" in text
    assert "Traceback" in stderr and "a real bug" in stderr  # a real failure stays loud
    assert text.count("Traceback") == 1


def test_configuring_again_replaces_and_closes_the_old_handlers(tmp_path: Path) -> None:
    logs.configure_logging(tmp_path / "one", "INFO")
    first = [h for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler)]
    logs.configure_logging(tmp_path / "two", "INFO", file_name="other.log")
    handlers = logging.getLogger().handlers
    assert len(handlers) == 2
    assert first[0] not in handlers and first[0].stream is None  # closed
    logging.getLogger("relavium_lsp.test").warning("goes to the new file")
    assert "goes to the new file" in (tmp_path / "two" / "logs" / "other.log").read_text(
        encoding="utf-8"
    )

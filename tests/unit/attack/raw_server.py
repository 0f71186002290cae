"""A real ``relavium-lsp serve`` process spoken to in raw bytes (the attack suite's client).

pytest-lsp frames every message correctly, which is exactly what an attacker does not do:
this client writes whatever bytes a test gives it and reads the server's framed answers on a
thread, so a test can send garbage and then ask whether a valid request is still answered.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ANSWER_DEADLINE_S = 90.0  # a loaded, shared machine; a passing test never gets near it
EXIT_DEADLINE_S = 60.0


def frame(message: dict[str, Any] | bytes) -> bytes:
    """One correctly framed LSP message."""
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(request_id: int, method: str, params: Any = None) -> dict[str, Any]:
    """A JSON-RPC request object."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def server_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """An environment that keeps the server's data under ``home``."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "RELAVIUM_HOME": str(home / ".relavium"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        **(extra or {}),
    }


@dataclass
class RawProcess:
    """A relavium-lsp process driven over its raw stdin and stdout, and what it has sent."""

    process: subprocess.Popen[bytes]
    home: Path
    stderr_path: Path
    messages: queue.Queue[dict[str, Any] | None] = field(default_factory=queue.Queue)
    answers: dict[Any, dict[str, Any]] = field(default_factory=dict)
    _next_id: int = 1000
    _reader: threading.Thread = field(default_factory=threading.Thread)

    @property
    def log_path(self) -> Path:
        """The process's rotating log file."""
        return self.home / ".relavium" / "logs" / "relavium-lsp.log"

    def send(self, data: bytes) -> None:
        """Write raw bytes to the process's stdin."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def new_id(self) -> int:
        """A request id not used before."""
        self._next_id += 1
        return self._next_id

    def stderr_text(self) -> str:
        """What the process wrote to stderr so far."""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def log_text(self) -> str:
        """The process's log file so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")


class RawServer(RawProcess):
    """A running server process and the messages it has sent."""

    @classmethod
    def start(
        cls, home: Path, workspace: Path | None = None, *, env: dict[str, str] | None = None
    ) -> RawServer:
        """Start ``relavium-lsp serve`` and initialize it (on ``workspace`` when given)."""
        stderr_path = home / "server-stderr.log"
        stderr = stderr_path.open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "relavium_lsp", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=server_env(home, env),
            cwd=str(workspace or home),
        )
        stderr.close()
        server = cls(process=process, home=home, stderr_path=stderr_path)
        server._reader = threading.Thread(target=server._read_stdout, daemon=True)
        server._reader.start()
        params: dict[str, Any] = {"processId": None, "capabilities": {}, "rootUri": None}
        if workspace is not None:
            params["rootUri"] = workspace.as_uri()
            params["workspaceFolders"] = [{"uri": workspace.as_uri(), "name": workspace.name}]
        answer = server.call("initialize", params)
        assert "result" in answer, answer
        server.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        return server

    def call(self, method: str, params: Any = None, *, prefix: bytes = b"") -> dict[str, Any]:
        """Send ``prefix`` then a framed request; return its answer (result or error)."""
        request_id = self.new_id()
        self.send(prefix + frame(request(request_id, method, params)))
        return self.answer(request_id)

    def answer(self, request_id: Any) -> dict[str, Any]:
        """Wait for the response to ``request_id`` (answering server → client requests)."""
        while request_id not in self.answers:
            try:
                message = self.messages.get(timeout=ANSWER_DEADLINE_S)
            except queue.Empty:
                raise AssertionError(
                    f"no answer to request {request_id} within {ANSWER_DEADLINE_S}s; "
                    f"stderr: {self.stderr_text()[-2000:]}"
                ) from None
            if message is None:
                raise AssertionError(
                    f"the server closed stdout before answering {request_id} "
                    f"(exit {self.process.poll()}); stderr: {self.stderr_text()[-2000:]}"
                )
            if "method" in message and "id" in message:  # e.g. client/registerCapability
                self.send(frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
            elif "id" in message:
                self.answers[message["id"]] = message
        return self.answers.pop(request_id)

    def ping(self) -> dict[str, Any]:
        """A request every live server answers (with "method not found")."""
        return self.call("$/relavium-attack/ping", {})

    def close_stdin(self) -> int:
        """Close the server's input and return its exit code."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.close()
        code = self.process.wait(timeout=EXIT_DEADLINE_S)
        self._release_pipes()
        return code

    def stop(self) -> int:
        """Shut down politely (or kill when the server does not go); the exit code."""
        if self.process.poll() is None:
            try:
                self.call("shutdown")
                self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
                self.process.wait(timeout=EXIT_DEADLINE_S)
            except (AssertionError, OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self._release_pipes()
        return self.process.returncode

    def _release_pipes(self) -> None:
        self._reader.join(timeout=EXIT_DEADLINE_S)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None and not pipe.closed:
                try:
                    pipe.close()
                except OSError:
                    pass  # a broken pipe: the server is gone already

    def _read_stdout(self) -> None:
        stdout: IO[bytes] | None = self.process.stdout
        assert stdout is not None
        try:
            while True:
                length = None
                while True:
                    line = stdout.readline()
                    if not line:
                        return
                    if not line.strip():
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                assert length is not None
                self.messages.put(json.loads(stdout.read(length)))
        finally:
            self.messages.put(None)

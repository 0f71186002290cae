"""A real ``relavium-lsp acp`` process spoken to in raw bytes (newline-delimited JSON).

The ACP twin of :mod:`tests.unit.attack.raw_server`: a test writes whatever bytes it likes
to the agent's stdin and then asks whether a valid request is still answered.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from tests.unit.attack.raw_server import (
    ANSWER_DEADLINE_S,
    EXIT_DEADLINE_S,
    RawProcess,
    server_env,
)


def line(message: dict[str, Any]) -> bytes:
    """One ACP message: compact JSON and a newline."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


class RawAcpAgent(RawProcess):
    """A running ACP agent process and the messages it has sent."""

    @classmethod
    def start(cls, home: Path) -> RawAcpAgent:
        """Start ``relavium-lsp acp`` and initialize it."""
        stderr_path = home / "agent-stderr.log"
        stderr = stderr_path.open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "relavium_lsp", "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=server_env(home),
            cwd=str(home),
        )
        stderr.close()
        agent = cls(process=process, home=home, stderr_path=stderr_path)
        agent._reader = threading.Thread(target=agent._read_stdout, daemon=True)
        agent._reader.start()
        answer = agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert "result" in answer, answer
        return agent

    def call(self, method: str, params: Any = None, *, prefix: bytes = b"") -> dict[str, Any]:
        """Send ``prefix`` then a request; return its answer (result or error)."""
        request_id = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(prefix + line(message))
        return self.answer(request_id)

    def answer(self, request_id: Any) -> dict[str, Any]:
        """Wait for the response to ``request_id``."""
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
                    f"the agent closed stdout before answering {request_id} "
                    f"(exit {self.process.poll()}); stderr: {self.stderr_text()[-2000:]}"
                )
            if "id" in message and "method" not in message:
                self.answers[message["id"]] = message
        return self.answers.pop(request_id)

    def ping(self) -> dict[str, Any]:
        """A request every live agent answers (with "method not found")."""
        return self.call("relavium-attack/ping", {})

    def stop(self) -> int:
        """Close stdin and wait for the exit code (kill when the agent does not go)."""
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.close()
            self.process.wait(timeout=EXIT_DEADLINE_S)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=EXIT_DEADLINE_S)
        stdout = self.process.stdout
        if stdout is not None:
            stdout.close()
        return self.process.returncode

    def _read_stdout(self) -> None:
        stdout: IO[bytes] | None = self.process.stdout
        assert stdout is not None
        try:
            for raw in stdout:
                if raw.strip():
                    self.messages.put(json.loads(raw))
        finally:
            self.messages.put(None)

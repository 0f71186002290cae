"""The VS Code chat's own costs, measured in a real VS Code (code-server in headless Chromium).

What a user waits for once the server has answered — the webview's part (issue 37):

- **open a long chat**: a 2,000-message session (500 turns, each with a tool card) picked in
  the chat history, until its last message is on screen (the view shows the newest page and
  loads earlier ones on request). Goal < 500 ms.
- **a streamed token**: the chat's render of each patch while an answer streams, with all
  2,000 messages loaded into the view (the webview re-renders only the changed message, and
  items out of view are not laid out). Each patch carries one or more tokens; the p95 of
  the patch render must stay < 4 ms. Anchor: the same stream in a new, empty chat.
- **memory** (context): the webview's JS heap with the 2,000 messages loaded.

The session is real: written as a ``relavium-session/1.0`` transcript and imported with
``relavium-lsp sessions import`` into the history the server uses; the answer streams from a
loopback OpenAI-compatible model (:class:`bench.paced.PacedProvider`) at a steady rate. The
browser side is ``bench/vscode_chat.mjs`` (Playwright, Node 24 from the VS Code e2e cache); it
reads the times inside the webview (``performance.measure('relavium:patch')``, taken around
every patch by ``vscode-client/src/webview/main.ts``).

Skipped, with the reason printed, when the e2e cache (``scripts/install-e2e-deps.sh``,
``make e2e-vscode``) or the packaged extension cannot be had.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.paced import PacedProvider, percentile
from bench.report import Goal, Row, print_rows
from relavium_lsp.contracts.content import TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.contracts.session import AgentSessionRecord, SessionContext, SessionMessage
from relavium_lsp.export.jsonl import export_jsonl
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.testing.loopback import LoopbackServer, ReceivedRequest, ScriptedResponse

REPO = Path(__file__).resolve().parents[1]
CLIENT = REPO / "vscode-client"
DRIVER = Path(__file__).with_name("vscode_chat.mjs")
AGENT_ID = "streamer"
MODEL = "loopback-stream"
TITLE = "Benchmark: a long chat"
LAST_MARKER = "end-of-the-long-chat"
STREAM_TOKENS = 300
STREAM_RATE = 150.0  # tokens per second: a brisk real model


def _cache() -> Path:
    return Path(os.environ.get("RELAVIUM_E2E_CACHE", Path.home() / ".cache" / "relavium-e2e"))


def _missing(cache: Path) -> str | None:
    needed = {
        "Node 24": cache / "node24" / "node_modules" / ".bin" / "node",
        "code-server": cache / "code-server" / "node_modules" / ".bin" / "code-server",
        "playwright-core": cache / "playwright" / "node_modules" / "playwright-core",
        "Chromium": Path("/usr/bin/chromium"),
    }
    absent = [name for name, path in needed.items() if not path.exists()]
    if absent:
        return f"{', '.join(absent)} not in {cache} (run make e2e-vscode once)"
    return None


def _agent() -> dict[str, Any]:
    return {
        "id": AGENT_ID,
        "name": "Streamer",
        "description": "Answers from the benchmark's loopback model.",
        "model": MODEL,
        "provider": "loop",
        "system_prompt": "You help.",
        "tools": [],
    }


def long_chat(workspace: Path, turns: int) -> str:
    """A ``relavium-session/1.0`` transcript: ``turns`` rounds of question, tool call, answer."""
    messages: list[SessionMessage] = []
    now = utc_timestamp()

    def add(role: str, parts: list[Any]) -> None:
        sequence = len(messages) + 1
        messages.append(
            SessionMessage.model_validate(
                {
                    "id": f"m{sequence}",
                    "sessionId": "bench",
                    "sequenceNumber": sequence,
                    "role": role,
                    "content": [part.model_dump(mode="json", by_alias=True) for part in parts],
                    "timestamp": now,
                    **({"modelId": MODEL} if role == "assistant" else {}),
                }
            )
        )

    for turn in range(1, turns + 1):
        add("user", [TextPart(text=f"Question {turn}: what does module_{turn}.py do?")])
        call = ToolCallPart(id=f"call{turn}", name="read_file", args={"path": f"module_{turn}.py"})
        add("assistant", [TextPart(text="Let me read it."), call])
        result = f"def handler_{turn}(request):\n    return respond(request)\n" * 3
        add("tool", [ToolResultPart(tool_call_id=f"call{turn}", result=result)])
        last = f" {LAST_MARKER}" if turn == turns else ""
        answer = (
            f"`module_{turn}.py` defines **handler_{turn}**, which answers a request:\n\n"
            f"- it takes the request\n- it calls `respond`\n\n```python\nhandler_{turn}(r)\n```"
            f"{last}"
        )
        add("assistant", [TextPart(text=answer)])
    record = AgentSessionRecord(
        id="bench",
        agent_slug=AGENT_ID,
        agent_snapshot=_agent(),
        title=TITLE,
        model_id=MODEL,
        context=SessionContext(working_dir=str(workspace)),
        status="idle",
        source="cli",
        turn_count=turns,
        created_at=now,
        updated_at=now,
    )
    return export_jsonl(record, messages)


def _write_workspace(root: Path, model_url: str) -> tuple[Path, Path, dict[str, str]]:
    workspace = root / "workspace"
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True)
    (workspace / "README.md").write_text("# benchmark\n", encoding="utf-8")
    (agents / f"{AGENT_ID}.agent.yaml").write_text(
        json.dumps(_agent()) + "\n", encoding="utf-8"
    )  # JSON is YAML
    home = root / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[providers.loop]\nkind = "openai"\nbase_url = "{model_url}/v1"\n'
        "allow_local_endpoint = true\ntimeout_s = 30\n\n[introspection]\nenabled = false\n"
        # The long chat goes on past the default 50 turns; its history is trimmed for the
        # model, not summarised by it (the loopback model answers the benchmark's messages).
        "\n[chat]\nmax_turns = 1000\nauto_compact = false\n",
        encoding="utf-8",
    )
    env = {"RELAVIUM_HOME": str(home), "RELAVIUM_DB_KEY": os.urandom(32).hex()}
    return workspace, home, env


def _package() -> Path:
    """The extension as it ships (``npm run package``); raises with the tool's output."""
    npm = ["npm", "--prefix", str(CLIENT)]
    if not (CLIENT / "node_modules").exists():
        subprocess.run([*npm, "ci", "--prefer-offline", "--no-audit", "--no-fund"], check=True)
    subprocess.run([*npm, "run", "--silent", "package"], check=True, capture_output=True)
    return CLIENT / "relavium.vsix"


def _import(server: Path, env: dict[str, str], transcript: str) -> str:
    completed = subprocess.run(
        [str(server), "sessions", "import", "-", "--json"],
        input=transcript,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
    )
    return str(json.loads(completed.stdout)["sessionId"])


def _measure(turns: int, runs: int) -> dict[str, Any] | str:
    cache = _cache()
    missing = _missing(cache)
    if missing is not None:
        return missing
    server = REPO / ".venv" / "bin" / "relavium-lsp"
    if not server.exists():
        return f"{server} is missing (run make setup)"
    try:
        vsix = _package()
    except (OSError, subprocess.CalledProcessError) as error:
        return f"packaging the extension failed: {error}"
    paced = PacedProvider()

    def answer(request: ReceivedRequest) -> ScriptedResponse:
        paced.plan(STREAM_TOKENS, STREAM_RATE)  # every request gets the same steady answer
        return paced(request)

    with (
        LoopbackServer(responder=answer) as model,
        tempfile.TemporaryDirectory(prefix="relavium-bench-vscode-") as temp,
    ):
        root = Path(temp).resolve()
        workspace, _home, env = _write_workspace(root, model.url)
        session_id = _import(server, env, long_chat(workspace, turns))
        out = root / "result.json"
        config = {
            "cache": str(cache),
            "vsix": str(vsix),
            "server": str(server),
            "root": str(root),
            "workspace": str(workspace),
            "env": env,
            "sessionId": session_id,
            "lastMarker": LAST_MARKER,
            "finalToken": f"t{STREAM_TOKENS - 1} ",
            "runs": runs,
            "out": str(out),
            "failedScreenshot": str(REPO / "bench" / "results" / "vscode_chat-failed.png"),
        }
        node = cache / "node24" / "node_modules" / ".bin" / "node"
        completed = subprocess.run([str(node), str(DRIVER), json.dumps(config)], check=False)
        if completed.returncode != 0 or not out.exists():
            return (
                f"the browser driver failed (exit {completed.returncode}; its last screen is"
                " bench/results/vscode_chat-failed.png)"
            )
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return result


def _stream_rows(result: dict[str, Any]) -> list[Row]:
    def token_patches(patches: list[dict[str, Any]]) -> list[float]:
        return [float(patch["ms"]) for patch in patches if not patch["reordered"]]

    empty = token_patches(result["emptyPatches"])
    long = token_patches(result["longPatches"])
    boundaries = [float(p["ms"]) for p in result["longPatches"] if p["reordered"]]
    tokens = int(result["tokens"])
    every = [float(patch["ms"]) for patch in result["longPatches"]]
    return [
        Row(
            measure="VS Code: render of a streamed-token patch, 2,000 messages loaded (p95)",
            value=percentile(long, 0.95),
            unit="ms",
            anchor="same, new chat",
            anchor_value=percentile(empty, 0.95),
            goal=Goal(limit=4.0, on="value", strict=True),
            note=f"{len(long)} token patches for {tokens} tokens, median"
            f" {statistics.median(long):.2f} ms, max {max(long, default=0):.1f} ms;"
            f" {result['messagesInView']:,} items in the view",
        ),
        Row(
            measure="VS Code: render time per streamed token (long chat, mean)",
            value=sum(every) / tokens if tokens else float("nan"),
            unit="ms",
            note="every patch of the answer (its start and end too) / its tokens; the"
            f" {len(boundaries)} reordering patches took up to {max(boundaries, default=0):.1f} ms",
        ),
    ]


def rows(quick: bool) -> list[Row]:
    """The chat's open, stream and memory rows (``quick``: fewer open repetitions)."""
    result = _measure(turns=500, runs=2 if quick else 5)
    if isinstance(result, str):
        print(f"bench.vscode_chat skipped: {result}", file=sys.stderr)
        return []
    opens = [float(ms) for ms in result["openMs"]]
    return [
        Row(
            measure="VS Code: open a 2,000-message chat to its last message (median)",
            value=statistics.median(opens),
            unit="ms",
            goal=Goal(limit=500.0, on="value", strict=True),
            note=f"{len(opens)} opens, {min(opens):.0f}-{max(opens):.0f} ms",
        ),
        *_stream_rows(result),
        Row(
            measure="VS Code: webview JS heap, 2,000 messages loaded",
            value=float(result["heapMb"]),
            unit="MB",
            anchor="a new chat",
            anchor_value=float(result["heapEmptyMb"]),
            note="Chromium's performance.memory: coarse, and no garbage collection is forced",
        ),
    ]


def main() -> None:
    """Run the benchmark and print its rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    print_rows(rows(parser.parse_args().quick))


if __name__ == "__main__":
    main()

"""Reading the client's input on the event loop (``server/stdio.py``), and the thread fallback.

A real pipe stands in for the editor: messages are dispatched on the loop's thread, a burst
in slices with the loop running in between (none waiting for more input), a flood read only
as fast as it is dispatched, and the server ends on end of input, the stop event or
``exit`` with the descriptor unwatched. Input the loop cannot watch (a regular file, a stream
without a descriptor) is read on a thread as before.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from relavium_lsp.server.framing import READ_CHUNK_BYTES, FrameParser
from relavium_lsp.server.stdio import (
    BODIES_PER_LOOP_TURN,
    DescriptorStream,
    LoopInput,
    descriptor_of,
    serve_frames,
)

DEADLINE_S = 60.0  # a loaded, shared machine; a passing test never gets near it


def frame(message_id: int, padding: int = 0) -> bytes:
    """One framed notification-shaped message carrying ``message_id``."""
    body = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"n": message_id}})
    body += " " * padding
    return b"Content-Length: %d\r\n\r\n" % len(body.encode()) + body.encode()


class RecordingProtocol:
    """The two things :func:`dispatch` uses of pygls's protocol, recording each message."""

    def __init__(self, on_message: Callable[[int], None] | None = None) -> None:
        self.handled: list[int] = []
        self.threads: list[str] = []
        self._on_message = on_message

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Objects with ``jsonrpc`` become messages (as pygls's hook does)."""
        return SimpleNamespace(**data) if "jsonrpc" in data else data

    def handle_message(self, message: Any) -> None:
        """Record the message's number (and the thread it was handled on)."""
        self.handled.append(message.params["n"])
        self.threads.append(threading.current_thread().name)
        if self._on_message is not None:
            self._on_message(message.params["n"])


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    """A pipe: (read end, write end), both closed afterwards if still open."""
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for descriptor in (read_end, write_end):
        try:
            os.close(descriptor)
        except OSError:
            pass  # closed by the test already


def serve(protocol: RecordingProtocol, descriptor: int, stop: threading.Event | None = None) -> Any:
    """``serve_frames`` on ``descriptor`` (as ``start_framed_io`` calls it)."""
    return serve_frames(
        stop or threading.Event(),
        cast(Any, protocol),
        stream=DescriptorStream(descriptor),
        descriptor=descriptor,
    )


async def test_messages_are_dispatched_on_the_loop_and_end_of_input_ends_serving(
    pipe: tuple[int, int], caplog: pytest.LogCaptureFixture
) -> None:
    read_end, write_end = pipe
    protocol = RecordingProtocol()
    os.write(write_end, frame(1) + frame(2) + b"garbage\r\n" + frame(3))
    os.close(write_end)
    with caplog.at_level("INFO", logger="relavium_lsp.server.stdio"):
        await asyncio.wait_for(serve(protocol, read_end), DEADLINE_S)
    assert protocol.handled == [1, 2, 3]
    assert set(protocol.threads) == {threading.current_thread().name}  # no reader thread
    assert "the client closed the server's input; exiting" in caplog.messages
    assert not asyncio.get_running_loop().remove_reader(read_end)  # no longer watched


async def test_a_burst_is_dispatched_in_slices_and_none_waits_for_more_input(
    pipe: tuple[int, int],
) -> None:
    read_end, write_end = pipe
    loop_turns = 0
    turn_of_each: list[int] = []
    all_handled = asyncio.Event()
    count = 100 * BODIES_PER_LOOP_TURN

    def on_message(number: int) -> None:
        turn_of_each.append(loop_turns)
        if number == count:
            all_handled.set()

    async def count_loop_turns() -> None:
        nonlocal loop_turns
        while True:
            loop_turns += 1
            await asyncio.sleep(0)

    counter = asyncio.create_task(count_loop_turns())
    protocol = RecordingProtocol(on_message)
    os.write(write_end, b"".join(frame(number) for number in range(1, count + 1)))
    serving = asyncio.create_task(serve(protocol, read_end))
    # The write end stays open: every buffered message must be dispatched without more input.
    await asyncio.wait_for(all_handled.wait(), DEADLINE_S)
    assert protocol.handled == list(range(1, count + 1))
    slices = Counter(turn_of_each)
    assert max(slices.values()) <= BODIES_PER_LOOP_TURN  # other work ran between slices
    assert len(slices) >= count // BODIES_PER_LOOP_TURN
    os.close(write_end)
    await asyncio.wait_for(serving, DEADLINE_S)
    counter.cancel()


async def test_a_flood_is_read_only_as_fast_as_it_is_dispatched(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    message = frame(0, padding=1000)
    count = 4 * 1024  # about 4 MiB, far more than a pipe holds
    parser = FrameParser()
    most_held = 0

    def on_message(_number: int) -> None:
        nonlocal most_held
        most_held = max(most_held, parser.buffered_bytes)

    def write_flood() -> None:
        with os.fdopen(write_end, "wb", buffering=0) as pipe_in:
            for _ in range(count):
                pipe_in.write(message)

    protocol = RecordingProtocol(on_message)
    loop_input = LoopInput(read_end, parser, cast(Any, protocol), threading.Event())
    assert loop_input.start()
    writer = threading.Thread(target=write_flood)
    writer.start()
    try:
        await asyncio.wait_for(loop_input.finished, DEADLINE_S)
    finally:
        loop_input.close()
        writer.join(DEADLINE_S)
    assert len(protocol.handled) == count
    assert most_held <= READ_CHUNK_BYTES + len(message)


async def test_the_stop_event_ends_serving_after_the_message_that_set_it(
    pipe: tuple[int, int],
) -> None:
    read_end, write_end = pipe
    stop = threading.Event()

    def on_message(number: int) -> None:
        if number == 2:
            stop.set()  # what server.shutdown() does

    protocol = RecordingProtocol(on_message)
    os.write(write_end, b"".join(frame(number) for number in range(1, 6)))
    await asyncio.wait_for(serve(protocol, read_end, stop), DEADLINE_S)
    assert protocol.handled == [1, 2]
    assert not asyncio.get_running_loop().remove_reader(read_end)


async def test_exit_raises_where_the_server_expects_it(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe

    def on_message(number: int) -> None:
        if number == 2:
            raise SystemExit(0)  # pygls's exit handler

    protocol = RecordingProtocol(on_message)
    os.write(write_end, b"".join(frame(number) for number in range(1, 4)))
    with pytest.raises(SystemExit):
        await serve(protocol, read_end)  # not in a task of its own: SystemExit ends a loop
    assert protocol.handled == [1, 2]
    assert not asyncio.get_running_loop().remove_reader(read_end)


async def test_a_regular_file_is_read_on_a_thread(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "input"
    path.write_bytes(frame(1) + frame(2))
    protocol = RecordingProtocol()
    with path.open("rb") as file, caplog.at_level("INFO", logger="relavium_lsp.server.stdio"):
        await asyncio.wait_for(serve(protocol, file.fileno()), DEADLINE_S)
    assert protocol.handled == [1, 2]
    assert "the event loop cannot watch the client's input" in caplog.text
    assert "the client closed the server's input; exiting" in caplog.messages


async def test_a_stream_without_a_descriptor_is_read_on_a_thread() -> None:
    stream = io.BytesIO(frame(1) + frame(2))
    assert descriptor_of(stream) is None
    protocol = RecordingProtocol()
    await asyncio.wait_for(
        serve_frames(threading.Event(), cast(Any, protocol), stream=stream, descriptor=None),
        DEADLINE_S,
    )
    assert protocol.handled == [1, 2]


async def test_input_the_selector_refuses_is_read_on_a_thread(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # /dev/null is a character device, like a terminal, but epoll refuses it (EPERM).
    descriptor = os.open(os.devnull, os.O_RDONLY)
    try:
        with caplog.at_level("INFO", logger="relavium_lsp.server.stdio"):
            await asyncio.wait_for(serve(RecordingProtocol(), descriptor), DEADLINE_S)
    finally:
        os.close(descriptor)
    assert "the event loop cannot watch the client's input" in caplog.text
    assert "the client closed the server's input; exiting" in caplog.messages

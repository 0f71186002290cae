"""The loopback wire servers other test suites build on."""

from __future__ import annotations

import httpx

from tests.unit.llm.wire_servers import LoopbackServer, ScriptedResponse, openai_stream


def test_scripted_responses_in_order_then_a_recorded_miss():
    with LoopbackServer() as server, httpx.Client(base_url=server.url) as http:
        server.script(
            ScriptedResponse(status=201, headers={"x-one": "1"}, body=b"first"),
            ScriptedResponse(body=[b"chunked ", b"second"]),
        )
        first = http.post("/a", json={"n": 1}, headers={"x-test": "yes"})
        second = http.get("/b")
        third = http.get("/c")
        assert (first.status_code, first.text, first.headers["x-one"]) == (201, "first", "1")
        assert second.text == "chunked second"
        assert third.status_code == 500
        assert [r.path for r in server.requests] == ["/a", "/b", "/c"]
        assert server.requests[0].json() == {"n": 1}
        assert server.requests[0].headers["x-test"] == "yes"
        assert [r.path for r in server.unscripted] == ["/c"]


def test_responder_and_chunked_request_bodies():
    def echo(request):
        return ScriptedResponse(body=request.method.encode() + b" " + request.body)

    with LoopbackServer(responder=echo) as server, httpx.Client(base_url=server.url) as http:
        streamed = http.post("/x", content=iter([b"part-1 ", b"part-2"]))
        assert streamed.text == "POST part-1 part-2"
        assert server.wait_for_requests(1)


def test_a_failing_responder_answers_500_and_is_recorded():
    def broken(request):
        raise ValueError("boom")

    with LoopbackServer(responder=broken) as server, httpx.Client(base_url=server.url) as http:
        assert http.get("/").status_code == 500
        assert "boom" in server.errors[0]


async def test_usable_from_async_code_and_keep_alive():
    async with LoopbackServer() as server, httpx.AsyncClient() as http:
        server.script(openai_stream(text=["a"]), openai_stream(text=["b"]))
        for _ in range(2):
            response = await http.post(f"{server.url}/v1/chat/completions", json={})
            assert response.headers["content-type"] == "text/event-stream"
            assert "data: [DONE]" in response.text
        assert len(server.requests) == 2


def test_garbage_request_is_recorded_and_the_server_keeps_serving():
    import socket

    with LoopbackServer() as server, httpx.Client(base_url=server.url) as http:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as raw:
            raw.sendall(b"NONSENSE\r\n\r\n")
            assert raw.recv(100) == b""  # the server hung up
        server.script(ScriptedResponse(body=b"still here"))
        assert http.get("/").text == "still here"
        assert "connection failed" in server.errors[0]

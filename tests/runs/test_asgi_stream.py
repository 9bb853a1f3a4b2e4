"""The in-process transport of the embedded bridge (runs/asgi_stream.py) against small real
ASGI apps: chunks arrive as they are sent, a closed response cancels the app, the request
body arrives whole, an app that fails before answering is a transport error."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from agent_chat.runs.asgi_stream import StreamingASGITransport


def streaming_app(release: asyncio.Event, ended: list[str]) -> Starlette:
    async def stream(request: Request) -> StreamingResponse:
        async def body():
            try:
                yield b"first\n"
                await release.wait()  # httpx's ASGITransport would wait here before returning
                yield b"second\n"
            finally:
                ended.append("stream")

        return StreamingResponse(body(), media_type="text/plain")

    routes = [Route("/stream", stream), Route("/echo", echo, methods=["POST"])]
    return Starlette(routes=[*routes, Route("/x", broken)])


async def echo(request: Request) -> JSONResponse:
    return JSONResponse({"got": (await request.json()), "q": request.query_params.get("q")})


async def broken(request: Request) -> JSONResponse:
    raise RuntimeError("boom")


def client(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=StreamingASGITransport(app), base_url="http://127.0.0.1", timeout=5
    )


async def test_chunks_arrive_as_they_are_sent_and_closing_cancels_the_app() -> None:
    release, ended = asyncio.Event(), []
    async with (
        asyncio.timeout(5),
        client(streaming_app(release, ended)) as http,
        http.stream("GET", "/stream") as response,
    ):
        assert response.status_code == 200
        assert await response.aiter_lines().__anext__() == "first"
    # Closed while the app waits: it is told (http.disconnect) and its generator ends.
    for _ in range(50):
        if ended:
            break
        await asyncio.sleep(0.02)
    assert ended == ["stream"]


async def test_the_whole_stream_and_a_request_body() -> None:
    release = asyncio.Event()
    release.set()
    async with client(streaming_app(release, [])) as http:
        assert (await http.get("/stream")).text == "first\nsecond\n"
        reply = await http.post("/echo?q=1", json={"a": [1, 2]})
        assert reply.json() == {"got": {"a": [1, 2]}, "q": "1"}


async def test_a_failing_app_is_an_error_never_a_hang() -> None:
    async with client(streaming_app(asyncio.Event(), [])) as http:
        reply = await http.get("/x")  # Starlette's error middleware answers 500 first
        assert reply.status_code == 500

    async def raw(scope, receive, send) -> None:
        raise RuntimeError("no answer at all")

    async with client(raw) as http:
        with pytest.raises(httpx.RemoteProtocolError, match="without an answer"):
            await http.get("/")


async def test_an_app_that_never_answers_times_out() -> None:
    async def silent(scope, receive, send) -> None:
        await asyncio.Event().wait()

    async with httpx.AsyncClient(
        transport=StreamingASGITransport(silent), base_url="http://127.0.0.1", timeout=0.3
    ) as http:
        with pytest.raises(httpx.ReadTimeout):
            await http.get("/")


async def test_closing_is_bounded_when_the_app_ignores_its_cancel(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A shutdown closes every stream: one app that swallows its cancel must not hang it."""
    monkeypatch.setattr("agent_chat.runs.asgi_stream.CLOSE_WAIT_S", 0.2)
    stop = asyncio.Event()

    async def stubborn(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x", "more_body": True})
        while not stop.is_set():
            with contextlib.suppress(asyncio.CancelledError):  # what a careless app does
                await stop.wait()

    async with (
        asyncio.timeout(3),
        client(stubborn) as http,
        http.stream("GET", "/") as response,
    ):
        assert await response.aiter_bytes().__anext__() == b"x"
    assert "did not stop after the client closed" in caplog.text
    stop.set()


async def test_a_cancel_that_comes_as_a_chunk_arrives_is_kept() -> None:
    """Python 3.11's wait_for returned the chunk and dropped such a cancel: the reader (a run's
    consumer at shutdown) read on and the shutdown waited for it forever. At every point of
    the chunk's way to the reader, a cancel ends the reader."""
    from agent_chat.runs.asgi_stream import _END, _ResponseBody

    for steps in range(8):
        chunks: asyncio.Queue = asyncio.Queue()
        app = asyncio.create_task(asyncio.Event().wait())
        body = _ResponseBody(chunks, app, asyncio.Event(), read_timeout=60)
        got: list[bytes] = []

        async def read(body: _ResponseBody = body, got: list[bytes] = got) -> None:
            async for chunk in body:
                got.append(chunk)

        reader = asyncio.create_task(read())
        await asyncio.sleep(0)  # the reader waits for a chunk
        chunks.put_nowait(b"x")
        for _ in range(steps):
            await asyncio.sleep(0)
        reader.cancel()
        done, _ = await asyncio.wait([reader], timeout=1)
        alive = not done
        chunks.put_nowait(_END)  # a reader that kept going ends (another cancel might be lost)
        app.cancel()
        async with asyncio.timeout(5):
            await asyncio.gather(reader, app, return_exceptions=True)
        assert not alive, f"the cancel was lost after {steps} loop steps"

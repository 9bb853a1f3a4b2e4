"""An httpx transport that calls an ASGI app in this process and streams its answer.

httpx's own `ASGITransport` collects the whole body before it returns the response, so an
SSE stream (the bridge's `/runs/{id}/events`, open until the run ends) would never arrive.
Here the app runs as a task of the caller's event loop and each body chunk reaches the
reader as it is sent; closing the response tells the app the client went away
(`http.disconnect`) and cancels it. No socket, no port: nothing outside the process can
reach the app through it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import httpx
from starlette.types import ASGIApp

log = logging.getLogger(__name__)

CLOSE_WAIT_S = 5.0  # how long closing a response waits for the app task to end
_END = object()  # the app sent its last body chunk (or ended)


class _ResponseBody(httpx.AsyncByteStream):
    def __init__(
        self,
        chunks: asyncio.Queue,
        task: asyncio.Task,
        disconnected: asyncio.Event,
        read_timeout: float | None,
    ) -> None:
        self._chunks = chunks
        self._task = task
        self._disconnected = disconnected
        self._read_timeout = read_timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            try:
                # Not wait_for: on Python 3.11 it drops a cancel that comes as a chunk
                # arrives, and the reader (a run's consumer at shutdown) never ends.
                async with asyncio.timeout(self._read_timeout):
                    item = await self._chunks.get()
            except TimeoutError as exc:
                raise httpx.ReadTimeout("no data from the in-process app in time") from exc
            if item is _END:
                return
            if isinstance(item, BaseException):
                # The app failed mid-answer: to the reader it is a broken connection.
                raise httpx.ReadError(f"the in-process app failed: {item!r}") from item
            yield item

    async def aclose(self) -> None:
        self._disconnected.set()
        if not self._task.done():
            self._task.cancel()
        # Bounded, as a socket's close is: an app that ignores its cancel is left behind.
        done, _ = await asyncio.wait([self._task], timeout=CLOSE_WAIT_S)
        if not done:
            log.warning(
                "in-process app task %s did not stop after the client closed", self._task.get_name()
            )
        elif not self._task.cancelled():
            self._task.exception()  # retrieved: its failure was already logged or passed on


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """`httpx.AsyncClient(transport=StreamingASGITransport(app), base_url=...)`."""

    def __init__(self, app: ASGIApp, *, client: tuple[str, int] = ("127.0.0.1", 0)) -> None:
        self.app = app
        self.client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        scope: dict[str, Any] = {
            "type": "http",
            # No spec_version 2.4: Starlette then listens for `http.disconnect` while it
            # streams, which is how a closed response stops the app.
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(k.lower(), v) for (k, v) in request.headers.raw],
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "server": (request.url.host, request.url.port or 80),
            "client": self.client,
            "root_path": "",
        }
        timeouts = request.extensions.get("timeout", {})
        read_timeout = timeouts.get("read")
        body = b"".join([part async for part in request.stream])  # type: ignore[union-attr]
        body_sent = False
        disconnected = asyncio.Event()
        started = asyncio.Event()
        head: dict[str, Any] = {}
        chunks: asyncio.Queue = asyncio.Queue()

        async def receive() -> dict[str, Any]:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                head["status"] = message["status"]
                head["headers"] = message.get("headers", [])
                started.set()
            elif message["type"] == "http.response.body":
                if message.get("body") and request.method != "HEAD":
                    chunks.put_nowait(bytes(message["body"]))
                if not message.get("more_body", False):
                    chunks.put_nowait(_END)

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # what a server would log: the app's own failure
                log.error("in-process app failed on %s", request.url.path, exc_info=exc)
                if started.is_set():
                    chunks.put_nowait(exc)
                else:
                    head["error"] = exc
            finally:
                started.set()
                chunks.put_nowait(_END)

        task = asyncio.create_task(run(), name=f"asgi {request.method} {request.url.path}")
        try:
            async with asyncio.timeout(read_timeout):
                await started.wait()
        except TimeoutError as exc:
            task.cancel()
            raise httpx.ReadTimeout("the in-process app did not answer in time") from exc
        except asyncio.CancelledError:
            task.cancel()
            raise
        if "status" not in head:
            error = head.get("error")
            raise httpx.RemoteProtocolError(
                f"the in-process app ended without an answer ({error!r})"
            ) from error
        return httpx.Response(
            head["status"],
            headers=head["headers"],
            stream=_ResponseBody(chunks, task, disconnected, read_timeout),
        )

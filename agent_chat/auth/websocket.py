"""A websocket that lives only as long as its session.

The handshake was checked by the gate; while the socket is open a task asks `still_valid`
every `interval` seconds (one indexed query) and, as soon as the session is revoked, expired
or its user disabled, closes the socket with code 1008. The app then reads a disconnect and
what it still sends goes nowhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

CHECK_INTERVAL_SECONDS = 2.0


async def watched_websocket(
    app: ASGIApp,
    scope: Scope,
    receive: Receive,
    send: Send,
    *,
    still_valid: Callable[[], Awaitable[bool]],
    interval: float = CHECK_INTERVAL_SECONDS,
) -> None:
    ended = asyncio.Event()  # the session ended: the socket is closed (or closing)
    finished = False  # the connection is over either way: stop watching
    pending: asyncio.Future[Message] | None = None

    async def close(reason: str) -> None:
        if ended.is_set() or finished:
            return
        ended.set()
        log.info("%s: closing the websocket %s", reason, scope.get("path"))
        with contextlib.suppress(Exception):  # the client may be gone already
            await send({"type": "websocket.close", "code": 1008, "reason": reason})

    async def watch() -> None:
        while not finished and not ended.is_set():
            await asyncio.sleep(interval)
            try:
                valid = await still_valid()
            except Exception:  # the database is briefly unavailable: keep the socket
                log.exception("Checking a websocket's session failed")
                continue
            if not valid:
                await close("Session ended")

    async def receive_while_valid() -> Message:
        nonlocal pending
        if ended.is_set():
            return {"type": "websocket.disconnect", "code": 1008}
        if pending is None:
            pending = asyncio.ensure_future(receive())
        stop = asyncio.ensure_future(ended.wait())
        try:
            await asyncio.wait({pending, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if pending.done():
            message, pending = pending.result(), None
            return message
        return {"type": "websocket.disconnect", "code": 1008}

    async def send_while_open(message: Message) -> None:
        if not ended.is_set():  # what the app still sends after the close goes nowhere
            await send(message)

    watcher = asyncio.ensure_future(watch())
    try:
        await app(scope, receive_while_valid, send_while_open)
    finally:
        finished = True
        watcher.cancel()
        if pending is not None and not pending.done():
            pending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher

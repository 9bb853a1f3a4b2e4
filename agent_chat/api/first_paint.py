"""The first HTML of `/chat/<uuid>` carries the conversation's newest messages and the
person's conversation list (that of `/chat`, the list), so a person sees them before the
app's scripts have run and its state has arrived (about half a second on a 2-core machine):
an ASGI layer inside the login gate, which has put who is signed in into the scope.

The page itself is the app's static SPA page; this layer asks it uncompressed and without
its validators (the answer now differs per person and per moment: `no-store`), and puts
share_page/first_paint.py's layer before `</body>`. Only a signed-in person's GET of their
own page gets it (`services/first_paint.py`, owner-checked); everything else, and a page
whose reads take longer than `BUDGET_S`, gets the page as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_chat.auth import SCOPE_USER_KEY
from agent_chat.services.backend import Backend
from agent_chat.services.first_paint import first_paint
from agent_chat.share_page.first_paint import first_paint_html

log = logging.getLogger(__name__)

# `/chat` (a new conversation: the list only) and `/chat/<uuid>`.
_CHAT = re.compile(r"^/chat(?:/([A-Za-z0-9-]{1,64}))?/?$")
# The page waits no longer than this for the messages (a 20,000-message branch's walk takes
# ~50 ms, more on a busy machine): past it the page goes out without them and the app shows
# them as before.
BUDGET_S = 0.25
# What would let the static server answer compressed or 304 (the browser would then show
# the copy it cached, with an old first paint).
_DROPPED_REQUEST_HEADERS = {b"accept-encoding", b"if-none-match", b"if-modified-since", b"range"}
_DROPPED_RESPONSE_HEADERS = ("content-length", "etag", "last-modified", "content-encoding")
_END = b"</body>"
_PATHSEND = "http.response.pathsend"


def first_paint_with(get_backend: Callable[[], Backend]) -> Callable[[ASGIApp], ASGIApp]:
    """The `api_transformer` entry (inside the login gate)."""
    return lambda app: FirstPaintLayer(app, get_backend)


class FirstPaintLayer:
    def __init__(self, app: ASGIApp, get_backend: Callable[[], Backend]) -> None:
        self.app = app
        self.get_backend = get_backend

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = _CHAT.match(scope.get("path", "")) if scope["type"] == "http" else None
        user = scope.get(SCOPE_USER_KEY)
        if found is None or user is None or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        read = asyncio.ensure_future(self._painted(int(user.user_id), found.group(1) or ""))
        headers = [(k, v) for k, v in scope["headers"] if k not in _DROPPED_REQUEST_HEADERS]
        # A server with `http.response.pathsend` (granian) would get the file's path instead
        # of its bytes: asked without it, the static server sends the body.
        extensions = {k: v for k, v in (scope.get("extensions") or {}).items() if k != _PATHSEND}
        page = _Buffered(send)
        try:
            await self.app(
                {**scope, "headers": headers, "extensions": extensions}, receive, page.send
            )
        finally:
            if page.start is None or not page.complete:
                read.cancel()
        if page.start is None or not page.complete:
            return  # already passed on as it came (not the HTML page, or it failed)
        painted = None
        try:
            async with asyncio.timeout(BUDGET_S):
                painted = await read
        except TimeoutError:
            log.info(
                "first paint of %s skipped: its read took over %.2f s", scope["path"], BUDGET_S
            )
        await page.finish(painted)

    async def _painted(self, user_id: int, session_uuid: str) -> str | None:
        try:
            paint = await first_paint(
                self.get_backend(), user_id=user_id, session_uuid=session_uuid
            )
        except RuntimeError:  # the services have not started (or have stopped)
            return None
        return None if paint is None else first_paint_html(paint)


class _Buffered:
    """Holds a 200 `text/html` answer until its end, to add the layer; any other answer
    passes through unchanged."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.start: Message | None = None
        self.body: list[bytes] = []
        self.complete = False
        self._passing = False

    async def send(self, message: Message) -> None:
        if self._passing:
            await self._send(message)
            return
        if message["type"] == "http.response.start":
            content_type = MutableHeaders(scope=message).get("content-type", "")
            if message["status"] != 200 or not content_type.startswith("text/html"):
                self._passing = True
                await self._send(message)
                return
            self.start = message
            return
        if message["type"] == "http.response.body":
            self.body.append(message.get("body", b""))
            if not message.get("more_body", False):
                self.complete = True
            return
        # Anything else (a zero-copy file send): what was held goes on unchanged.
        self._passing = True
        if self.start is not None:
            await self._send(self.start)
            self.start = None
        await self._send(message)

    async def finish(self, painted: str | None) -> None:
        assert self.start is not None
        body = b"".join(self.body)
        at = body.rfind(_END)
        if painted and at >= 0:
            body = body[:at] + painted.encode("utf-8") + body[at:]
        headers = MutableHeaders(scope=self.start)
        for name in _DROPPED_RESPONSE_HEADERS:
            with contextlib.suppress(KeyError):
                del headers[name]
        headers["content-length"] = str(len(body))
        headers["cache-control"] = "private, no-store"
        await self._send(self.start)
        await self._send({"type": "http.response.body", "body": body})

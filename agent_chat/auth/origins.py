"""The outermost ASGI layer of the app: only this machine's pages may drive it.

Every way in (pages, `/api/*`, login, the `/_event` websocket and its polling transport) is
checked before anything runs: a `Host` that is not this machine or a configured public name
is refused with 400 (DNS rebinding), a browser `Origin` that is not the app's own or a
configured one with 403 (any web page may otherwise open a websocket to 127.0.0.1 and call
every event handler). Requests without `Origin` (curl, scripts, same-origin navigation) pass:
a browser always sends it where a foreign page could abuse it. Page responses get the
security headers (framing refused, no sniffing, a Content-Security-Policy).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_chat.common.hosts import Allowed

log = logging.getLogger(__name__)

# What Reflex and the stream renderer need, and why:
# - script-src 'unsafe-eval': rx.call_script evaluates the server's scripts (the live text);
#   'unsafe-inline': the prerendered page carries its hydration data in inline scripts.
# - style-src 'unsafe-inline': Radix/emotion inject style elements at run time.
# - img-src 'self' data:: only the app's own images; a model's images are links (click to open).
# - connect-src: the app's own websocket; 'self' covers it in current browsers, the explicit
#   ws(s)://host keeps older ones working.
CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; "
    "connect-src 'self' {ws}; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)
# Vite's build names every file under /assets/ `<name>-<8-character hash>.<ext>`: its content
# never changes under that name, so browsers may keep it a year without asking again.
HASHED_ASSET = re.compile(r"/assets/[^/]+-[A-Za-z0-9_-]{8}\.[A-Za-z0-9.]+")
IMMUTABLE = "public, max-age=31536000, immutable"
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def allowed_from_environment() -> Allowed:
    return Allowed.from_env(
        os.environ.get("AGENT_CHAT_ALLOWED_HOSTS"), os.environ.get("AGENT_CHAT_ALLOWED_ORIGINS")
    )


class OriginGuard:
    def __init__(self, app: ASGIApp, allowed: Allowed) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)  # lifespan
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        origin = headers.get("origin")
        if not self.allowed.host_ok(host):
            log.warning("refused a request for host %r (%s)", host, scope.get("path"))
            await self._refuse(scope, receive, send, 400, f"Host {host!r} is not served here.")
            return
        if origin is not None and not self.allowed.origin_ok(
            origin, host_header=host, scheme=scope.get("scheme", "http")
        ):
            log.warning("refused a request from origin %r (%s)", origin, scope.get("path"))
            await self._refuse(scope, receive, send, 403, "Requests from other sites are refused.")
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        immutable = HASHED_ASSET.fullmatch(scope.get("path", "")) is not None
        await self.app(scope, receive, self._with_headers(send, host, immutable=immutable))

    @staticmethod
    def _with_headers(send: Send, host: str, *, immutable: bool) -> Callable[[Message], object]:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                response = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    response.setdefault(name, value)
                if "content-security-policy" not in response:
                    response["Content-Security-Policy"] = CSP.format(ws=f"ws://{host} wss://{host}")
                if immutable and message.get("status") == 200:
                    response["Cache-Control"] = IMMUTABLE
            await send(message)

        return send_with_headers

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, text: str) -> None:
        if scope["type"] == "websocket":
            # Closing before accepting makes the server answer the handshake with 403.
            await send({"type": "websocket.close", "code": 1008})
            return
        await PlainTextResponse(text, status_code=status)(scope, receive, send)


def origin_guard(app: ASGIApp) -> ASGIApp:
    """The app's api_transformer: the guard with the allow-lists from the environment."""
    return OriginGuard(app, allowed_from_environment())


def without_credentials_header(app: ASGIApp) -> ASGIApp:
    """Drops `Access-Control-Allow-Credentials` from every response. Reflex wraps the whole
    app, outside every api_transformer, in Starlette's CORS middleware with
    `allow_credentials=True`, which sends the header on any response to a request with an
    `Origin` even though no other origin is allowed (`cors_allowed_origins=[]`): browser
    security scanners flag it, and nothing of ours needs it."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_without(message: Message) -> None:
            if message["type"] == "http.response.start":
                del MutableHeaders(scope=message)["access-control-allow-credentials"]
            await send(message)

        await app(scope, receive, send_without)

    return wrapped

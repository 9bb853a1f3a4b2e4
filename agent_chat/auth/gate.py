"""The ASGI gate around the whole backend: the login routes, and a session check in front of
pages, the `/_event` websocket (both transports) and `/api/*` (see the package docstring)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_chat.auth import setup_code
from agent_chat.auth.paths import (
    BACKEND_PREFIXES,
    GATE_PATHS,
    SETUP_PAGE,
    is_public,
    is_share_path,
    login_url,
)
from agent_chat.auth.rate_limit import RateLimits
from agent_chat.auth.request_helpers import bearer_token, read_cookie
from agent_chat.auth.routes import COOKIE_NAME, AuthRoutes
from agent_chat.auth.store import GateStore, StorageLike
from agent_chat.auth.websocket import CHECK_INTERVAL_SECONDS, watched_websocket
from agent_chat.config import OidcSettings, Settings, load_settings

log = logging.getLogger(__name__)

# `Authorization: Bearer <token>` opens the HTTP API (`/api/*`) too: personal API tokens,
# checked by a callable the app gives (it owns the database), e.g. for scripts and the CLI.
# A personal API token → the id of the user it acts for (None: not a valid token).
BearerCheck = Callable[[str], Awaitable[int | None]]
# Who is signed in, for the app behind the gate (auth_sessions.SignedIn).
SCOPE_USER_KEY = "agent_chat.user"
# The user a request's API token acts for (the token's owner), for the API behind the gate.
SCOPE_TOKEN_USER_KEY = "agent_chat.token_user"


@dataclass(frozen=True)
class GateConfig:
    session_seconds: float
    limits: RateLimits = field(default_factory=RateLimits)
    oidc: OidcSettings | None = None  # single sign-on, when configured
    # What /setup asks for while no account exists (auth/setup_code.py); None: nothing.
    setup_code: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> GateConfig:
        return cls(
            session_seconds=settings.session_hours * 3600,
            oidc=settings.oidc,
            setup_code=setup_code.code_for(settings.app_host),
        )


class LoginGate:
    """ASGI middleware: the login, setup and logout routes, and a session check in front of
    `app`. The configuration is read on the first request (not at import)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        storage: Callable[[], StorageLike],
        config_loader: Callable[[], GateConfig] | None = None,
        clock: Callable[[], float] = time.time,
        bearer: BearerCheck | None = None,
        check_interval: float = CHECK_INTERVAL_SECONDS,
    ) -> None:
        self.app = app
        self.bearer = bearer
        self.store = GateStore(storage)
        self._config_loader = config_loader or _config_from_environment
        self._config: GateConfig | None = None
        self.clock = clock
        self.check_interval = check_interval
        self.routes = AuthRoutes(
            self.store,
            session_seconds=lambda: self.config.session_seconds,
            limits=lambda: self.config.limits,
            clock=clock,
            oidc=lambda: self.config.oidc,
            setup_code=lambda: self.config.setup_code,
        )

    @property
    def config(self) -> GateConfig:
        if self._config is None:
            self._config = self._config_loader()
        return self._config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if is_public(path) or (scope["type"] == "http" and is_share_path(path)):
            await self.app(scope, receive, send)
            return
        try:
            if scope["type"] == "http" and path in GATE_PATHS:
                response = await self.routes.handle(Request(scope, receive), path)
                await response(scope, receive, send)
                return
            set_up = await self.store.is_set_up()
            token = read_cookie(scope, COOKIE_NAME)
            user = await self._signed_in(token) if set_up else None
        except RuntimeError:  # the services have not started (or have stopped)
            await self._unavailable(scope, receive, send)
            return
        if user is not None:
            scope[SCOPE_USER_KEY] = user
            if scope["type"] == "websocket":
                await watched_websocket(
                    self.app,
                    scope,
                    receive,
                    send,
                    still_valid=lambda: self._still_valid(token),
                    interval=self.check_interval,
                )
            else:
                await self.app(scope, receive, _revalidated(send))
        elif set_up and await self._bearer_ok(scope):
            await self.app(scope, receive, _revalidated(send))
        else:
            await self._refuse(scope, receive, send, set_up=set_up)

    async def _signed_in(self, token: str | None):
        return await self.store.signed_in(
            token, now=self.clock(), max_age=self.config.session_seconds
        )

    async def _still_valid(self, token: str | None) -> bool:
        return await self._signed_in(token) is not None

    async def _bearer_ok(self, scope: Scope) -> bool:
        """An HTTP request to `/api/*` with a valid personal API token."""
        if self.bearer is None or scope["type"] != "http" or not scope["path"].startswith("/api/"):
            return False
        token = bearer_token(scope)
        user_id = await self.bearer(token) if token else None
        if user_id:
            scope[SCOPE_TOKEN_USER_KEY] = user_id
        return bool(user_id)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, *, set_up: bool) -> None:
        path: str = scope["path"]
        if scope["type"] == "websocket":
            # Closing before accepting makes the server answer the upgrade with HTTP 403.
            await receive()
            await send({"type": "websocket.close", "code": 1008})
            return
        response: Response
        if scope["method"] in ("GET", "HEAD") and not path.startswith(BACKEND_PREFIXES):
            if set_up:
                query = scope.get("query_string", b"").decode("latin-1")
                target = login_url(path + (f"?{query}" if query else ""))
            else:
                target = SETUP_PAGE
            response = RedirectResponse(
                target, status_code=303, headers={"Cache-Control": "no-store"}
            )
        else:
            detail = "Login required" if set_up else "Setup required: open /setup"
            response = JSONResponse(
                {"detail": detail}, status_code=401, headers={"Cache-Control": "no-store"}
            )
        await response(scope, receive, send)

    async def _unavailable(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.close", "code": 1013})
            return
        response = JSONResponse(
            {"detail": "Starting up, try again"},
            status_code=503,
            headers={"Retry-After": "2", "Cache-Control": "no-store"},
        )
        await response(scope, receive, send)


# What a response let through the gate says when it says nothing of caching: the browser may
# keep it but asks the server (and so the gate) before each use. The app's pages are static
# files with Last-Modified and no Cache-Control, which a browser treats as fresh for a tenth
# of their age: after a logout or a revoked session, "/" opened the cached app, which then
# could not connect, instead of the login page. An unchanged page still answers 304.
REVALIDATE = "private, no-cache"


def _revalidated(send: Send) -> Send:
    async def send_revalidated(message: Message) -> None:
        if message["type"] == "http.response.start":  # as origins.py adds its headers
            MutableHeaders(scope=message).setdefault("Cache-Control", REVALIDATE)
        await send(message)

    return send_revalidated


def _config_from_environment() -> GateConfig:
    return GateConfig.from_settings(load_settings())


def login_gate_with(
    storage: Callable[[], StorageLike], bearer: BearerCheck | None = None
) -> Callable[[ASGIApp], ASGIApp]:
    """The `api_transformer` entry: wraps the whole backend (pages, websocket, API) in the
    gate, which reaches the database through `storage()`; `bearer` lets `/api/*` requests in
    with a token it accepts."""
    return lambda app: LoginGate(app, storage=storage, bearer=bearer)

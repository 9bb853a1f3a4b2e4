"""The ASGI gate around the whole backend: the login routes, and a session check in front of
pages, the `/_event` websocket and `/api/*` (see the package docstring)."""

from __future__ import annotations

import hmac
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_chat.auth.page import login_page
from agent_chat.auth.paths import (
    BACKEND_PREFIXES,
    LOGIN_API,
    LOGIN_PAGE,
    LOGOUT_API,
    is_public,
    is_share_path,
    login_url,
    safe_next,
)
from agent_chat.auth.rate_limit import LoginRateLimiter, rate_limit_message
from agent_chat.auth.request_helpers import (
    bearer_token,
    client_address,
    is_https,
    read_cookie,
    read_login_fields,
    wants_json,
)
from agent_chat.auth.tokens import (
    SECRET_FILE_NAME,
    derive_key,
    load_or_create_secret,
    session_expiry,
    sign_session,
)
from agent_chat.config import DATA_DIR, Settings, load_settings

log = logging.getLogger(__name__)

COOKIE_NAME = "agent_chat_session"
# `Authorization: Bearer <token>` opens the HTTP API (`/api/*`) too: personal API tokens,
# checked by a callable the app gives (it owns the database), e.g. for scripts and the CLI.
BearerCheck = Callable[[str], Awaitable[bool]]


@dataclass(frozen=True)
class LoginConfig:
    password: str
    key: bytes
    session_seconds: float

    @classmethod
    def from_settings(cls, settings: Settings, *, data_dir: Path = DATA_DIR) -> LoginConfig | None:
        """None when no password is set (the app is open)."""
        if not settings.password:
            return None
        secret = settings.secret or load_or_create_secret(data_dir / SECRET_FILE_NAME)
        return cls(
            password=settings.password,
            key=derive_key(secret, settings.password),
            session_seconds=settings.session_hours * 3600,
        )


class LoginGate:
    """ASGI middleware: the login page and API, and a session check in front of `app`.

    The configuration is read on the first request (not at import or construction), so the
    secret file is only made when a password is set and the app actually serves.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        config_loader: Callable[[], LoginConfig | None] | None = None,
        limiter: LoginRateLimiter | None = None,
        clock: Callable[[], float] = time.time,
        bearer: BearerCheck | None = None,
    ) -> None:
        self.app = app
        self.bearer = bearer
        self._config_loader = config_loader or _config_from_environment
        self._config: LoginConfig | None = None
        self._resolved = False
        self.limiter = limiter or LoginRateLimiter()
        self.clock = clock

    @property
    def config(self) -> LoginConfig | None:
        if not self._resolved:
            self._config = self._config_loader()
            self._resolved = True
        return self._config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        config = self.config
        if config is None:
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if scope["type"] == "http" and path in (LOGIN_PAGE, LOGIN_API, LOGOUT_API):
            response = await self._login_route(config, Request(scope, receive), path)
            await response(scope, receive, send)
            return
        if is_public(path) or (scope["type"] == "http" and is_share_path(path)):
            await self.app(scope, receive, send)
            return
        expires = self._session_expiry(config, scope)
        if expires is None and await self._bearer_ok(scope):
            await self.app(scope, receive, send)
        elif expires is None:
            await self._refuse(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._expiring_websocket(scope, receive, send, expires)
        else:
            await self.app(scope, receive, send)

    def _session_expiry(self, config: LoginConfig, scope: Scope) -> int | None:
        token = read_cookie(scope, COOKIE_NAME)
        return session_expiry(config.key, token, now=self.clock(), max_age=config.session_seconds)

    async def _bearer_ok(self, scope: Scope) -> bool:
        """An HTTP request to `/api/*` with a valid personal API token."""
        if self.bearer is None or scope["type"] != "http" or not scope["path"].startswith("/api/"):
            return False
        token = bearer_token(scope)
        return bool(token) and await self.bearer(token)

    def _has_session(self, config: LoginConfig, scope: Scope) -> bool:
        return self._session_expiry(config, scope) is not None

    async def _expiring_websocket(
        self, scope: Scope, receive: Receive, send: Send, expires: int
    ) -> None:
        """A websocket that ends with its session: the first message from the browser after
        the expiry (socket.io's pong comes every 25 s) closes it; reconnecting is refused."""
        closed = False

        async def receive_until_expiry() -> Message:
            nonlocal closed
            message = await receive()
            if message["type"] == "websocket.receive" and self.clock() >= expires and not closed:
                closed = True
                log.info("Session expired: closing the websocket %s", scope["path"])
                await send({"type": "websocket.close", "code": 1008, "reason": "Session expired"})
                return {"type": "websocket.disconnect", "code": 1008}
            return message

        async def send_while_open(message: Message) -> None:
            if not closed:  # what the app still sends after the close goes nowhere
                await send(message)

        await self.app(scope, receive_until_expiry, send_while_open)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        if scope["type"] == "websocket":
            # Closing before accepting makes the server answer the upgrade with HTTP 403.
            await receive()
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["method"] in ("GET", "HEAD") and not path.startswith(BACKEND_PREFIXES):
            query = scope.get("query_string", b"").decode("latin-1")
            target = login_url(path + (f"?{query}" if query else ""))
            response: Response = RedirectResponse(
                target, status_code=303, headers={"Cache-Control": "no-store"}
            )
        else:
            response = JSONResponse(
                {"detail": "Login required"}, status_code=401, headers={"Cache-Control": "no-store"}
            )
        await response(scope, receive, send)

    async def _login_route(self, config: LoginConfig, request: Request, path: str) -> Response:
        method = request.method
        if path == LOGIN_PAGE and method in ("GET", "HEAD"):
            next_path = safe_next(request.query_params.get("next"))
            if self._has_session(config, request.scope):
                return RedirectResponse(next_path, status_code=303)
            return login_page(next_path=next_path)
        if path in (LOGIN_PAGE, LOGIN_API) and method == "POST":
            # The page's form posts to /login (the address bar stays there); scripts may
            # use /api/login, with a form or a JSON body.
            return await self._login(config, request)
        if path == LOGOUT_API and method == "POST":
            response = RedirectResponse(LOGIN_PAGE, status_code=303)
            response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="lax")
            return response
        allowed = "GET, HEAD, POST" if path == LOGIN_PAGE else "POST"
        return JSONResponse(
            {"detail": "Method not allowed"}, status_code=405, headers={"Allow": allowed}
        )

    async def _login(self, config: LoginConfig, request: Request) -> Response:
        as_json = wants_json(request)
        client = client_address(request.scope)
        fields = await read_login_fields(request)
        if fields is None:
            return _failure(as_json, "/", "The login form was malformed.", 400)
        next_path = safe_next(fields.get("next"))
        # Checked before the password: while blocked even the right one is refused, so the
        # block cannot be guessed through.
        wait = self.limiter.retry_after(client)
        if wait is not None:
            log.warning("Login refused for %s: too many wrong passwords", client)
            return _failure(
                as_json,
                next_path,
                rate_limit_message(wait),
                429,
                headers={"Retry-After": str(math.ceil(wait))},
            )
        password = fields.get("password", "")
        if not hmac.compare_digest(password.encode(), config.password.encode()):
            self.limiter.failure(client)
            log.warning("Wrong password from %s", client)
            return _failure(as_json, next_path, "Wrong password.", 401)
        self.limiter.success(client)
        expires = int(self.clock() + config.session_seconds)
        response: Response
        if as_json:
            response = JSONResponse({"ok": True, "next": next_path})
        else:
            response = RedirectResponse(next_path, status_code=303)
        response.headers["Cache-Control"] = "no-store"
        response.set_cookie(
            COOKIE_NAME,
            sign_session(config.key, expires=expires),
            max_age=int(config.session_seconds),
            path="/",
            httponly=True,
            samesite="lax",
            secure=is_https(request),
        )
        log.info("Login from %s", client)
        return response


def _failure(
    as_json: bool,
    next_path: str,
    message: str,
    status_code: int,
    headers: dict[str, str] | None = None,
) -> Response:
    """A refused login: JSON for scripts, the page with the error (and `next` kept) for forms."""
    if as_json:
        return JSONResponse({"detail": message}, status_code=status_code, headers=headers)
    response = login_page(next_path=next_path, error=message, status_code=status_code)
    response.headers.update(headers or {})
    return response


def _config_from_environment() -> LoginConfig | None:
    return LoginConfig.from_settings(load_settings())


def login_gate(app: ASGIApp) -> ASGIApp:
    """The `api_transformer` entry: wraps the whole backend (pages, websocket, API)."""
    return LoginGate(app)


def login_gate_with(bearer: BearerCheck) -> Callable[[ASGIApp], ASGIApp]:
    """`login_gate`, also letting `/api/*` requests in with a token `bearer` accepts."""
    return lambda app: LoginGate(app, bearer=bearer)

"""Login for the whole app when `AGENT_CHAT_PASSWORD` is set (DESIGN.md §7, issue 7 item 5).

Everything the browser gets that carries data comes through Reflex's websocket (`/_event`) or
our `/api/*` routes, so one ASGI middleware around the whole backend (`LoginGate`, installed
through `rx.App(api_transformer=[..., login_gate])`) guards them all: without a valid session
cookie it refuses the websocket upgrade (HTTP 403), answers `/api/*` and other backend paths
with 401 JSON and redirects page requests (GET/HEAD) to `/login?next=<path>`. Static files
(`/assets/...`, `*.js`, `*.css`, fonts, images) and `/ping`, `/_health` stay public: they hold
no conversation data.

- `/login` is a small self-contained page; its form posts to `/login`, scripts may post a form
  or JSON to `/api/login`. The password is checked in constant time; a right one sets an
  HttpOnly, SameSite=Lax cookie and redirects to `next` (a same-site
  relative path only). `POST /api/logout` clears the cookie.
- The cookie holds `<expiry>.<signature>`: HMAC-SHA256 over the expiry with a key derived from
  the secret (`AGENT_CHAT_SECRET`, else `data/secret_key`, made once with mode 0600) and the
  password, so changing either logs everyone out. Sessions last `AGENT_CHAT_SESSION_HOURS`
  (default 12); lowering it also shortens sessions already issued. Tokens are stateless: log
  out clears this browser's cookie, it does not revoke a copied token before it expires.
- Wrong passwords are rate-limited per client IP, in memory (one app process): after 5 within
  15 minutes further attempts get 429 with `Retry-After` until the oldest of them is 15
  minutes old; a right password resets the count. Behind a reverse proxy every client has
  the proxy's address, so the limit is shared.

Without a password the middleware passes everything through untouched.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import logging
import math
import os
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from starlette.requests import Request, cookie_parser
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_chat.config import DATA_DIR, Settings, load_settings

log = logging.getLogger(__name__)

LOGIN_PAGE = "/login"
LOGIN_API = "/api/login"
LOGOUT_API = "/api/logout"
COOKIE_NAME = "agent_chat_session"
SECRET_FILE_NAME = "secret_key"
MAX_FAILURES = 5
FAILURE_WINDOW_SECONDS = 15 * 60
MAX_LOGIN_BODY_BYTES = 8192

PUBLIC_PATHS = frozenset({"/ping", "/_health", "/favicon.ico", "/robots.txt"})
PUBLIC_PREFIXES = ("/assets/",)
STATIC_SUFFIXES = (
    ".js", ".mjs", ".jsx", ".css", ".map", ".ico", ".png", ".svg", ".jpg", ".jpeg", ".gif",
    ".webp", ".avif", ".woff", ".woff2", ".ttf", ".otf", ".gz", ".br",
)  # fmt: skip
# Paths served by the backend, never pages: refused with 401 rather than redirected.
BACKEND_PREFIXES = ("/api/", "/_")


# --- secret and tokens -------------------------------------------------------------------------


def load_or_create_secret(path: Path) -> str:
    """The secret stored at `path`, made (random, mode 0600) the first time."""
    try:
        secret = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        secret = ""
    if secret:
        return secret
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        # Another process made it between our read and our create: use theirs.
        return load_or_create_secret(path)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secret + "\n")
    log.info("Generated the session secret in %s", path)
    return secret


def derive_key(secret: str, password: str) -> bytes:
    """The signing key: a new secret or a new password invalidates every session."""
    return hmac.new(
        secret.encode(), b"agent-chat-session\0" + password.encode(), hashlib.sha256
    ).digest()


def _signature(key: bytes, expires: int) -> str:
    digest = hmac.new(key, f"session:{expires}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def sign_session(key: bytes, *, expires: int) -> str:
    """A session token valid until `expires` (Unix seconds)."""
    return f"{expires}.{_signature(key, expires)}"


def session_expiry(key: bytes, token: str | None, *, now: float, max_age: float) -> int | None:
    """When a valid session ends: None for a tampered or expired token, or one that would
    live more than `max_age` from now."""
    if not token or len(token) > 200:
        return None
    expires_text, dot, signature = token.partition(".")
    if not dot or not expires_text.isascii() or not expires_text.isdigit():
        return None
    expires = int(expires_text)
    if not hmac.compare_digest(signature.encode(), _signature(key, expires).encode()):
        return None
    return expires if now < expires <= now + max_age else None


def verify_session(key: bytes, token: str | None, *, now: float, max_age: float) -> bool:
    return session_expiry(key, token, now=now, max_age=max_age) is not None


# --- rate limiter ------------------------------------------------------------------------------


class LoginRateLimiter:
    """Wrong passwords per client: `max_failures` within `window` seconds block the client
    until the oldest of them leaves the window. In memory, for one app process."""

    def __init__(
        self,
        *,
        max_failures: int = MAX_FAILURES,
        window: float = FAILURE_WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = 10_000,
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self.clock = clock
        self.max_clients = max_clients
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, client: str, now: float) -> deque[float]:
        failures = self._failures.get(client)
        if failures is None:
            return deque()
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        if not failures:
            del self._failures[client]
        return failures

    def retry_after(self, client: str) -> float | None:
        """Seconds until `client` may try again, or None when it may try now."""
        now = self.clock()
        failures = self._recent(client, now)
        if len(failures) < self.max_failures:
            return None
        return max(failures[-self.max_failures] + self.window - now, 0.001)

    def failure(self, client: str) -> None:
        now = self.clock()
        if client not in self._failures and len(self._failures) >= self.max_clients:
            self._sweep(now)
        self._recent(client, now)
        self._failures.setdefault(client, deque()).append(now)

    def success(self, client: str) -> None:
        self._failures.pop(client, None)

    def _sweep(self, now: float) -> None:
        for client in list(self._failures):
            self._recent(client, now)
        while len(self._failures) >= self.max_clients:  # still full: forget the oldest client
            del self._failures[next(iter(self._failures))]


# --- redirects ---------------------------------------------------------------------------------


def safe_next(raw: str | None) -> str:
    """`raw` when it is a relative path on this site, else `/` (no open redirect)."""
    if not raw or len(raw) > 2048:
        return "/"
    if not raw.startswith("/") or raw.startswith("//") or "\\" in raw:
        return "/"
    if any(ord(char) < 0x21 or ord(char) == 0x7F for char in raw):
        return "/"  # browsers drop tabs and newlines: "/\t/evil.example" would become "//..."
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc:
        return "/"
    if parts.path == LOGIN_PAGE or parts.path.startswith(BACKEND_PREFIXES):
        return "/"
    return raw


def login_url(next_path: str) -> str:
    target = safe_next(next_path)
    return LOGIN_PAGE if target == "/" else f"{LOGIN_PAGE}?next={quote(target, safe='')}"


def is_public(path: str) -> bool:
    """Paths anyone may fetch: health checks and static files (no conversation data)."""
    if path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES):
        return True
    if path.startswith(BACKEND_PREFIXES):
        return False
    return path.lower().endswith(STATIC_SUFFIXES)


# --- the login page ----------------------------------------------------------------------------

_LOGIN_HTML = Template("""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Sign in · Agent Chat</title>
<link rel="icon" href="/favicon.ico">
<style>
  :root { color-scheme: light dark; --bg: #f8f9fb; --card: #fff; --text: #1c2024;
    --muted: #60646c; --line: #d9d9e0; --accent: #6e56cf; --accent-hover: #5b45b8;
    --error: #ce2c31; --error-bg: #fff0f0; }
  @media (prefers-color-scheme: dark) {
    :root { --bg: #111113; --card: #18191b; --text: #edeef0; --muted: #b0b4ba;
      --line: #363a3f; --accent: #8e7ae6; --accent-hover: #a392f0; --error: #ff9592;
      --error-bg: #3b1219; }
  }
  * { box-sizing: border-box; }
  html, body { height: 100%; margin: 0; }
  body { display: grid; place-items: center; background: var(--bg); color: var(--text);
    font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  main { width: min(360px, calc(100vw - 32px)); background: var(--card);
    border: 1px solid var(--line); border-radius: 14px; padding: 28px 28px 24px;
    box-shadow: 0 8px 30px rgba(0, 0, 0, .06); }
  h1 { font-size: 20px; margin: 0 0 4px; }
  p.lead { margin: 0 0 20px; color: var(--muted); font-size: 14px; }
  label { display: block; font-weight: 600; font-size: 14px; margin-bottom: 6px; }
  input[type=password] { width: 100%; font: inherit; color: inherit; background: transparent;
    padding: 9px 12px; border: 1px solid var(--line); border-radius: 9px; }
  input[type=password]:focus { outline: 2px solid var(--accent); outline-offset: 1px;
    border-color: var(--accent); }
  input[aria-invalid=true] { border-color: var(--error); }
  button { width: 100%; margin-top: 16px; font: inherit; font-weight: 600; color: #fff;
    background: var(--accent); border: 0; border-radius: 9px; padding: 10px 12px;
    cursor: pointer; }
  button:hover { background: var(--accent-hover); }
  button:focus-visible { outline: 2px solid var(--text); outline-offset: 2px; }
  .error { margin: 14px 0 0; padding: 8px 12px; border-radius: 8px; font-size: 14px;
    color: var(--error); background: var(--error-bg); }
  .error:empty { display: none; }
</style>
</head>
<body>
<main>
  <h1>Agent Chat</h1>
  <p class="lead">Enter the password to continue.</p>
  <form method="post" action="/login">
    <input type="hidden" name="next" value="$next">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password"
      required autofocus data-testid="login-password"$invalid>
    <p id="login-error" class="error" role="alert" aria-live="assertive"
      data-testid="login-error">$error</p>
    <button type="submit" data-testid="login-submit">Sign in</button>
  </form>
</main>
</body>
</html>
""")

_PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
}


def login_page(*, next_path: str = "/", error: str = "", status_code: int = 200) -> HTMLResponse:
    body = _LOGIN_HTML.substitute(
        next=html.escape(safe_next(next_path), quote=True),
        invalid=' aria-invalid="true" aria-describedby="login-error"' if error else "",
        error=html.escape(error),
    )
    return HTMLResponse(body, status_code=status_code, headers=_PAGE_HEADERS)


def rate_limit_message(retry_after: float) -> str:
    minutes = max(1, math.ceil(retry_after / 60))
    unit = "minute" if minutes == 1 else "minutes"
    return f"Too many wrong passwords. Try again in {minutes} {unit}."


# --- the middleware ----------------------------------------------------------------------------


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


def _cookie(scope: Scope, name: str) -> str | None:
    # Starlette's lenient parser: one malformed cookie (another app on this host) must not
    # hide ours, as it can with http.cookies.
    for key, value in scope.get("headers") or ():
        if key == b"cookie":
            found = cookie_parser(value.decode("latin-1")).get(name)
            if found:
                return found
    return None


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"


def _wants_json(request: Request) -> bool:
    content_type = request.headers.get("content-type", "")
    return content_type.startswith("application/json") or (
        "application/json" in request.headers.get("accept", "")
        and "text/html" not in request.headers.get("accept", "")
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
    ) -> None:
        self.app = app
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
        if is_public(path):
            await self.app(scope, receive, send)
            return
        expires = self._session_expiry(config, scope)
        if expires is None:
            await self._refuse(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._expiring_websocket(scope, receive, send, expires)
        else:
            await self.app(scope, receive, send)

    def _session_expiry(self, config: LoginConfig, scope: Scope) -> int | None:
        token = _cookie(scope, COOKIE_NAME)
        return session_expiry(config.key, token, now=self.clock(), max_age=config.session_seconds)

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
        as_json = _wants_json(request)
        client = _client(request.scope)
        fields = await _read_fields(request)
        if fields is None:
            return _failure(as_json, "/", "The login form was malformed.", 400)
        next_path = safe_next(fields.get("next"))
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
            secure=_is_https(request),
        )
        log.info("Login from %s", client)
        return response


def _is_https(request: Request) -> bool:
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip()
    return request.url.scheme == "https" or forwarded == "https"


async def _read_fields(request: Request) -> dict[str, str] | None:
    """`password` and `next` from a urlencoded form or a JSON object; None when malformed."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_LOGIN_BODY_BYTES:
            return None
    try:
        text = body.decode("utf-8")
        if request.headers.get("content-type", "").startswith("application/json"):
            data: Any = json.loads(text or "{}")
            if not isinstance(data, dict):
                return None
            return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
        return {k: v[0] for k, v in parse_qs(text, keep_blank_values=True).items()}
    except (UnicodeDecodeError, ValueError):
        return None


def _failure(
    as_json: bool,
    next_path: str,
    message: str,
    status_code: int,
    headers: dict[str, str] | None = None,
) -> Response:
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

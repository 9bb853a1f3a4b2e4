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

Modules: `tokens` (secret, key, signed sessions), `rate_limit`, `paths` (public paths, safe
`next`), `page` (the login page, from `login.html`), `gate` (the middleware) and
`request_helpers` (what it reads from a request). Callers import
from `agent_chat.auth`; the names below are the package's API.
"""

from __future__ import annotations

from agent_chat.auth.gate import (
    COOKIE_NAME,
    LoginConfig,
    LoginGate,
    login_gate,
    login_gate_with,
)
from agent_chat.auth.page import login_page
from agent_chat.auth.paths import (
    BACKEND_PREFIXES,
    LOGIN_API,
    LOGIN_PAGE,
    LOGOUT_API,
    PUBLIC_PATHS,
    PUBLIC_PREFIXES,
    STATIC_SUFFIXES,
    is_public,
    login_url,
    safe_next,
)
from agent_chat.auth.rate_limit import (
    FAILURE_WINDOW_SECONDS,
    MAX_FAILURES,
    LoginRateLimiter,
    rate_limit_message,
)
from agent_chat.auth.request_helpers import MAX_LOGIN_BODY_BYTES
from agent_chat.auth.tokens import (
    SECRET_FILE_NAME,
    derive_key,
    load_or_create_secret,
    session_expiry,
    sign_session,
    verify_session,
)

__all__ = [
    "BACKEND_PREFIXES",
    "COOKIE_NAME",
    "FAILURE_WINDOW_SECONDS",
    "LOGIN_API",
    "LOGIN_PAGE",
    "LOGOUT_API",
    "MAX_FAILURES",
    "MAX_LOGIN_BODY_BYTES",
    "PUBLIC_PATHS",
    "PUBLIC_PREFIXES",
    "SECRET_FILE_NAME",
    "STATIC_SUFFIXES",
    "LoginConfig",
    "LoginGate",
    "LoginRateLimiter",
    "derive_key",
    "is_public",
    "load_or_create_secret",
    "login_gate",
    "login_gate_with",
    "login_page",
    "login_url",
    "rate_limit_message",
    "safe_next",
    "session_expiry",
    "sign_session",
    "verify_session",
]

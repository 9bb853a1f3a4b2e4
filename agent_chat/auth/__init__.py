"""Accounts at the door of the whole app: nobody gets a page, the
`/_event` websocket or `/api/*` without a signed-in session (or a personal API token for the
API).

Everything the browser gets that carries data comes through Reflex's websocket (`/_event`) or
our `/api/*` routes, so one ASGI middleware around the whole backend (`LoginGate`, installed
through `rx.App(api_transformer=[..., login_gate_with(...)])`) guards them all: without a
valid session it refuses the websocket upgrade (HTTP 403), answers `/api/*` and other backend
paths with 401 JSON and redirects page requests (GET/HEAD) to `/login?next=<path>`. Static
files (`/assets/...`, `*.js`, `*.css`, fonts, images), `/ping`, `/_health` and share links
(`/s/<token>`) stay public: they hold no one's conversations.

- **First start.** With no user in the database every page leads to `/setup`, a one-time
  form that makes the first administrator and signs them in (race-safe: two at once make
  one); once a user exists `/setup` is 404. `AGENT_CHAT_ADMIN_USER`/`_PASSWORD`, or an old
  install's `AGENT_CHAT_PASSWORD`, make that administrator at start instead
  (`db/users.py:ensure_first_admin`, called by `services/runtime.py:start_services`).
- **Sign-in.** `/login` is a small self-contained page (username and password); its form
  posts to `/login`, scripts may post a form or JSON to `/api/login`. A right password makes
  a stored session (`auth_session`: only the SHA-256 of a random 32-byte token) and sets the
  token in an HttpOnly, SameSite=Lax cookie (Secure over https); it lasts
  `AGENT_CHAT_SESSION_HOURS` (lowering it also shortens sessions already issued).
- **Sign-out.** `POST /api/logout` revokes this session, `POST /api/logout-all` every session
  of its user; a new password or a disabled user revokes theirs too. Each request looks the
  session up (one indexed query), and an open websocket is checked every 2 s and closed
  (1008) as soon as its session ends (`websocket.py`).
- **Wrong passwords** are counted in the database (`login_failure`), so every app process
  shares the count: 10 per address or 5 per account within 15 minutes block further
  attempts (429 with `Retry-After`) until the oldest of them is 15 minutes old; a right
  password resets the account's count. An unknown username costs a hash check too.
- **Single sign-on** (off unless AGENT_CHAT_OIDC_* is set): `/auth/oidc/login` and
  `/auth/oidc/callback`, the OpenID Connect code flow with state, nonce and PKCE; a person is
  their provider's (issuer, subject), a first sign-in makes a member without a password.

Modules: `gate` (the middleware), `routes` (login, setup, logout), `store` (the database
calls, through the `Storage` the app module gives), `websocket` (a socket that ends with its
session), `rate_limit`, `paths` (public paths, safe `next`), `page` (the pages, from
`login.html`, `setup.html`, `page.css`), `request_helpers`, and single sign-on's
`oidc_routes`, `oidc_client` (the provider, the ID token's checks) and `oidc_store`. Callers import from
`agent_chat.auth`; the names below are the package's API.
"""

from __future__ import annotations

from agent_chat.auth.gate import (
    SCOPE_TOKEN_USER_KEY,
    SCOPE_USER_KEY,
    GateConfig,
    LoginGate,
    login_gate_with,
)
from agent_chat.auth.page import login_page, setup_page
from agent_chat.auth.paths import (
    BACKEND_PREFIXES,
    LOGIN_API,
    LOGIN_PAGE,
    LOGOUT_ALL_API,
    LOGOUT_API,
    PUBLIC_PATHS,
    PUBLIC_PREFIXES,
    SETUP_PAGE,
    STATIC_SUFFIXES,
    is_public,
    login_url,
    safe_next,
)
from agent_chat.auth.rate_limit import (
    FAILURE_WINDOW_SECONDS,
    MAX_FAILURES_PER_ACCOUNT,
    MAX_FAILURES_PER_ADDRESS,
    RateLimits,
    rate_limit_message,
)
from agent_chat.auth.request_helpers import MAX_LOGIN_BODY_BYTES
from agent_chat.auth.routes import COOKIE_NAME

__all__ = [
    "BACKEND_PREFIXES",
    "COOKIE_NAME",
    "FAILURE_WINDOW_SECONDS",
    "LOGIN_API",
    "LOGIN_PAGE",
    "LOGOUT_ALL_API",
    "LOGOUT_API",
    "MAX_FAILURES_PER_ACCOUNT",
    "MAX_FAILURES_PER_ADDRESS",
    "MAX_LOGIN_BODY_BYTES",
    "PUBLIC_PATHS",
    "PUBLIC_PREFIXES",
    "SCOPE_TOKEN_USER_KEY",
    "SCOPE_USER_KEY",
    "SETUP_PAGE",
    "STATIC_SUFFIXES",
    "GateConfig",
    "LoginGate",
    "RateLimits",
    "is_public",
    "login_gate_with",
    "login_page",
    "login_url",
    "rate_limit_message",
    "safe_next",
    "setup_page",
]

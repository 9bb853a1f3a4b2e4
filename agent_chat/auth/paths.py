"""Which paths the gate owns, which stay public, and where a login may send the browser."""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

LOGIN_PAGE = "/login"
LOGIN_API = "/api/login"
LOGOUT_API = "/api/logout"
LOGOUT_ALL_API = "/api/logout-all"  # every session of the signed-in user
SETUP_PAGE = "/setup"  # the first administrator, while there is no user (404 after)
# Single sign-on (oidc_routes.py; 404 unless configured): off to the provider, and back.
OIDC_LOGIN = "/auth/oidc/login"
OIDC_CALLBACK = "/auth/oidc/callback"
OIDC_PATHS = frozenset({OIDC_LOGIN, OIDC_CALLBACK})
GATE_PATHS = frozenset({LOGIN_PAGE, LOGIN_API, LOGOUT_API, LOGOUT_ALL_API, SETUP_PAGE, *OIDC_PATHS})

# Health checks and static files hold no conversation data.
PUBLIC_PATHS = frozenset({"/ping", "/_health", "/favicon.ico", "/robots.txt"})
PUBLIC_PREFIXES = ("/assets/",)
STATIC_SUFFIXES = (
    ".js", ".mjs", ".jsx", ".css", ".map", ".ico", ".png", ".svg", ".jpg", ".jpeg", ".gif",
    ".webp", ".avif", ".woff", ".woff2", ".ttf", ".otf", ".gz", ".br",
)  # fmt: skip
# Paths served by the backend, never pages: refused with 401 rather than redirected.
BACKEND_PREFIXES = ("/api/", "/_")
MAX_NEXT_LENGTH = 2048
# A read-only share link (share_page/): `/s/` and one token (db/shares.py: 32 URL-safe
# characters), or one of its page's pictures (`/pictures/` and a number), nothing before or
# after, so no other path can ride on it.
SHARE_PATH = re.compile(r"/s/[A-Za-z0-9_-]{32}(/pictures/[0-9]{1,4})?")


def safe_next(raw: str | None) -> str:
    """`raw` when it is a relative path on this site, else `/` (no open redirect)."""
    if not raw or len(raw) > MAX_NEXT_LENGTH:
        return "/"
    if not raw.startswith("/") or raw.startswith("//") or "\\" in raw:
        return "/"
    if any(ord(char) < 0x21 or ord(char) == 0x7F for char in raw):
        return "/"  # browsers drop tabs and newlines: "/\t/evil.example" would become "//..."
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc:
        return "/"
    if parts.path in (LOGIN_PAGE, SETUP_PAGE, *OIDC_PATHS) or parts.path.startswith(
        BACKEND_PREFIXES
    ):
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


def is_share_path(path: str) -> bool:
    """A share link's page or one of its pictures, which anyone with the link may open
    without logging in."""
    return SHARE_PATH.fullmatch(path) is not None

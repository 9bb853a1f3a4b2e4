"""What the gate reads from a request: the session cookie, the client address, whether the
caller wants JSON or a page, whether it came over https, and the login form's fields."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request, cookie_parser
from starlette.types import Scope

# A password and a `next` path fit easily; more is refused before it is buffered.
MAX_LOGIN_BODY_BYTES = 8192


def read_cookie(scope: Scope, name: str) -> str | None:
    # Starlette's lenient parser: one malformed cookie (another app on this host) must not
    # hide ours, as it can with http.cookies.
    for key, value in scope.get("headers") or ():
        if key == b"cookie":
            found = cookie_parser(value.decode("latin-1")).get(name)
            if found:
                return found
    return None


def bearer_token(scope: Scope) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, if any."""
    for key, value in scope.get("headers") or ():
        if key == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"


def wants_json(request: Request) -> bool:
    """Scripts (JSON body, or asking for JSON and not HTML) get JSON errors, forms the page."""
    content_type = request.headers.get("content-type", "")
    return content_type.startswith("application/json") or (
        "application/json" in request.headers.get("accept", "")
        and "text/html" not in request.headers.get("accept", "")
    )


def is_https(request: Request) -> bool:
    # Behind a TLS-terminating proxy the app itself sees plain http; the proxy's header says
    # whether the cookie should be Secure. A client can only set it on its own request.
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip()
    return request.url.scheme == "https" or forwarded == "https"


async def read_login_fields(request: Request) -> dict[str, str] | None:
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

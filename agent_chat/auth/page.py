"""The login page: `login.html` (self-contained, no scripts) filled in and sent with strict
headers."""

from __future__ import annotations

import html
from pathlib import Path
from string import Template

from starlette.responses import HTMLResponse

from agent_chat.auth.paths import safe_next

# Read once at import: a missing template fails at start-up, not at the first login. It has
# three placeholders ($next, $invalid, $error); a literal dollar sign in it must be `$$`.
_LOGIN_HTML = Template(Path(__file__).with_name("login.html").read_text(encoding="utf-8"))

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
    # `substitute`, not `safe_substitute`: a stray `$` in the template raises instead of
    # shipping half-filled HTML. Values from the request are escaped: `next` lands in an
    # attribute (so quotes too), `error` in text; `invalid` is one of two constants.
    body = _LOGIN_HTML.substitute(
        next=html.escape(safe_next(next_path), quote=True),
        invalid=' aria-invalid="true" aria-describedby="login-error"' if error else "",
        error=html.escape(error),
    )
    return HTMLResponse(body, status_code=status_code, headers=_PAGE_HEADERS)

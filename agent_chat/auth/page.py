"""The login and first-administrator pages: `login.html` and `setup.html` (self-contained, no
scripts, one stylesheet `page.css`) filled in and sent with strict headers."""

from __future__ import annotations

import html
from pathlib import Path
from string import Template
from urllib.parse import quote

from starlette.responses import HTMLResponse

from agent_chat.auth.paths import OIDC_LOGIN, safe_next

_HERE = Path(__file__).parent
# Read once at import: a missing template fails at start-up, not at the first login. A
# literal dollar sign in a template must be `$$`.
_STYLE = (_HERE / "page.css").read_text(encoding="utf-8")
_LOGIN_HTML = Template((_HERE / "login.html").read_text(encoding="utf-8"))
_SETUP_HTML = Template((_HERE / "setup.html").read_text(encoding="utf-8"))

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


def _invalid(error: str, described_by: str) -> str:
    return f' aria-invalid="true" aria-describedby="{described_by}"' if error else ""


def _sso_block(name: str | None, next_path: str, error_html: str) -> str:
    """The single sign-on button (a link to the start of the flow) above the password form,
    and its error (`error_html`, already escaped) under it."""
    if not name:
        return ""
    target = safe_next(next_path)
    href = OIDC_LOGIN + ("" if target == "/" else f"?next={quote(target, safe='')}")
    return (
        f'<a class="sso" href="{html.escape(href, quote=True)}" data-testid="login-oidc">'
        f"Sign in with {html.escape(name)}</a>\n"
        + (f"  {error_html}\n" if error_html else "")
        + '  <p class="divider"><span>or with a password</span></p>'
    )


def login_page(
    *,
    next_path: str = "/",
    error: str = "",
    username: str = "",
    status_code: int = 200,
    sso: str | None = None,
    sso_error: bool = False,
) -> HTMLResponse:
    """The sign-in page; `sso`: the single sign-on button's label, when configured;
    `sso_error`: the error is single sign-on's, shown under its button (the password fields
    are not marked)."""
    error_html = (
        '<p id="login-error" class="error" role="alert" aria-live="assertive" '
        f'data-testid="login-error">{html.escape(error)}</p>'
    )
    above = bool(sso) and sso_error
    # `substitute`, not `safe_substitute`: a stray `$` in the template raises instead of
    # shipping half-filled HTML. Values from the request are escaped (quotes too: they land
    # in attributes); `invalid` and the focus attributes are constants.
    body = _LOGIN_HTML.substitute(
        style=_STYLE,
        next=html.escape(safe_next(next_path), quote=True),
        username=html.escape(username[:64], quote=True),
        # The field to type in first: the password when the username is known.
        focus_username="" if username else "autofocus",
        focus_password="autofocus" if username else "",
        invalid="" if above else _invalid(error, "login-error"),
        error_in_form="" if above else error_html,
        sso=_sso_block(sso, next_path, error_html if above else ""),
    )
    return HTMLResponse(body, status_code=status_code, headers=_PAGE_HEADERS)


SETUP_FIELDS = ("username", "display_name", "password")


def _code_field(invalid: bool) -> str:
    """The setup code's field (auth/setup_code.py), first in the form: never filled in again."""
    return (
        '<label for="setup_code">Setup code</label>\n'
        '    <input id="setup_code" name="setup_code" type="text" autocomplete="off" '
        'autocapitalize="characters" spellcheck="false" required maxlength="40" autofocus '
        f'data-testid="setup-code"{_invalid("x" if invalid else "", "setup-error")}>\n'
        '    <p class="hint">Printed in the app\'s log when it started ("Setup code: …"): '
        "this app is reachable from other machines.</p>\n    "
    )


def setup_page(
    *,
    error: str = "",
    invalid: frozenset[str] = frozenset(),
    username: str = "",
    display_name: str = "",
    status_code: int = 200,
    code: bool = False,
) -> HTMLResponse:
    """The first-administrator form; `invalid` names the fields the error is about; `code`:
    it asks for the setup code."""
    marks = {
        f"invalid_{name}": _invalid("x" if name in invalid else "", "setup-error")
        for name in SETUP_FIELDS
    }
    body = _SETUP_HTML.substitute(
        style=_STYLE,
        code_field=_code_field("setup_code" in invalid) if code else "",
        focus_username="" if code else " autofocus",
        username=html.escape(username[:64], quote=True),
        display_name=html.escape(display_name[:100], quote=True),
        error=html.escape(error),
        **marks,
    )
    return HTMLResponse(body, status_code=status_code, headers=_PAGE_HEADERS)

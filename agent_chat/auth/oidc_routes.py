"""Single sign-on routes (404 unless AGENT_CHAT_OIDC_* is set): `GET /auth/oidc/login` sends
the browser to the provider, `GET /auth/oidc/callback` takes it back and signs it in.

The attempt (`state`, `nonce`, PKCE verifier, where to go after) is stored server-side under
the SHA-256 of a random token in a short-lived cookie (HttpOnly, SameSite=Lax: the callback is
a top-level GET from the provider, which Lax lets through; path `/auth/oidc/`), so it is bound
to the browser that started it, and the callback deletes it as it reads it: one use. Every
failure goes back to the login page with a readable message (`?sso_error=<code>`: fixed texts,
nothing from the request is shown).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import Protocol
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from agent_chat.auth.oidc_client import OidcClient, ProviderUnavailable, Rejected, is_admin
from agent_chat.auth.oidc_store import OidcStore
from agent_chat.auth.paths import LOGIN_PAGE, OIDC_CALLBACK, OIDC_LOGIN, safe_next
from agent_chat.auth.request_helpers import client_address, is_https, read_cookie
from agent_chat.auth.store import DISABLED, GateStore
from agent_chat.config import OidcSettings
from agent_chat.db.oidc import ATTEMPT_LIFETIME, TooManyAttempts

log = logging.getLogger(__name__)

ATTEMPT_COOKIE = "agent_chat_oidc"
ATTEMPT_COOKIE_PATH = "/auth/oidc/"
NO_STORE = {"Cache-Control": "no-store"}
MAX_PARAM_CHARS = 2048

# `?sso_error=` codes and what the login page says ({name}: the button's label).
SSO_ERRORS = {
    "denied": "Sign-in with {name} was cancelled.",
    "state": "That sign-in did not start in this browser, so it was refused. Try again.",
    "expired": "That sign-in attempt has expired or was already used. Try again.",
    "unreachable": (
        "{name} cannot be reached right now. Try again later, or sign in with a password."
    ),
    "provider": "{name} refused the sign-in. Try again, or ask an administrator.",
    "token": "{name} sent a sign-in that could not be verified. Ask an administrator.",
    "disabled": DISABLED,
    "busy": "Too many sign-ins are under way. Try again in a few minutes.",
}


def sso_error_message(code: str | None, name: str) -> str:
    template = SSO_ERRORS.get(code or "")
    return template.format(name=name) if template else ""


class SessionResponse(Protocol):
    def __call__(self, request: Request, token: str, next_path: str, as_json: bool) -> Response: ...


class OidcRoutes:
    def __init__(
        self,
        store: GateStore,
        *,
        settings: Callable[[], OidcSettings | None],
        session_seconds: Callable[[], float],
        session_response: SessionResponse,
        clock: Callable[[], float],
    ) -> None:
        self.store = OidcStore(store)
        self.settings = settings
        self.session_seconds = session_seconds
        self.session_response = session_response
        self.clock = clock
        self._client: OidcClient | None = None

    def client(self, settings: OidcSettings) -> OidcClient:
        if self._client is None or self._client.settings != settings:
            # Tokens are checked against the wall clock (the provider's), not the gate's.
            self._client = OidcClient(settings)
        return self._client

    async def handle(self, request: Request, path: str) -> Response:
        settings = self.settings()
        if settings is None:
            return PlainTextResponse("Not Found", status_code=404)
        if request.method != "GET":  # not even HEAD: the start stores an attempt
            return PlainTextResponse(
                "Method not allowed", status_code=405, headers={"Allow": "GET"}
            )
        if path == OIDC_LOGIN:
            return await self._start(request, settings)
        return await self._callback(request, settings)

    def _redirect_uri(self, request: Request, settings: OidcSettings) -> str:
        if settings.redirect_uri:
            return settings.redirect_uri
        # The Host/Origin guard in front has checked the Host already.
        scheme = "https" if is_https(request) else request.url.scheme
        return f"{scheme}://{request.headers.get('host', request.url.netloc)}{OIDC_CALLBACK}"

    async def _start(self, request: Request, settings: OidcSettings) -> Response:
        next_path = safe_next(request.query_params.get("next"))
        client = self.client(settings)
        token = secrets.token_urlsafe(32)
        state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(64)  # 86 characters: RFC 7636 wants 43-128
        redirect_uri = self._redirect_uri(request, settings)
        try:
            url = await client.authorization_url(
                redirect_uri=redirect_uri, state=state, nonce=nonce, code_verifier=verifier
            )
        except ProviderUnavailable as exc:
            log.warning("Single sign-on: the provider is unreachable: %s", exc)
            return _back_to_login("unreachable", next_path)
        try:
            await self.store.start(
                now=self.clock(),
                token=token,
                state=state,
                nonce=nonce,
                code_verifier=verifier,
                redirect_uri=redirect_uri,
                next_path=next_path,
            )
        except TooManyAttempts as exc:
            log.warning("Single sign-on refused: %s", exc)
            return _back_to_login("busy", next_path)
        response = RedirectResponse(url, status_code=303, headers=NO_STORE)
        response.set_cookie(
            ATTEMPT_COOKIE,
            token,
            max_age=int(ATTEMPT_LIFETIME.total_seconds()),
            path=ATTEMPT_COOKIE_PATH,
            httponly=True,
            samesite="lax",
            secure=is_https(request),
        )
        return response

    async def _callback(self, request: Request, settings: OidcSettings) -> Response:
        params = request.query_params
        client = client_address(request.scope)
        # Taken (deleted) whatever happens next: an attempt is used once.
        attempt = await self.store.take(
            read_cookie(request.scope, ATTEMPT_COOKIE), now=self.clock()
        )
        if attempt is None:
            log.warning("Single sign-on from %s: no attempt (expired, used or foreign)", client)
            return _back_to_login("expired")
        next_path = attempt.next_path
        state = params.get("state", "")[:MAX_PARAM_CHARS]
        state_ok = secrets.compare_digest(state.encode(), attempt.state.encode())
        if "error" in params and (state_ok or "state" not in params):
            # A refusal signs nobody in, so one without `state` (some providers send none
            # with an error) is shown as it is; the attempt is used up either way.
            error = params.get("error", "")[:100]
            log.warning("Single sign-on from %s: the provider answered %r", client, error)
            return _back_to_login("denied" if error == "access_denied" else "provider", next_path)
        if not state_ok:
            log.warning("Single sign-on from %s: the state does not match", client)
            return _back_to_login("state", next_path)
        code = params.get("code", "")[:MAX_PARAM_CHARS]
        if not code:
            return _back_to_login("provider", next_path)
        try:
            claims = await self.client(settings).sign_in_claims(
                code=code,
                redirect_uri=attempt.redirect_uri,
                code_verifier=attempt.code_verifier,
                nonce=attempt.nonce,
            )
        except ProviderUnavailable as exc:
            log.warning("Single sign-on from %s: the provider is unreachable: %s", client, exc)
            return _back_to_login("unreachable", next_path)
        except Rejected as exc:
            log.warning("Single sign-on from %s refused: %s", client, exc)
            return _back_to_login("token", next_path)
        outcome = await self.store.sign_in(
            now=self.clock(),
            lifetime=self.session_seconds(),
            issuer=str(claims["iss"]),
            subject=str(claims["sub"]),
            preferred_username=_text(claims.get("preferred_username")),
            email=_text(claims.get("email")),
            display_name=_text(claims.get("name")),
            admin=is_admin(claims, settings.admin_claim, settings.admin_value),
            user_agent=request.headers.get("user-agent", ""),
            address=client,
        )
        if outcome.new is None:
            log.warning("Single sign-on from %s refused: the user is disabled", client)
            return _back_to_login("disabled", next_path)
        if outcome.role_note:
            log.warning("Single sign-on of %r: %s", outcome.username, outcome.role_note)
        log.info(
            "Single sign-on from %s as %r (%s%s)",
            client,
            outcome.username,
            outcome.role,
            ", new account" if outcome.created else "",
        )
        response = self.session_response(request, outcome.new.token, next_path, False)
        response.delete_cookie(ATTEMPT_COOKIE, path=ATTEMPT_COOKIE_PATH, httponly=True)
        return response


def _text(value: object) -> str:
    return value[:200] if isinstance(value, str) else ""


def _back_to_login(code: str, next_path: str = "/") -> Response:
    query = {"sso_error": code}
    if safe_next(next_path) != "/":
        query["next"] = safe_next(next_path)
    response = RedirectResponse(f"{LOGIN_PAGE}?{urlencode(query)}", 303, headers=NO_STORE)
    response.delete_cookie(ATTEMPT_COOKIE, path=ATTEMPT_COOKIE_PATH, httponly=True)
    return response

"""The gate's own routes: `/login` (page and form), `/api/login` (scripts), `/setup` (the
first administrator, while there is no user), `/api/logout` and `/api/logout-all`; single
sign-on's `/auth/oidc/*` are `oidc_routes.py`'s."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from agent_chat.auth.oidc_routes import OidcRoutes, sso_error_message
from agent_chat.auth.page import login_page, setup_page
from agent_chat.auth.paths import (
    LOGIN_API,
    LOGIN_PAGE,
    LOGOUT_ALL_API,
    LOGOUT_API,
    OIDC_PATHS,
    SETUP_PAGE,
    safe_next,
)
from agent_chat.auth.rate_limit import RateLimits, rate_limit_message
from agent_chat.auth.request_helpers import (
    client_address,
    is_https,
    read_cookie,
    read_login_fields,
    wants_json,
)
from agent_chat.auth.store import GateStore
from agent_chat.config import OidcSettings
from agent_chat.db.errors import ValidationFailed
from agent_chat.db.users import AlreadySetUp

log = logging.getLogger(__name__)

COOKIE_NAME = "agent_chat_session"
NO_STORE = {"Cache-Control": "no-store"}


class AuthRoutes:
    def __init__(
        self,
        store: GateStore,
        *,
        session_seconds: Callable[[], float],
        limits: Callable[[], RateLimits],
        clock: Callable[[], float],
        oidc: Callable[[], OidcSettings | None] = lambda: None,
        setup_code: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.store = store
        self.setup_code = setup_code
        self.session_seconds = session_seconds
        self.limits = limits
        self.clock = clock
        self.oidc = oidc
        self.oidc_routes = OidcRoutes(
            store,
            settings=oidc,
            session_seconds=session_seconds,
            session_response=self._signed_in_response,
            clock=clock,
        )

    def _sso_name(self) -> str | None:
        """The single sign-on button's label, when it is configured."""
        settings = self.oidc()
        return settings.name if settings else None

    async def handle(self, request: Request, path: str) -> Response:
        method = request.method
        set_up = await self.store.is_set_up()
        if path == SETUP_PAGE:
            if set_up:
                return PlainTextResponse("Not Found", status_code=404)
            if method in ("GET", "HEAD"):
                return setup_page(code=self.setup_code() is not None)
            if method == "POST":
                return await self._set_up(request)
            return _not_allowed("GET, HEAD, POST")
        if not set_up and path in (LOGIN_PAGE, LOGIN_API, *OIDC_PATHS):
            if method in ("GET", "HEAD"):
                return RedirectResponse(SETUP_PAGE, status_code=303, headers=NO_STORE)
            return JSONResponse(
                {"detail": "No user yet: create the first administrator at /setup"},
                status_code=409,
                headers=NO_STORE,
            )
        if path == LOGIN_PAGE and method in ("GET", "HEAD"):
            next_path = safe_next(request.query_params.get("next"))
            if await self._signed_in(request) is not None:
                return RedirectResponse(next_path, status_code=303)
            sso = self._sso_name()
            error = sso_error_message(request.query_params.get("sso_error"), sso or "")
            return login_page(
                next_path=next_path, error=error if sso else "", sso=sso, sso_error=True
            )
        if path in OIDC_PATHS:
            return await self.oidc_routes.handle(request, path)
        if path in (LOGIN_PAGE, LOGIN_API) and method == "POST":
            # The page's form posts to /login (the address bar stays there); scripts may
            # use /api/login, with a form or a JSON body.
            return await self._log_in(request)
        if path in (LOGOUT_API, LOGOUT_ALL_API) and method == "POST":
            return await self._log_out(request, everywhere=path == LOGOUT_ALL_API)
        return _not_allowed("GET, HEAD, POST" if path == LOGIN_PAGE else "POST")

    async def _signed_in(self, request: Request):
        return await self.store.signed_in(
            read_cookie(request.scope, COOKIE_NAME),
            now=self.clock(),
            max_age=self.session_seconds(),
        )

    async def _log_in(self, request: Request) -> Response:
        as_json = wants_json(request)
        client = client_address(request.scope)
        fields = await read_login_fields(request)
        if fields is None:
            return _failure(
                as_json, "/", "", "The login form was malformed.", 400, sso=self._sso_name()
            )
        next_path = safe_next(fields.get("next"))
        username = fields.get("username", "").strip()[:200]
        outcome = await self.store.log_in(
            username=username,
            password=fields.get("password", ""),
            address=client,
            user_agent=request.headers.get("user-agent", ""),
            now=self.clock(),
            lifetime=self.session_seconds(),
            limits=self.limits(),
        )
        if outcome.retry_after is not None:
            log.warning("Login refused for %s as %r: too many wrong passwords", client, username)
            return _failure(
                as_json,
                next_path,
                username,
                rate_limit_message(outcome.retry_after),
                429,
                headers={"Retry-After": str(math.ceil(outcome.retry_after))},
                sso=self._sso_name(),
            )
        if outcome.new is None:
            log.warning("Login refused for %s as %r: %s", client, username, outcome.error)
            return _failure(
                as_json,
                next_path,
                username,
                outcome.error,
                outcome.status,
                sso=self._sso_name(),
            )
        log.info("Login from %s as %r", client, username.lower())
        return self._signed_in_response(request, outcome.new.token, next_path, as_json)

    async def _set_up(self, request: Request) -> Response:
        as_json = wants_json(request)
        fields = await read_login_fields(request)
        code = self.setup_code()
        if fields is None:
            return _setup_failure(as_json, {}, "The form was malformed.", 400, code=code)
        if code is not None:
            refused = await self._check_code(request, fields, code, as_json)
            if refused is not None:
                return refused
        try:
            new = await self.store.set_up(
                username=fields.get("username", ""),
                display_name=fields.get("display_name", ""),
                password=fields.get("password", ""),
                address=client_address(request.scope),
                user_agent=request.headers.get("user-agent", ""),
                now=self.clock(),
                lifetime=self.session_seconds(),
            )
        except ValidationFailed as exc:
            message = " ".join(exc.field_errors.values())
            invalid = frozenset(exc.field_errors)
            return _setup_failure(as_json, fields, message, 422, invalid, code=code)
        except AlreadySetUp:
            return PlainTextResponse("Not Found", status_code=404)
        log.info("Created the first administrator %r", fields.get("username", "").lower())
        return self._signed_in_response(request, new.token, "/", as_json)

    async def _check_code(
        self, request: Request, fields: dict[str, str], code: str, as_json: bool
    ) -> Response | None:
        """None when the form carries the setup code; else the refusal (wrong codes count
        per address, as wrong passwords do)."""
        client = client_address(request.scope)
        outcome = await self.store.check_setup_code(
            given=fields.get("setup_code", ""),
            expected=code,
            address=client,
            now=self.clock(),
            limits=self.limits(),
        )
        if outcome.retry_after is not None:
            message = rate_limit_message(outcome.retry_after).replace("passwords", "codes")
            response = _setup_failure(as_json, fields, message, 429, code=code)
            response.headers["Retry-After"] = str(math.ceil(outcome.retry_after))
            return response
        if outcome.error:
            log.warning("Setup refused for %s: a wrong setup code", client)
            invalid = frozenset({"setup_code"})
            return _setup_failure(as_json, fields, outcome.error, 403, invalid, code=code)
        return None

    def _signed_in_response(
        self, request: Request, token: str, next_path: str, as_json: bool
    ) -> Response:
        response: Response
        if as_json:
            response = JSONResponse({"ok": True, "next": next_path}, headers=NO_STORE)
        else:
            response = RedirectResponse(next_path, status_code=303, headers=NO_STORE)
        response.set_cookie(
            COOKIE_NAME,
            token,
            max_age=int(self.session_seconds()),
            path="/",
            httponly=True,
            samesite="lax",
            secure=is_https(request),
        )
        return response

    async def _log_out(self, request: Request, *, everywhere: bool) -> Response:
        token = read_cookie(request.scope, COOKIE_NAME)
        now = self.clock()
        if everywhere:
            user = await self._signed_in(request)
            if user is None:
                return JSONResponse({"detail": "Login required"}, status_code=401)
            ended = await self.store.log_out_everywhere(user.user_id, now=now)
            log.info("Logged %r out everywhere (%d sessions)", user.username, ended)
        elif token:
            await self.store.log_out(token, now=now)
        response: Response
        if wants_json(request):
            response = JSONResponse({"ok": True}, headers=NO_STORE)
        else:
            response = RedirectResponse(LOGIN_PAGE, status_code=303, headers=NO_STORE)
        response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="lax")
        return response


def _not_allowed(allowed: str) -> Response:
    return JSONResponse(
        {"detail": "Method not allowed"}, status_code=405, headers={"Allow": allowed}
    )


def _failure(
    as_json: bool,
    next_path: str,
    username: str,
    message: str,
    status_code: int,
    headers: dict[str, str] | None = None,
    sso: str | None = None,
) -> Response:
    """A refused login: JSON for scripts, the page with the error (`next` and the username
    kept) for forms."""
    if as_json:
        return JSONResponse({"detail": message}, status_code=status_code, headers=headers)
    response = login_page(
        next_path=next_path, username=username, error=message, status_code=status_code, sso=sso
    )
    response.headers.update(headers or {})
    return response


def _setup_failure(
    as_json: bool,
    fields: dict[str, str],
    message: str,
    status: int,
    invalid: frozenset[str] = frozenset(),
    *,
    code: str | None = None,
) -> Response:
    if as_json:
        return JSONResponse({"detail": message}, status_code=status)
    return setup_page(
        error=message,
        invalid=invalid,
        username=fields.get("username", ""),
        display_name=fields.get("display_name", ""),
        status_code=status,
        code=code is not None,
    )

"""Errors as a client expects them: `{"error": {"code", "message"}, "detail": message}`.

`detail` repeats the message for FastAPI-style clients (and the login gate, whose 401 has
only `detail`). Every handler raises `ApiError`; store and run errors are mapped here once.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match, NoMatchFound, compile_path
from starlette.types import Receive, Scope, Send

from agent_chat.api.schemas import ErrorOut
from agent_chat.db.errors import Forbidden, LastAdministrator, NotFound, ValidationFailed
from agent_chat.runs.client import BridgeError, BridgeUnavailable
from agent_chat.runs.manager import UnknownRun
from agent_chat.services.errors import Busy

log = logging.getLogger(__name__)

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    422: "invalid",
    429: "too_many_runs",
    502: "agent_error",
    503: "unavailable",
}


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        fields: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code or _CODES.get(status, "error")
        self.fields = fields
        self.headers = headers


def not_found(what: str) -> ApiError:
    return ApiError(404, f"{what} does not exist.")


def error_response(
    status: int,
    message: str,
    *,
    code: str | None = None,
    fields: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    error: dict[str, Any] = {"code": code or _CODES.get(status, "error"), "message": message}
    if fields:
        error["fields"] = fields
    return JSONResponse(
        {"error": error, "detail": message},
        status_code=status,
        headers={"Cache-Control": "no-store", **(headers or {})},
    )


# What every operation may answer besides its success (for the OpenAPI document).
COMMON_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "The body is not valid JSON."},
    401: {"model": ErrorOut, "description": "Login required (only with a password set)."},
    422: {"model": ErrorOut, "description": "The request is malformed."},
}


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {s: {"model": ErrorOut, "description": _CODES.get(s, "error")} for s in statuses}


def _field_name(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


class ApiFallback(BaseRoute):
    """The last route of the API: a method a path does not have is a 405 with the right
    `Allow`, any other `/api/...` path a JSON 404. (The app's pages are mounted behind the
    API: without this, they would answer such requests with a page or plain text.)"""

    def __init__(self, api: FastAPI) -> None:
        self._api = api
        self._paths: list[tuple[re.Pattern[str], str]] | None = None

    def _allowed(self) -> list[tuple[re.Pattern[str], str]]:
        # Read from the OpenAPI schema when first needed, not at start: building the schema
        # was 0.4 CPU-s of every app start (FastAPI keeps it for /api/openapi.json).
        if self._paths is None:
            self._paths = [
                (compile_path(path)[0], ", ".join(sorted(m.upper() for m in operations)))
                for path, operations in self._api.openapi()["paths"].items()
            ]
        return self._paths

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and scope["path"].startswith("/api/"):
            return Match.FULL, {}
        return Match.NONE, {}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        allow = next((a for regex, a in self._allowed() if regex.match(scope["path"])), None)
        if allow is None:
            response = error_response(404, "There is no such API endpoint.")
        else:
            response = error_response(
                405, "This method is not allowed here.", headers={"Allow": allow}
            )
        await response(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)


def install(api: FastAPI) -> None:
    @api.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(
            exc.status, exc.message, code=exc.code, fields=exc.fields, headers=exc.headers
        )

    @api.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        fields: dict[str, str] = {}
        for item in exc.errors():
            fields.setdefault(_field_name(tuple(item.get("loc", ()))), str(item.get("msg", "")))
        message = "; ".join(f"{k}: {v}" for k, v in fields.items()) or "Invalid request."
        return error_response(422, message, fields=fields)

    @api.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail), headers=exc.headers)

    @api.exception_handler(NotFound)
    async def _store_not_found(_: Request, exc: NotFound) -> JSONResponse:
        return error_response(404, str(exc))

    @api.exception_handler(UnknownRun)
    async def _unknown_run(_: Request, exc: UnknownRun) -> JSONResponse:
        return error_response(404, str(exc))

    @api.exception_handler(Busy)
    async def _busy(_: Request, exc: Busy) -> JSONResponse:
        return error_response(409, str(exc))

    @api.exception_handler(Forbidden)
    async def _store_forbidden(_: Request, exc: Forbidden) -> JSONResponse:
        return error_response(403, str(exc))

    @api.exception_handler(LastAdministrator)
    async def _last_admin(_: Request, exc: LastAdministrator) -> JSONResponse:
        return error_response(409, str(exc), code="last_administrator")

    @api.exception_handler(ValidationFailed)
    async def _store_invalid(_: Request, exc: ValidationFailed) -> JSONResponse:
        return error_response(422, str(exc), fields=exc.field_errors)

    @api.exception_handler(UnicodeEncodeError)
    async def _not_utf8(_: Request, exc: UnicodeEncodeError) -> JSONResponse:
        return error_response(422, "Text must be valid Unicode (no lone surrogates).")

    @api.exception_handler(BridgeError)
    async def _bridge(_: Request, exc: BridgeError) -> JSONResponse:
        status = 503 if isinstance(exc, BridgeUnavailable) else 502
        log.warning("bridge error on an API call: %s", exc.message)
        return error_response(status, exc.message)

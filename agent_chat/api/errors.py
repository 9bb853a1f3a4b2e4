"""Errors as a client expects them: `{"error": {"code", "message"}, "detail": message}`.

`detail` repeats the message for FastAPI-style clients (and the login gate, whose 401 has
only `detail`). Every handler raises `ApiError`; store and run errors are mapped here once.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from agent_chat.api.schemas import ErrorOut
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.runs.client import BridgeError, BridgeUnavailable

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
    401: {"model": ErrorOut, "description": "Login required (only with a password set)."},
    422: {"model": ErrorOut, "description": "The request is malformed."},
}


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {s: {"model": ErrorOut, "description": _CODES.get(s, "error")} for s in statuses}


def _field_name(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


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

    @api.exception_handler(ValidationFailed)
    async def _store_invalid(_: Request, exc: ValidationFailed) -> JSONResponse:
        return error_response(422, str(exc), fields=exc.field_errors)

    @api.exception_handler(BridgeError)
    async def _bridge(_: Request, exc: BridgeError) -> JSONResponse:
        status = 503 if isinstance(exc, BridgeUnavailable) else 502
        log.warning("bridge error on an API call: %s", exc.message)
        return error_response(status, exc.message)

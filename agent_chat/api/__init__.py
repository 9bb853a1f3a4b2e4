"""The app's HTTP API (docs/architecture.md §4a), served on the app's port next to the Reflex pages
(mounted through `rx.App(api_transformer=...)`, inside the login gate and the Host/Origin
guard). One module per group of endpoints; all of them call the same store functions and
the same `RunManager` as the page, through `get_backend()` (the app's `services()`).

OpenAPI 3 at `/api/openapi.json`, Swagger UI at `/api/docs` (served from the
`swagger-ui-bundle` package: no CDN, the page's Content-Security-Policy allows it).
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from agent_chat import routes
from agent_chat.api import (
    attachments,
    catalog,
    docs,
    errors,
    export,
    folders,
    imports,
    mcp,
    runs,
    schedules,
    search,
    sessions,
    shared,
    stream,
    versions,
)
from agent_chat.api.deps import Backend
from agent_chat.api.export import content_disposition
from agent_chat.api.workspace_files import workspace_router

__all__ = ["create_api", "content_disposition"]

DESCRIPTION = """\
Sessions, runs with a resumable Server-Sent Events stream, answers to the agent's
questions, message versions, models and skills, scheduled runs: everything the page
does.

Errors are JSON: `{"error": {"code", "message", "fields"?}, "detail": message}`.
With a password set (`AGENT_CHAT_PASSWORD`), send the login cookie or
`Authorization: Bearer <token>` (personal API tokens: Settings → API tokens).
"""


def create_api(get_backend: Callable[[], Backend]) -> FastAPI:
    """The API app; `get_backend` is called per request (the app's services start later)."""
    api = FastAPI(
        title="Agent Chat API",
        version="1.0.0",
        description=DESCRIPTION,
        docs_url=None,
        redoc_url=None,
        openapi_url=routes.API_OPENAPI,
        responses=errors.COMMON_RESPONSES,
    )
    api.state.get_backend = get_backend
    errors.install(api)
    # imports first: its path would otherwise meet /api/chat/sessions/{session_id}.
    for module in (
        imports,
        sessions,
        search,
        folders,
        attachments,
        export,
        runs,
        stream,
        versions,
        catalog,
        shared,
        schedules,
        mcp,
    ):
        api.include_router(module.router)
    api.include_router(workspace_router(get_backend))
    docs.install(api)
    api.router.routes.append(errors.ApiFallback(api))  # last: after every real route
    return api

"""The API's docs page (`/api/docs`): Swagger UI from the `swagger-ui-bundle` package,
served by the app itself (the machine may be offline; the page's CSP allows only 'self'),
and the OpenAPI links of the served document (`LINKS`: which created resource's id the other
operations take), added in one place to what FastAPI generates."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from agent_chat import routes

STATIC = routes.API_DOCS + "/static"


def _swagger_dir() -> Path | None:
    try:
        import swagger_ui_bundle
    except ImportError:
        return None
    return Path(swagger_ui_bundle.swagger_ui_path)


def install(api: FastAPI) -> None:
    install_links(api)
    folder = _swagger_dir()
    if folder is not None:
        api.mount(STATIC, StaticFiles(directory=folder), name="swagger-ui")

    @api.get(routes.API_DOCS, include_in_schema=False)
    async def docs() -> HTMLResponse:
        if folder is None:
            return HTMLResponse(
                f"<p>Install swagger-ui-bundle for this page; the API is described at "
                f'<a href="{routes.API_OPENAPI}">{routes.API_OPENAPI}</a>.</p>'
            )
        return get_swagger_ui_html(
            openapi_url=routes.API_OPENAPI,
            title="Agent Chat API",
            swagger_js_url=f"{STATIC}/swagger-ui-bundle.js",
            swagger_css_url=f"{STATIC}/swagger-ui.css",
            swagger_favicon_url=f"{STATIC}/favicon-32x32.png",
        )


# --- OpenAPI links: what a created resource's id is used by --------------------------------

# (method, path, status) of a response → the operations its ids feed: {link name: (method,
# path, {parameter: runtime expression})}. Stateful clients (schemathesis' state machine, the
# suite's tests/api/test_schemathesis.py) chain requests along these.
_SESSION = {"session_id": "$response.body#/sessionId"}
_SESSION_LINKS = {
    "GetSession": ("get", "/api/chat/sessions/{session_id}", _SESSION),
    "UpdateSession": ("patch", "/api/chat/sessions/{session_id}", _SESSION),
    "DeleteSession": ("delete", "/api/chat/sessions/{session_id}", _SESSION),
    "ResetSession": ("post", "/api/chat/sessions/{session_id}/reset", _SESSION),
    "ListMessages": ("get", "/api/chat/sessions/{session_id}/messages", _SESSION),
    "ExportSession": ("get", "/api/chat/sessions/{session_id}/export", _SESSION),
    "StartRun": ("post", "/api/chat/sessions/{session_id}/runs", _SESSION),
}
_RUN = {"run_id": "$response.body#/runId"}
_ANSWER = {"message_id": "$response.body#/messageId"}
_QUESTION = {"message_id": "$response.body#/userMessageId"}
_RUN_LINKS = {
    "RunState": ("get", "/api/chat/runs/{run_id}/state", _RUN),
    "StopRun": ("post", "/api/chat/runs/{run_id}/stop", _RUN),
    "ResumeRun": ("post", "/api/chat/runs/{run_id}/resume", _RUN),
    "StreamRun": ("get", "/api/chat/runs/{run_id}/stream", _RUN),
    "RegenerateAnswer": ("post", "/api/chat/messages/{message_id}/regenerate", _ANSWER),
    "AnswerVersions": ("get", "/api/chat/messages/{message_id}/versions", _ANSWER),
    "ActivateAnswer": ("post", "/api/chat/messages/{message_id}/activate", _ANSWER),
    "EditQuestion": ("patch", "/api/chat/messages/{message_id}", _QUESTION),
}
_FOLDER = {"folder_id": "$response.body#/id"}
LINKS: dict[tuple[str, str, str], dict[str, tuple[str, str, dict[str, str]]]] = {
    ("post", "/api/chat/sessions", "201"): _SESSION_LINKS,
    ("post", "/api/chat/sessions/import", "201"): _SESSION_LINKS,
    ("post", "/api/chat/sessions/{session_id}/runs", "201"): _RUN_LINKS,
    ("post", "/api/chat/messages/{message_id}/regenerate", "201"): _RUN_LINKS,
    ("patch", "/api/chat/messages/{message_id}", "201"): _RUN_LINKS,
    ("post", "/api/chat/folders", "201"): {
        "RenameFolder": ("patch", "/api/chat/folders/{folder_id}", _FOLDER),
        "DeleteFolder": ("delete", "/api/chat/folders/{folder_id}", _FOLDER),
    },
}


def add_links(document: dict) -> dict:
    """Put `LINKS` into a generated OpenAPI document (by operationId: FastAPI's, read here,
    so a renamed handler cannot leave a link pointing nowhere)."""
    paths = document["paths"]
    for (method, path, status), links in LINKS.items():
        response = paths[path][method]["responses"][status]
        response["links"] = {
            name: {"operationId": paths[to_path][to_method]["operationId"], "parameters": params}
            for name, (to_method, to_path, params) in links.items()
        }
    return document


def install_links(api: FastAPI) -> None:
    """The served document (`api.openapi()`, cached by FastAPI) with `LINKS` in it."""
    generate = api.openapi

    def openapi() -> dict:
        if api.openapi_schema is None:
            api.openapi_schema = add_links(generate())
        return api.openapi_schema

    api.openapi = openapi  # type: ignore[method-assign]

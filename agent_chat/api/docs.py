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
    "GetSession": ("get", routes.API_SESSION, _SESSION),
    "UpdateSession": ("patch", routes.API_SESSION, _SESSION),
    "DeleteSession": ("delete", routes.API_SESSION, _SESSION),
    "ResetSession": ("post", routes.API_SESSION_RESET, _SESSION),
    "ListMessages": ("get", routes.API_SESSION_MESSAGES, _SESSION),
    "ExportSession": ("get", routes.EXPORT_API, _SESSION),
    "StartRun": ("post", routes.API_SESSION_RUNS, _SESSION),
}
_RUN = {"run_id": "$response.body#/runId"}
_ANSWER = {"message_id": "$response.body#/messageId"}
_QUESTION = {"message_id": "$response.body#/userMessageId"}
_RUN_LINKS = {
    "RunState": ("get", routes.API_RUN_STATE, _RUN),
    "StopRun": ("post", routes.API_RUN_STOP, _RUN),
    "ResumeRun": ("post", routes.API_RUN_RESUME, _RUN),
    "StreamRun": ("get", routes.API_RUN_STREAM, _RUN),
    "RegenerateAnswer": ("post", routes.API_MESSAGE_REGENERATE, _ANSWER),
    "AnswerVersions": ("get", routes.API_MESSAGE_VERSIONS, _ANSWER),
    "ActivateAnswer": ("post", routes.API_MESSAGE_ACTIVATE, _ANSWER),
    "EditQuestion": ("patch", routes.API_MESSAGE, _QUESTION),
}
_FOLDER = {"folder_id": "$response.body#/id"}
_SCHEDULE = {"schedule_id": "$response.body#/id"}
_SCHEDULE_LINKS = {
    "GetSchedule": ("get", routes.API_SCHEDULE, _SCHEDULE),
    "UpdateSchedule": ("patch", routes.API_SCHEDULE, _SCHEDULE),
    "DeleteSchedule": ("delete", routes.API_SCHEDULE, _SCHEDULE),
    "PauseSchedule": ("post", routes.API_SCHEDULE_PAUSE, _SCHEDULE),
    "ResumeSchedule": ("post", routes.API_SCHEDULE_RESUME, _SCHEDULE),
    "RunSchedule": ("post", routes.API_SCHEDULE_RUN, _SCHEDULE),
    "ScheduleRuns": ("get", routes.API_SCHEDULE_RUNS, _SCHEDULE),
}
LINKS: dict[tuple[str, str, str], dict[str, tuple[str, str, dict[str, str]]]] = {
    ("post", routes.API_SESSIONS, "201"): _SESSION_LINKS,
    ("post", routes.API_SESSIONS_IMPORT, "201"): _SESSION_LINKS,
    ("post", routes.API_SESSION_RUNS, "201"): _RUN_LINKS,
    ("post", routes.API_MESSAGE_REGENERATE, "201"): _RUN_LINKS,
    ("patch", routes.API_MESSAGE, "201"): _RUN_LINKS,
    ("post", routes.API_SCHEDULES, "201"): _SCHEDULE_LINKS,
    ("post", routes.API_FOLDERS, "201"): {
        "RenameFolder": ("patch", routes.API_FOLDER, _FOLDER),
        "DeleteFolder": ("delete", routes.API_FOLDER, _FOLDER),
    },
    ("post", routes.API_ATTACHMENTS, "201"): {
        "DownloadAttachment": (
            "get",
            routes.API_ATTACHMENT,
            {"attachment_id": "$response.body#/attachments/0/id"},
        ),
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

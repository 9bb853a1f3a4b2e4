"""The API's docs page (`/api/docs`): Swagger UI from the `swagger-ui-bundle` package,
served by the app itself (the machine may be offline; the page's CSP allows only 'self')."""

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

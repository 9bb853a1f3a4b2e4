"""The login gate for tests: a settable clock, an account, and the real `LoginGate` in front
of a small Starlette app standing in for Reflex (pages, static files, `/_event`, `/ping`)."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route, WebSocketRoute

from agent_chat.auth import GateConfig, LoginGate
from agent_chat.db import users
from agent_chat.runs.storage import Storage

HOUR = 3600.0
USERNAME = "alice"
PASSWORD = "hunter2-but-longer"
CONFIG = GateConfig(session_seconds=12 * HOUR)


class Clock:
    """A clock the test sets by hand (`clock.now += HOUR`)."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def _chat_page(request):
    return HTMLResponse("<h1>the chat page</h1>")


async def _asset(request):
    return PlainTextResponse("console.log(1)", media_type="text/javascript")


async def _event_socket(websocket):
    await websocket.accept()
    await websocket.send_text("state")
    await websocket.close()


def stand_in_app() -> Starlette:
    """Reflex's backend: pages, static files, the `/_event` websocket, `/ping`."""
    return Starlette(
        routes=[
            Route("/", _chat_page),
            Route("/chat/{session_id}", _chat_page),
            Route("/assets/app.js", _asset),
            Route("/ping", lambda request: PlainTextResponse("pong")),
            Route("/_upload", lambda request: PlainTextResponse("ok"), methods=["POST"]),
            WebSocketRoute("/_event", _event_socket),
        ]
    )


def _api() -> FastAPI:
    api = FastAPI()

    @api.get("/api/chat/sessions/{session_uuid}/export")
    async def export(session_uuid: str) -> dict:
        return {"secret conversation": session_uuid}

    return api


def gated(storage: Storage, clock: Clock, config: GateConfig = CONFIG, **kwargs: Any) -> LoginGate:
    """The gate over an API and the stand-in app, mounted the way Reflex applies
    `api_transformer=[api, login_gate]`."""
    api = _api()
    api.mount("", stand_in_app())
    return LoginGate(
        api, storage=lambda: storage, config_loader=lambda: config, clock=clock, **kwargs
    )


def add_user(storage: Storage, username: str = USERNAME, password: str = PASSWORD, **kw: Any):
    return storage.call_sync(users.create_user, username=username, password=password, **kw)


def client_for(app: Any, address: str = "10.0.0.7", base: str = "http://testserver"):
    """An httpx client calling `app` in process, from the client address `address`."""
    transport = httpx.ASGITransport(app=app, client=(address, 5555))
    return httpx.AsyncClient(transport=transport, base_url=base)


async def log_in(
    client: httpx.AsyncClient,
    next_path: str = "/",
    username: str = USERNAME,
    password: str = PASSWORD,
) -> httpx.Response:
    """`POST /api/login` with the form the login page sends."""
    return await client.post(
        "/api/login", data={"username": username, "password": password, "next": next_path}
    )

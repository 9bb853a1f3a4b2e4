"""Shared by the gate tests: a settable clock, a database with an administrator, and the
gate in front of a small Starlette app standing in for Reflex."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route, WebSocketRoute

from agent_chat.auth import GateConfig, LoginGate
from agent_chat.db import users
from agent_chat.runs.storage import Storage
from tests.support.accounts import use_cheap_hashes

HOUR = 3600.0
USERNAME = "alice"
PASSWORD = "hunter2-but-longer"
CONFIG = GateConfig(session_seconds=12 * HOUR)


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def _cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    use_cheap_hashes(monkeypatch)


# --- the gate, in front of a stand-in for Reflex ------------------------------------------------


async def _chat_page(request):
    return HTMLResponse("<h1>the chat page</h1>")


async def _asset(request):
    return PlainTextResponse("console.log(1)", media_type="text/javascript")


async def _event_socket(websocket):
    await websocket.accept()
    await websocket.send_text("state")
    await websocket.close()


def _stand_in_app() -> Starlette:
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


def _gated(storage: Storage, clock: Clock, config: GateConfig = CONFIG, **kwargs: Any) -> LoginGate:
    """Mounted the way Reflex applies `api_transformer=[api, login_gate]`."""
    api = _api()
    api.mount("", _stand_in_app())
    return LoginGate(
        api, storage=lambda: storage, config_loader=lambda: config, clock=clock, **kwargs
    )


def add_user(storage: Storage, username: str = USERNAME, password: str = PASSWORD, **kw: Any):
    return storage.call_sync(users.create_user, username=username, password=password, **kw)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def alice(storage: Storage):
    return add_user(storage, role=users.UserRole.ADMIN)


def client_for(gate: LoginGate, address: str = "10.0.0.7", base: str = "http://testserver"):
    transport = httpx.ASGITransport(app=gate, client=(address, 5555))
    return httpx.AsyncClient(transport=transport, base_url=base)


@pytest.fixture
async def client(storage: Storage, clock: Clock, alice) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(_gated(storage, clock)) as client:
        yield client


async def _log_in(
    client: httpx.AsyncClient,
    next_path: str = "/",
    username: str = USERNAME,
    password: str = PASSWORD,
) -> httpx.Response:
    return await client.post(
        "/api/login", data={"username": username, "password": password, "next": next_path}
    )

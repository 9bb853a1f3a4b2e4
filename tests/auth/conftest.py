"""Shared by the login tests: a fixed key and config, a settable clock, and the gate in front
of a small Starlette app standing in for Reflex."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route, WebSocketRoute

from agent_chat.auth import LoginConfig, LoginGate, LoginRateLimiter, derive_key

KEY = derive_key("a-secret", "hunter2")
HOUR = 3600.0


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


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


def _gated(config: LoginConfig | None, clock: Clock, limiter: LoginRateLimiter | None = None):
    """Mounted the way Reflex applies `api_transformer=[api, login_gate]`."""
    api = _api()
    api.mount("", _stand_in_app())
    return LoginGate(api, config_loader=lambda: config, limiter=limiter, clock=clock)


CONFIG = LoginConfig(password="hunter2", key=KEY, session_seconds=12 * HOUR)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def client(clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=_gated(CONFIG, clock), client=("10.0.0.7", 5555))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


async def _log_in(client: httpx.AsyncClient, next_path: str = "/") -> httpx.Response:
    return await client.post("/api/login", data={"password": "hunter2", "next": next_path})

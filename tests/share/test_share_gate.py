"""The login gate lets exactly `/s/<token>` and `/s/<token>/pictures/<n>` through without a
session, and nothing else (not `/s/../api`, not `/s/<token>/x`, not the websocket, not a
longer or shorter token)."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from starlette.responses import PlainTextResponse

from agent_chat.auth import LoginGate
from agent_chat.auth.paths import is_share_path
from agent_chat.runs.storage import Storage
from tests.support.gate import CONFIG, Clock, add_user, stand_in_app

TOKEN = "AbCdEfGhIjKlMnOpQrStUvWxYz012-_9"


def _app() -> FastAPI:
    api = FastAPI()

    @api.get("/s/{token}")
    async def shared(token: str) -> PlainTextResponse:
        return PlainTextResponse(f"shared {token}")

    @api.get("/s/{token}/pictures/{index}")
    async def picture(token: str, index: str) -> PlainTextResponse:
        return PlainTextResponse(f"picture {index}")

    @api.get("/api/chat/sessions")
    async def sessions() -> PlainTextResponse:
        return PlainTextResponse("every conversation")

    api.mount("", stand_in_app())
    return api


@pytest.fixture
def gate(storage: Storage) -> LoginGate:
    """The gate with a user in the database (the app is set up: no redirect to /setup)."""
    add_user(storage)
    return LoginGate(_app(), storage=lambda: storage, config_loader=lambda: CONFIG, clock=Clock())


@pytest.fixture
async def client(gate: LoginGate):
    transport = httpx.ASGITransport(app=gate)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


async def test_a_share_link_opens_without_login(client: httpx.AsyncClient) -> None:
    answer = await client.get(f"/s/{TOKEN}")
    assert answer.status_code == 200 and answer.text == f"shared {TOKEN}"
    picture = await client.get(f"/s/{TOKEN}/pictures/3")
    assert picture.status_code == 200 and picture.text == "picture 3"


@pytest.mark.parametrize(
    "path",
    [
        "/s/",
        "/s/short",
        f"/s/{TOKEN}x",
        f"/s/{TOKEN}/x",
        f"/s/{TOKEN}/pictures/",
        f"/s/{TOKEN}/pictures/-1",
        f"/s/{TOKEN}/pictures/12345",
        f"/s/{TOKEN}/pictures/0/x",
        f"/s/{TOKEN}/pictures/0/../../../api/chat/sessions",
        f"/s/{TOKEN[:-1]}/pictures/0",
        f"/s/{TOKEN}/../../api/chat/sessions",
        "/s/../api/chat/sessions",
        "/s/%2e%2e/api/chat/sessions",
        f"/s/{TOKEN[:-1]}.",
        f"/x/s/{TOKEN}",
        "/api/chat/sessions",
        "/_event",
        "/chat/abc",
    ],
)
async def test_nothing_else_opens_without_login(client: httpx.AsyncClient, path: str) -> None:
    answer = await client.get(path)
    assert answer.status_code in (303, 401), (path, answer.status_code)
    assert "every conversation" not in answer.text and "chat page" not in answer.text


def test_the_share_path_rule() -> None:
    assert is_share_path(f"/s/{TOKEN}")
    assert is_share_path(f"/s/{TOKEN}/pictures/0") and is_share_path(f"/s/{TOKEN}/pictures/99")
    for path in (
        f"/s/{TOKEN}/pictures/0\n",
        f"/s/{TOKEN}/Pictures/0",
        f"/s/{TOKEN}\n",
        f"/S/{TOKEN}",
        f"//s/{TOKEN}",
        f"/s/{TOKEN}?",
        "/s/" + "é" * 32,
    ):
        assert not is_share_path(path), path


async def test_a_websocket_on_a_share_path_is_refused(gate: LoginGate) -> None:
    """Only the HTTP page is open: a websocket there needs a session like `/_event`."""
    scope = {
        "type": "websocket",
        "path": f"/s/{TOKEN}",
        "raw_path": f"/s/{TOKEN}".encode(),
        "root_path": "",
        "scheme": "ws",
        "query_string": b"",
        "headers": [(b"host", b"t")],
        "client": ("10.0.0.7", 1),
        "server": ("t", 80),
        "subprotocols": [],
    }
    inbox = [{"type": "websocket.connect"}]
    sent: list[dict] = []

    async def receive() -> dict:
        return inbox.pop(0) if inbox else {"type": "websocket.disconnect", "code": 1000}

    async def send(message: dict) -> None:
        sent.append(message)

    await gate(scope, receive, send)
    assert sent == [{"type": "websocket.close", "code": 1008}]


async def test_a_share_link_opens_before_the_first_administrator_exists(storage: Storage) -> None:
    gate = LoginGate(_app(), storage=lambda: storage, config_loader=lambda: CONFIG, clock=Clock())
    transport = httpx.ASGITransport(app=gate)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        assert (await client.get(f"/s/{TOKEN}")).text == f"shared {TOKEN}"
        assert (await client.get("/api/chat/sessions")).status_code == 401

"""The gate in front of a stand-in for Reflex (agent_chat/auth/gate.py): pages redirect, the API
and backend paths answer 401, static files stay public, sessions expire, and the `/_event`
websocket needs a session and closes with it."""

from __future__ import annotations

import httpx

from agent_chat.auth import (
    COOKIE_NAME,
    LoginGate,
    derive_key,
    sign_session,
)
from tests.auth.conftest import CONFIG, HOUR, KEY, Clock, _gated, _log_in


async def test_without_a_password_nothing_changes(clock: Clock) -> None:
    transport = httpx.ASGITransport(app=_gated(None, clock))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        assert (await client.get("/chat/abc")).text == "<h1>the chat page</h1>"
        assert (await client.get("/api/chat/sessions/x/export")).status_code == 200
        assert (await client.get("/login")).status_code == 404  # no login page at all


async def test_pages_redirect_to_login_with_next(client: httpx.AsyncClient) -> None:
    response = await client.get("/chat/abc?x=1")
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=%2Fchat%2Fabc%3Fx%3D1"
    assert (await client.get("/")).headers["location"] == "/login"


async def test_api_and_backend_paths_answer_401_json(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/chat/sessions/x/export")
    assert response.status_code == 401
    assert response.json() == {"detail": "Login required"}
    assert "secret" not in response.text
    assert (await client.post("/_upload")).status_code == 401
    assert (await client.post("/chat/abc")).status_code == 401


async def test_static_files_and_ping_stay_public(client: httpx.AsyncClient) -> None:
    assert (await client.get("/assets/app.js")).text == "console.log(1)"
    assert (await client.get("/ping")).text == "pong"


async def test_the_session_expires(client: httpx.AsyncClient, clock: Clock) -> None:
    await _log_in(client)
    clock.now += 12 * HOUR - 1
    assert (await client.get("/chat/abc")).status_code == 200
    clock.now += 2
    assert (await client.get("/chat/abc")).status_code == 303


async def test_a_forged_or_expired_cookie_is_refused(clock: Clock) -> None:
    transport = httpx.ASGITransport(app=_gated(CONFIG, clock))
    forged = sign_session(derive_key("guess", "hunter2"), expires=int(clock.now) + 60)
    expired = sign_session(KEY, expires=int(clock.now) - 1)
    for token in (forged, expired, "garbage"):
        async with httpx.AsyncClient(
            transport=transport, base_url="http://t", cookies={COOKIE_NAME: token}
        ) as client:
            assert (await client.get("/api/chat/sessions/x/export")).status_code == 401
    valid = sign_session(KEY, expires=int(clock.now) + 60)
    headers = {"cookie": f'bad"cookie=\\x; {COOKIE_NAME}={valid}'}  # another app's junk cookie
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/api/chat/sessions/x/export", headers=headers)
        assert response.status_code == 200


async def _websocket(gate: LoginGate, cookie: str | None) -> list[dict]:
    """Open `/_event` on the gate; the messages the app sent back."""
    headers = [(b"host", b"t")] + ([(b"cookie", cookie.encode())] if cookie else [])
    scope = {
        "type": "websocket",
        "path": "/_event",
        "raw_path": b"/_event",
        "root_path": "",
        "scheme": "ws",
        "query_string": b"EIO=4&transport=websocket",
        "headers": headers,
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
    return sent


async def test_the_event_websocket_is_refused_without_a_session(clock: Clock) -> None:
    gate = _gated(CONFIG, clock)
    # Closing before accepting: the server answers the upgrade with 403.
    assert await _websocket(gate, None) == [{"type": "websocket.close", "code": 1008}]
    assert (await _websocket(gate, f"{COOKIE_NAME}=1.forged"))[0]["type"] == "websocket.close"
    valid = sign_session(KEY, expires=int(clock.now) + 60)
    sent = await _websocket(gate, f"{COOKIE_NAME}={valid}")
    assert sent[0]["type"] == "websocket.accept"
    assert sent[1] == {"type": "websocket.send", "text": "state"}


async def test_an_open_websocket_closes_when_its_session_expires(clock: Clock) -> None:
    received: list[dict] = []

    async def socket_app(scope, receive, send):
        await receive()  # connect
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            received.append(message)
            if message["type"] == "websocket.disconnect":
                await send({"type": "websocket.send", "text": "too late"})  # dropped
                return
            await send({"type": "websocket.send", "text": "echo " + message["text"]})

    gate = LoginGate(socket_app, config_loader=lambda: CONFIG, clock=clock)
    token = sign_session(KEY, expires=int(clock.now) + 60)
    scope = {
        "type": "websocket",
        "path": "/_event",
        "headers": [(b"cookie", f"{COOKIE_NAME}={token}".encode())],
    }
    inbox = [
        {"type": "websocket.connect"},
        {"type": "websocket.receive", "text": "a"},
        {"type": "websocket.receive", "text": "b"},
    ]
    sent: list[dict] = []

    async def receive() -> dict:
        if len(inbox) == 1:
            clock.now += 61  # the session ends between the two messages
        return inbox.pop(0)

    async def send(message: dict) -> None:
        sent.append(message)

    await gate(scope, receive, send)
    assert sent == [
        {"type": "websocket.accept"},
        {"type": "websocket.send", "text": "echo a"},
        {"type": "websocket.close", "code": 1008, "reason": "Session expired"},
    ]
    assert received[-1] == {"type": "websocket.disconnect", "code": 1008}


async def test_lifespan_passes_through(clock: Clock) -> None:
    seen: list[str] = []

    async def inner(scope, receive, send):
        seen.append(scope["type"])

    gate = LoginGate(inner, config_loader=lambda: CONFIG, clock=clock)
    await gate({"type": "lifespan"}, None, None)
    assert seen == ["lifespan"]

"""The gate in front of a stand-in for Reflex (agent_chat/auth/gate.py): pages redirect, the API
and backend paths answer 401, static files stay public, sessions are looked up in the
database (expired, revoked, disabled: refused), and the `/_event` websocket needs a session
and closes as soon as it ends."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from agent_chat.auth import COOKIE_NAME, SCOPE_USER_KEY, LoginGate
from agent_chat.db import auth_sessions, users
from agent_chat.runs.storage import Storage
from tests.support.gate import CONFIG, HOUR, Clock, add_user, client_for, gated, log_in


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


async def test_a_session_opens_pages_and_the_api(client: httpx.AsyncClient) -> None:
    await log_in(client)
    assert (await client.get("/chat/abc")).text == "<h1>the chat page</h1>"
    assert (await client.get("/api/chat/sessions/x/export")).json() == {"secret conversation": "x"}


async def test_what_the_gate_lets_through_is_asked_for_again_before_each_use(
    client: httpx.AsyncClient,
) -> None:
    """A page without caching headers of its own would be fresh in the browser's cache for a
    while, and opened from it after a logout without asking the gate."""
    await log_in(client)
    assert (await client.get("/chat/abc")).headers["cache-control"] == "private, no-cache"
    api = await client.get("/api/chat/sessions/x/export")
    assert api.headers["cache-control"] == "private, no-cache"
    assert "cache-control" not in (await client.get("/assets/app.js")).headers  # public
    await client.post("/api/logout")
    refused = await client.get("/chat/abc")
    assert refused.status_code == 303 and refused.headers["cache-control"] == "no-store"


async def test_a_response_that_says_how_to_cache_it_is_left_as_it_is(
    storage: Storage, clock: Clock, alice
) -> None:
    async def app(scope, receive, send):
        headers = [(b"cache-control", b"no-store")] if scope["path"] == "/own" else []
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    gate = LoginGate(app, storage=lambda: storage, config_loader=lambda: CONFIG, clock=clock)
    async with client_for(gate) as client:
        await log_in(client)
        assert (await client.get("/own")).headers.get_list("cache-control") == ["no-store"]
        assert (await client.get("/other")).headers["cache-control"] == "private, no-cache"


async def test_the_session_expires(client: httpx.AsyncClient, clock: Clock) -> None:
    await log_in(client)
    clock.now += 12 * HOUR - 1
    assert (await client.get("/chat/abc")).status_code == 200
    clock.now += 2
    assert (await client.get("/chat/abc")).status_code == 303


async def test_a_shorter_session_length_shortens_sessions_already_issued(
    storage: Storage, clock: Clock, alice
) -> None:
    async with client_for(gated(storage, clock)) as client:
        await log_in(client)
        cookie = client.cookies[COOKIE_NAME]
    short = gated(storage, clock, config=type(CONFIG)(session_seconds=HOUR))
    async with client_for(short) as client:
        client.cookies.set(COOKIE_NAME, cookie)
        assert (await client.get("/chat/abc")).status_code == 200
        clock.now += HOUR
        assert (await client.get("/chat/abc")).status_code == 303


async def test_a_forged_or_revoked_cookie_is_refused(
    client: httpx.AsyncClient, storage: Storage, clock: Clock
) -> None:
    for token in ("garbage", "x" * 43, "y" * 5000):
        client.cookies.set(COOKIE_NAME, token)
        assert (await client.get("/api/chat/sessions/x/export")).status_code == 401
    client.cookies.clear()
    await log_in(client)
    valid = client.cookies[COOKIE_NAME]
    headers = {"cookie": f'bad"cookie=\\x; {COOKIE_NAME}={valid}'}  # another app's junk cookie
    client.cookies.clear()
    assert (await client.get("/api/chat/sessions/x/export", headers=headers)).status_code == 200
    storage.call_sync(auth_sessions.revoke_session, token=valid, now=users.utcnow())
    assert (await client.get("/api/chat/sessions/x/export", headers=headers)).status_code == 401


async def test_disabling_a_user_ends_their_sessions(
    client: httpx.AsyncClient, storage: Storage, alice
) -> None:
    await log_in(client)
    assert (await client.get("/chat/abc")).status_code == 200
    storage.call_sync(users.set_disabled, user_id=alice.id, disabled=True)
    assert (await client.get("/chat/abc")).status_code == 303
    storage.call_sync(users.set_disabled, user_id=alice.id, disabled=False)
    assert (await client.get("/chat/abc")).status_code == 303  # the session stays ended


async def test_the_app_behind_sees_who_is_signed_in(storage: Storage, clock: Clock, alice) -> None:
    seen = []

    async def app(scope, receive, send):
        seen.append(scope.get(SCOPE_USER_KEY))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    gate = LoginGate(app, storage=lambda: storage, config_loader=lambda: CONFIG, clock=clock)
    async with client_for(gate) as client:
        await log_in(client)
        assert (await client.get("/chat/abc")).status_code == 200
    assert seen[-1].username == "alice" and seen[-1].role == "admin"


async def test_services_not_started_answer_503(clock: Clock) -> None:
    def no_storage():
        raise RuntimeError("services are not started")

    gate = LoginGate(_plain_app, storage=no_storage, config_loader=lambda: CONFIG, clock=clock)
    async with client_for(gate) as client:
        response = await client.get("/chat/abc")
        assert response.status_code == 503 and response.headers["retry-after"] == "2"
        assert (await client.get("/ping")).status_code == 200


async def _plain_app(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


# --- the websocket ----------------------------------------------------------------------------


def _ws_scope(cookie: str | None, path: str = "/_event") -> dict:
    headers = [(b"host", b"t")] + ([(b"cookie", cookie.encode())] if cookie else [])
    return {
        "type": "websocket",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "scheme": "ws",
        "query_string": b"EIO=4&transport=websocket",
        "headers": headers,
        "client": ("10.0.0.7", 1),
        "server": ("t", 80),
        "subprotocols": [],
    }


async def _websocket(gate: LoginGate, cookie: str | None) -> list[dict]:
    """Open `/_event` on the gate; the messages the app sent back."""
    inbox = [{"type": "websocket.connect"}]
    sent: list[dict] = []

    async def receive() -> dict:
        return inbox.pop(0) if inbox else {"type": "websocket.disconnect", "code": 1000}

    async def send(message: dict) -> None:
        sent.append(message)

    await gate(_ws_scope(cookie), receive, send)
    return sent


async def test_the_event_websocket_is_refused_without_a_session(
    client: httpx.AsyncClient, storage: Storage, clock: Clock
) -> None:
    gate = gated(storage, clock)
    # Closing before accepting: the server answers the upgrade with 403.
    assert await _websocket(gate, None) == [{"type": "websocket.close", "code": 1008}]
    assert (await _websocket(gate, f"{COOKIE_NAME}=forged"))[0]["type"] == "websocket.close"
    await log_in(client)
    sent = await _websocket(gate, f"{COOKIE_NAME}={client.cookies[COOKIE_NAME]}")
    assert sent[0]["type"] == "websocket.accept"
    assert sent[1] == {"type": "websocket.send", "text": "state"}


async def test_an_open_websocket_closes_when_its_session_is_revoked(
    client: httpx.AsyncClient, storage: Storage, clock: Clock, alice
) -> None:
    """Another browser logs out everywhere: this socket closes within the check interval,
    even though its browser sends nothing meanwhile."""
    await log_in(client)
    token = client.cookies[COOKIE_NAME]
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

    task, sent = await _open_socket(socket_app, token, storage, clock, "a")
    await asyncio.sleep(0.3)
    assert sent == [{"type": "websocket.accept"}, {"type": "websocket.send", "text": "echo a"}]
    await storage.call(auth_sessions.revoke_user_sessions, user_id=alice.id, now=users.utcnow())
    await asyncio.wait_for(task, timeout=5)
    assert sent[-1] == {"type": "websocket.close", "code": 1008, "reason": "Session ended"}
    assert received[-1] == {"type": "websocket.disconnect", "code": 1008}
    assert {"type": "websocket.send", "text": "too late"} not in sent


async def test_an_open_websocket_closes_when_its_session_expires(
    client: httpx.AsyncClient, storage: Storage, clock: Clock
) -> None:
    await log_in(client)
    token = client.cookies[COOKIE_NAME]
    task, sent = await _open_socket(_hold_open, token, storage, clock)
    await asyncio.sleep(0.2)
    assert sent == [{"type": "websocket.accept"}]
    clock.now += 12 * HOUR
    await asyncio.wait_for(task, timeout=5)
    assert sent[-1]["code"] == 1008


async def _open_socket(
    app: Any, token: str, storage: Storage, clock: Clock, *texts: str
) -> tuple[asyncio.Task, list[dict]]:
    """A browser's websocket through the gate (session checked every 50 ms) with the session
    `token`: it connects, sends `texts`, then nothing. The running task and what it was sent."""
    gate = LoginGate(
        app,
        storage=lambda: storage,
        config_loader=lambda: CONFIG,
        clock=clock,
        check_interval=0.05,
    )
    browser: asyncio.Queue[dict] = asyncio.Queue()
    await browser.put({"type": "websocket.connect"})
    for text in texts:
        await browser.put({"type": "websocket.receive", "text": text})
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    task = asyncio.create_task(gate(_ws_scope(f"{COOKIE_NAME}={token}"), browser.get, send))
    return task, sent


async def _hold_open(scope, receive, send):
    await receive()
    await send({"type": "websocket.accept"})
    while (await receive())["type"] != "websocket.disconnect":
        pass


async def test_lifespan_passes_through(storage: Storage, clock: Clock) -> None:
    seen: list[str] = []

    async def inner(scope, receive, send):
        seen.append(scope["type"])

    gate = LoginGate(inner, storage=lambda: storage, config_loader=lambda: CONFIG, clock=clock)
    await gate({"type": "lifespan"}, None, None)
    assert seen == ["lifespan"]


async def test_a_member_signs_in_like_an_admin(storage: Storage, clock: Clock, alice) -> None:
    add_user(storage, "bob", "bobs-password-1")
    async with client_for(gated(storage, clock)) as client:
        response = await log_in(client, username="Bob", password="bobs-password-1")
        assert response.status_code == 303
        assert (await client.get("/chat/abc")).status_code == 200

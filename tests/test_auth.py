"""Login (agent_chat/auth.py): signed expiring session tokens, the wrong-password limit, no
open redirect, and the gate in front of a small Starlette app standing in for Reflex."""

from __future__ import annotations

import stat
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route, WebSocketRoute

from agent_chat.auth import (
    COOKIE_NAME,
    LoginConfig,
    LoginGate,
    LoginRateLimiter,
    derive_key,
    is_public,
    load_or_create_secret,
    safe_next,
    sign_session,
    verify_session,
)
from agent_chat.config import load_settings

KEY = derive_key("a-secret", "hunter2")
HOUR = 3600.0


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


# --- tokens -------------------------------------------------------------------------------------


def test_a_signed_token_verifies_until_it_expires() -> None:
    token = sign_session(KEY, expires=1000)
    assert verify_session(KEY, token, now=999, max_age=HOUR)
    assert not verify_session(KEY, token, now=1000, max_age=HOUR)
    assert not verify_session(KEY, token, now=5000, max_age=HOUR)


def test_a_tampered_token_or_another_key_is_refused() -> None:
    token = sign_session(KEY, expires=1000)
    expires, _, signature = token.partition(".")
    assert not verify_session(KEY, f"2000.{signature}", now=999, max_age=HOUR)
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    assert not verify_session(KEY, f"{expires}.{flipped}", now=999, max_age=HOUR)
    assert not verify_session(derive_key("other", "hunter2"), token, now=999, max_age=HOUR)
    # A new password invalidates the sessions signed with the old one.
    assert not verify_session(derive_key("a-secret", "new"), token, now=999, max_age=HOUR)
    for junk in (None, "", ".", "abc", "1000", "1000.", "-5.x", "１０００." + signature, "x" * 500):
        assert not verify_session(KEY, junk, now=999, max_age=HOUR)


def test_a_token_living_longer_than_the_session_length_is_refused() -> None:
    """Lowering AGENT_CHAT_SESSION_HOURS shortens sessions already issued."""
    token = sign_session(KEY, expires=10 * 3600)
    assert verify_session(KEY, token, now=0, max_age=10 * 3600)
    assert not verify_session(KEY, token, now=0, max_age=HOUR)
    assert verify_session(KEY, token, now=9 * 3600 + 1, max_age=HOUR)


def test_the_secret_file_is_made_once_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "data" / "secret_key"
    first = load_or_create_secret(path)
    assert len(first) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_secret(path) == first


def test_settings_read_password_secret_and_session_hours(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AGENT_CHAT_PASSWORD", "AGENT_CHAT_SECRET", "AGENT_CHAT_SESSION_HOURS"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert (settings.password, settings.secret, settings.session_hours) == (None, None, 12.0)
    assert LoginConfig.from_settings(settings) is None
    monkeypatch.setenv("AGENT_CHAT_PASSWORD", "pw")
    monkeypatch.setenv("AGENT_CHAT_SECRET", "s3")
    monkeypatch.setenv("AGENT_CHAT_SESSION_HOURS", "0.5")
    settings = load_settings()
    assert (settings.password, settings.secret, settings.session_hours) == ("pw", "s3", 0.5)
    config = LoginConfig.from_settings(settings)
    assert config is not None and config.session_seconds == 1800
    assert config.key == derive_key("s3", "pw")
    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv("AGENT_CHAT_SESSION_HOURS", bad)
        with pytest.raises(ValueError, match="AGENT_CHAT_SESSION_HOURS"):
            load_settings()


def test_without_a_secret_the_key_comes_from_the_secret_file(tmp_path: Path) -> None:
    settings = load_settings().__class__(
        **{**load_settings().__dict__, "password": "pw", "secret": None}
    )
    config = LoginConfig.from_settings(settings, data_dir=tmp_path)
    assert config is not None
    assert config.key == derive_key((tmp_path / "secret_key").read_text().strip(), "pw")


# --- rate limiter -------------------------------------------------------------------------------


def test_five_wrong_passwords_block_until_the_window_passes() -> None:
    clock = Clock(0)
    limiter = LoginRateLimiter(max_failures=5, window=900, clock=clock)
    for second in range(5):
        assert limiter.retry_after("1.2.3.4") is None
        clock.now = second * 10
        limiter.failure("1.2.3.4")
    assert limiter.retry_after("1.2.3.4") == pytest.approx(900 - 40)
    assert limiter.retry_after("5.6.7.8") is None  # per client
    clock.now = 899
    assert limiter.retry_after("1.2.3.4") == pytest.approx(1)
    clock.now = 900.5  # the first failure left the window: one more try
    assert limiter.retry_after("1.2.3.4") is None
    limiter.failure("1.2.3.4")
    assert limiter.retry_after("1.2.3.4") == pytest.approx(10 + 900 - 900.5)


def test_a_right_password_resets_the_count() -> None:
    limiter = LoginRateLimiter(max_failures=5, window=900, clock=Clock(0))
    for _ in range(4):
        limiter.failure("ip")
    limiter.success("ip")
    for _ in range(4):
        limiter.failure("ip")
    assert limiter.retry_after("ip") is None


def test_the_limiter_forgets_old_clients_and_stays_bounded() -> None:
    clock = Clock(0)
    limiter = LoginRateLimiter(max_failures=5, window=900, clock=clock, max_clients=3)
    for client in ("a", "b", "c"):
        limiter.failure(client)
    clock.now = 1000
    limiter.failure("d")  # the full table is swept: a, b, c have nothing recent
    assert list(limiter._failures) == ["d"]
    for client in ("e", "f", "g"):
        limiter.failure(client)
    assert len(limiter._failures) <= 3


# --- redirects and public paths -----------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "",
        "https://evil.example/",
        "//evil.example/",
        "/\\evil.example",
        "\\\\evil.example",
        "/\t/evil.example",
        "/\n/evil.example",
        "javascript:alert(1)",
        "evil.example",
        "http:/evil.example",
        "/login",
        "/api/chat/sessions/x/export",
        "/_event",
        "/" + "a" * 3000,
    ],
)
def test_next_refuses_anything_but_a_relative_path_on_this_site(raw: str | None) -> None:
    assert safe_next(raw) == "/"


@pytest.mark.parametrize("raw", ["/", "/chat/abc", "/settings/models?tab=1#x", "/chat/%2F%2Fx"])
def test_next_keeps_relative_paths(raw: str) -> None:
    assert safe_next(raw) == raw


def test_public_paths_are_health_checks_and_static_files_only() -> None:
    for path in ("/ping", "/_health", "/favicon.ico", "/assets/app-123.js", "/styles.css"):
        assert is_public(path), path
    for path in ("/", "/chat/x", "/index.html", "/_event", "/_upload", "/api/x.js", "/api/login"):
        assert not is_public(path), path


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


async def test_the_login_page_has_the_form(client: httpx.AsyncClient) -> None:
    response = await client.get("/login?next=/chat/abc")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    for test_id in ("login-password", "login-submit", "login-error"):
        assert f'data-testid="{test_id}"' in response.text
    assert 'name="next" value="/chat/abc"' in response.text
    assert '<label for="password">' in response.text


async def test_the_login_page_escapes_next(client: httpx.AsyncClient) -> None:
    response = await client.get('/login?next=/chat/"><script>alert(1)</script>')
    assert "<script>" not in response.text
    assert "&quot;&gt;&lt;script&gt;" in response.text


async def test_the_right_password_sets_a_cookie_and_redirects_to_next(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    response = await _log_in(client, "/chat/abc")
    assert response.status_code == 303
    assert response.headers["location"] == "/chat/abc"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Max-Age=43200" in cookie
    assert "Secure" not in cookie  # plain http here; https gets Secure
    assert (await client.get("/chat/abc")).text == "<h1>the chat page</h1>"
    assert (await client.get("/api/chat/sessions/x/export")).json() == {"secret conversation": "x"}
    # Logged in, /login goes straight on.
    assert (await client.get("/login?next=/chat/z")).headers["location"] == "/chat/z"


async def test_the_page_form_posts_to_login_itself(client: httpx.AsyncClient) -> None:
    page = await client.get("/login")
    assert '<form method="post" action="/login">' in page.text
    response = await client.post("/login", data={"password": "hunter2", "next": "/chat/q"})
    assert response.status_code == 303
    assert response.headers["location"] == "/chat/q"
    assert (await client.get("/api/login")).status_code == 405


async def test_the_session_expires(client: httpx.AsyncClient, clock: Clock) -> None:
    await _log_in(client)
    clock.now += 12 * HOUR - 1
    assert (await client.get("/chat/abc")).status_code == 200
    clock.now += 2
    assert (await client.get("/chat/abc")).status_code == 303


async def test_login_refuses_an_open_redirect(client: httpx.AsyncClient) -> None:
    for evil in ("https://evil.example/", "//evil.example", "/\\evil.example"):
        response = await _log_in(client, evil)
        assert response.status_code == 303
        assert response.headers["location"] == "/"


async def test_a_wrong_password_shows_the_error(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/login", data={"password": "nope", "next": "/chat/abc"})
    assert response.status_code == 401
    assert "set-cookie" not in response.headers
    assert 'data-testid="login-error">Wrong password.</p>' in response.text
    assert 'aria-invalid="true"' in response.text
    assert 'name="next" value="/chat/abc"' in response.text  # kept for the next try


async def test_the_sixth_wrong_password_is_rate_limited_even_if_right(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    for _ in range(5):
        assert (await client.post("/api/login", data={"password": "x"})).status_code == 401
    response = await client.post("/api/login", data={"password": "x"})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "900"
    assert "Too many wrong passwords. Try again in 15 minutes." in response.text
    # While blocked even the right password is refused (no guessing through the block).
    assert (await _log_in(client)).status_code == 429
    clock.now += 15 * 60  # the limiter has its own monotonic clock: not moved by this
    assert (await _log_in(client)).status_code == 429


async def test_the_limit_passes_with_the_window(clock: Clock) -> None:
    limiter_clock = Clock(0)
    limiter = LoginRateLimiter(clock=limiter_clock)
    transport = httpx.ASGITransport(app=_gated(CONFIG, clock, limiter), client=("1.1.1.1", 1))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for _ in range(5):
            await client.post("/api/login", data={"password": "x"})
        limiter_clock.now = 14 * 60
        response = await client.post("/api/login", data={"password": "x"})
        assert response.status_code == 429
        assert "Try again in 1 minute." in response.text
        assert response.headers["retry-after"] == "60"
        limiter_clock.now = 15 * 60 + 1
        assert (await _log_in(client)).status_code == 303
        # The right password reset the count: five more wrong ones before the next block.
        for _ in range(5):
            assert (await client.post("/api/login", data={"password": "x"})).status_code == 401


async def test_json_login_for_scripts(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/login", json={"password": "nope"})
    assert response.status_code == 401
    assert response.json() == {"detail": "Wrong password."}
    response = await client.post("/api/login", json={"password": "hunter2", "next": "/chat/a"})
    assert response.json() == {"ok": True, "next": "/chat/a"}
    assert (await client.get("/api/chat/sessions/y/export")).status_code == 200


async def test_malformed_or_huge_login_bodies_are_400(client: httpx.AsyncClient) -> None:
    headers = {"content-type": "application/json"}
    assert (await client.post("/api/login", content=b"[1]", headers=headers)).status_code == 400
    assert (await client.post("/api/login", content=b"{", headers=headers)).status_code == 400
    huge = {"password": "x" * 10_000}
    assert (await client.post("/api/login", data=huge)).status_code == 400


async def test_logout_clears_the_cookie(client: httpx.AsyncClient) -> None:
    await _log_in(client)
    response = await client.post("/api/logout")
    assert response.status_code == 303
    assert response.headers["location"] == "/login"
    assert f'{COOKIE_NAME}=""' in response.headers["set-cookie"]
    assert (await client.get("/chat/abc")).status_code == 303
    assert (await client.get("/api/logout")).status_code == 405


async def test_https_cookies_are_secure(clock: Clock) -> None:
    transport = httpx.ASGITransport(app=_gated(CONFIG, clock))
    async with httpx.AsyncClient(transport=transport, base_url="https://testserver") as client:
        assert "Secure" in (await _log_in(client)).headers["set-cookie"]


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

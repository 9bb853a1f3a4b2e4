"""The login routes through the gate (agent_chat/auth/gate.py, page.py): the page and its
escaping, the cookie a right password sets, wrong passwords and their limit, JSON login,
logout."""

from __future__ import annotations

import httpx

from agent_chat.auth import (
    COOKIE_NAME,
    LoginRateLimiter,
)
from tests.auth.conftest import CONFIG, Clock, _gated, _log_in


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

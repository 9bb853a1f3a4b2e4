"""The login routes through the gate (agent_chat/auth/routes.py, page.py): the page and its
escaping, the cookie a right password sets, wrong passwords, disabled accounts, JSON login,
logout and logout everywhere."""

from __future__ import annotations

import httpx

from agent_chat.auth import COOKIE_NAME
from agent_chat.auth.store import as_datetime
from agent_chat.db import auth_sessions, users
from agent_chat.runs.storage import Storage
from tests.support.gate import PASSWORD, Clock, add_user, client_for, gated, log_in


async def test_the_login_page_has_the_form(client: httpx.AsyncClient) -> None:
    response = await client.get("/login?next=/chat/abc")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    for test_id in ("login-username", "login-password", "login-submit", "login-error"):
        assert f'data-testid="{test_id}"' in response.text
    assert 'name="next" value="/chat/abc"' in response.text
    assert '<label for="username">' in response.text and '<label for="password">' in response.text


async def test_the_login_page_escapes_next_and_the_username(client: httpx.AsyncClient) -> None:
    response = await client.get('/login?next=/chat/"><script>alert(1)</script>')
    assert "<script>" not in response.text
    assert "&quot;&gt;&lt;script&gt;" in response.text
    response = await client.post(
        "/login", data={"username": '"><script>x</script>', "password": "nope"}
    )
    assert "<script>x" not in response.text


async def test_the_right_password_sets_a_cookie_and_redirects_to_next(
    client: httpx.AsyncClient, storage: Storage, clock: Clock, alice
) -> None:
    response = await log_in(client, "/chat/abc", username="  Alice ")
    assert response.status_code == 303
    assert response.headers["location"] == "/chat/abc"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Max-Age=43200" in cookie
    assert "Secure" not in cookie  # plain http here; https gets Secure
    token = client.cookies[COOKIE_NAME]
    assert len(token) == 43
    # Only the token's hash is stored.
    now = as_datetime(clock.now)
    (row,) = storage.call_sync(auth_sessions.list_user_sessions, user_id=alice.id, now=now)
    assert row.token_hash != token and len(row.token_hash) == 64
    assert row.address == "10.0.0.7"
    assert storage.call_sync(users.get_user, user_id=alice.id).last_login_at is not None
    # Logged in, /login goes straight on.
    assert (await client.get("/login?next=/chat/z")).headers["location"] == "/chat/z"


async def test_the_page_form_posts_to_login_itself(client: httpx.AsyncClient) -> None:
    page = await client.get("/login")
    assert '<form method="post" action="/login">' in page.text
    data = {"username": "alice", "password": PASSWORD, "next": "/chat/q"}
    response = await client.post("/login", data=data)
    assert response.status_code == 303
    assert response.headers["location"] == "/chat/q"
    assert (await client.get("/api/login")).status_code == 405


async def test_login_refuses_an_open_redirect(client: httpx.AsyncClient) -> None:
    for evil in ("https://evil.example/", "//evil.example", "/\\evil.example", "/setup"):
        response = await log_in(client, evil)
        assert response.status_code == 303
        assert response.headers["location"] == "/"


async def test_a_wrong_password_or_unknown_user_shows_the_same_error(
    client: httpx.AsyncClient,
) -> None:
    for username, password in (("alice", "nope"), ("nobody", PASSWORD), ("bad name!", "x")):
        response = await client.post(
            "/api/login", data={"username": username, "password": password, "next": "/chat/abc"}
        )
        assert response.status_code == 401
        assert "set-cookie" not in response.headers
        assert 'data-testid="login-error">Wrong username or password.</p>' in response.text
        assert 'aria-invalid="true"' in response.text
        assert 'name="next" value="/chat/abc"' in response.text  # kept for the next try
    assert (
        'value="alice"'
        in (await client.post("/login", data={"username": "alice", "password": "x"})).text
    )


async def test_a_disabled_user_cannot_sign_in(
    client: httpx.AsyncClient, storage: Storage, alice
) -> None:
    storage.call_sync(users.set_disabled, user_id=alice.id, disabled=True)
    response = await log_in(client)
    assert response.status_code == 403
    assert "This account is disabled." in response.text
    assert COOKIE_NAME not in client.cookies
    wrong = await client.post("/api/login", data={"username": "alice", "password": "x"})
    assert wrong.status_code == 401


async def test_json_login_for_scripts(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/login", json={"username": "alice", "password": "nope"})
    assert response.status_code == 401
    assert response.json() == {"detail": "Wrong username or password."}
    response = await client.post(
        "/api/login", json={"username": "alice", "password": PASSWORD, "next": "/chat/a"}
    )
    assert response.json() == {"ok": True, "next": "/chat/a"}
    assert (await client.get("/api/chat/sessions/y/export")).status_code == 200


async def test_malformed_or_huge_login_bodies_are_400(client: httpx.AsyncClient) -> None:
    headers = {"content-type": "application/json"}
    assert (await client.post("/api/login", content=b"[1]", headers=headers)).status_code == 400
    assert (await client.post("/api/login", content=b"{", headers=headers)).status_code == 400
    huge = {"password": "x" * 10_000}
    assert (await client.post("/api/login", data=huge)).status_code == 400


async def test_logout_ends_the_session_for_real(client: httpx.AsyncClient) -> None:
    await log_in(client)
    token = client.cookies[COOKIE_NAME]
    response = await client.post("/api/logout")
    assert response.status_code == 303
    assert response.headers["location"] == "/login"
    assert f'{COOKIE_NAME}=""' in response.headers["set-cookie"]
    assert (await client.get("/chat/abc")).status_code == 303
    # A copy of the cookie is worth nothing now: the session is revoked, not just forgotten.
    client.cookies.set(COOKIE_NAME, token)
    assert (await client.get("/chat/abc")).status_code == 303
    assert (await client.get("/api/logout")).status_code == 405


async def test_logout_everywhere_ends_every_session_of_the_user(
    storage: Storage, clock: Clock, alice
) -> None:
    add_user(storage, "bob", "bobs-password-1")
    gate = gated(storage, clock)
    async with (
        client_for(gate) as laptop,
        client_for(gate, "10.0.0.8") as phone,
        client_for(gate) as bob,
    ):
        await log_in(laptop)
        await log_in(phone)
        await log_in(bob, username="bob", password="bobs-password-1")
        response = await phone.post("/api/logout-all", headers={"accept": "application/json"})
        assert response.json() == {"ok": True}
        assert (await laptop.get("/chat/abc")).status_code == 303
        assert (await phone.get("/chat/abc")).status_code == 303
        assert (await bob.get("/chat/abc")).status_code == 200  # someone else's stays
        assert (await phone.post("/api/logout-all")).status_code == 401


async def test_https_cookies_are_secure(storage: Storage, clock: Clock, alice) -> None:
    async with client_for(gated(storage, clock), base="https://testserver") as client:
        assert "Secure" in (await log_in(client)).headers["set-cookie"]

"""The first administrator (agent_chat/auth/routes.py, db/users.py): with no user every page
and `/api/*` lead to `/setup`; the form makes the administrator and signs them in; two at
once make one; afterwards `/setup` is 404."""

from __future__ import annotations

import asyncio

from agent_chat.auth import COOKIE_NAME
from agent_chat.db import users
from agent_chat.runs.storage import Storage
from tests.auth.conftest import Clock, _gated, client_for

FORM = {"username": "Root.Admin", "display_name": "  Ada   L. ", "password": "long enough pw"}


async def test_without_a_user_everything_leads_to_setup(storage: Storage, clock: Clock) -> None:
    async with client_for(_gated(storage, clock)) as client:
        assert (await client.get("/chat/abc")).headers["location"] == "/setup"
        assert (await client.get("/login")).headers["location"] == "/setup"
        api = await client.get("/api/chat/sessions/x/export")
        assert api.status_code == 401 and "setup" in api.json()["detail"].lower()
        assert (await client.post("/api/login", json={"username": "a"})).status_code == 409
        assert (await client.get("/ping")).status_code == 200
        page = await client.get("/setup")
        assert page.status_code == 200
        for test_id in ("setup-username", "setup-display-name", "setup-password", "setup-submit"):
            assert f'data-testid="{test_id}"' in page.text
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


async def test_the_form_makes_the_admin_and_signs_them_in(storage: Storage, clock: Clock) -> None:
    async with client_for(_gated(storage, clock)) as client:
        response = await client.post("/setup", data=FORM)
        assert response.status_code == 303 and response.headers["location"] == "/"
        assert COOKIE_NAME in client.cookies
        assert (await client.get("/chat/abc")).status_code == 200
        assert (await client.get("/setup")).status_code == 404
        assert (await client.post("/setup", data={**FORM, "username": "x"})).status_code == 404
    admin = storage.call_sync(users.find_user, username="root.admin")
    assert admin.role == "admin" and admin.display_name == "Ada L."
    assert admin.password_hash.startswith("$argon2id$")
    assert storage.call_sync(users.count_users) == 1


async def test_bad_input_shows_the_form_again_with_the_error(
    storage: Storage, clock: Clock
) -> None:
    async with client_for(_gated(storage, clock)) as client:
        short = await client.post("/setup", data={**FORM, "password": "short"})
        assert short.status_code == 422
        assert "At least 8" in short.text or "at least 8" in short.text
        assert 'value="Root.Admin"' in short.text  # what was typed stays
        bad = await client.post("/setup", data={**FORM, "username": "no spaces"})
        assert bad.status_code == 422 and "letters, digits" in bad.text
        assert 'data-testid="setup-username" aria-invalid="true"' in bad.text
        assert 'data-testid="setup-password" aria-invalid' not in bad.text
        assert storage.call_sync(users.count_users) == 0
        response = await client.post("/setup", json=FORM)
        assert response.json() == {"ok": True, "next": "/"}


async def test_two_setups_at_once_make_one_admin(storage: Storage, clock: Clock) -> None:
    gate = _gated(storage, clock)
    other_gate = _gated(storage, clock)  # another worker: its own "set up yet?" cache
    async with client_for(gate) as first, client_for(other_gate, "10.0.0.9") as second:
        answers = await asyncio.gather(
            first.post("/setup", data={**FORM, "username": "first"}),
            second.post("/setup", data={**FORM, "username": "second"}),
        )
    assert sorted(a.status_code for a in answers) == [303, 404]
    assert storage.call_sync(users.count_users) == 1

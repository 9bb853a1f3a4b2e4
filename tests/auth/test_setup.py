"""The first administrator (agent_chat/auth/routes.py, db/users.py): with no user every page
and `/api/*` lead to `/setup`; the form makes the administrator and signs them in; two at
once make one; afterwards `/setup` is 404."""

from __future__ import annotations

import asyncio
import dataclasses

from agent_chat.auth import COOKIE_NAME
from agent_chat.db import users
from agent_chat.runs.storage import Storage
from tests.support.gate import CONFIG, Clock, client_for, gated

FORM = {"username": "Root.Admin", "display_name": "  Ada   L. ", "password": "long enough pw"}


async def test_without_a_user_everything_leads_to_setup(storage: Storage, clock: Clock) -> None:
    async with client_for(gated(storage, clock)) as client:
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
    async with client_for(gated(storage, clock)) as client:
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
    async with client_for(gated(storage, clock)) as client:
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
    gate = gated(storage, clock)
    other_gate = gated(storage, clock)  # another worker: its own "set up yet?" cache
    async with client_for(gate) as first, client_for(other_gate, "10.0.0.9") as second:
        answers = await asyncio.gather(
            first.post("/setup", data={**FORM, "username": "first"}),
            second.post("/setup", data={**FORM, "username": "second"}),
        )
    assert sorted(a.status_code for a in answers) == [303, 404]
    assert storage.call_sync(users.count_users) == 1


# ---- the setup code, when strangers can reach /setup --------------------------------------

CODE = "ABCD-EFGH-JKMN"


def _with_code(storage: Storage, clock: Clock):
    return gated(storage, clock, dataclasses.replace(CONFIG, setup_code=CODE))


async def test_beyond_loopback_setup_asks_for_the_code_from_the_log(
    storage: Storage, clock: Clock
) -> None:
    async with client_for(_with_code(storage, clock)) as client:
        page = await client.get("/setup")
        assert 'data-testid="setup-code"' in page.text and CODE not in page.text
        missing = await client.post("/setup", data=FORM)
        assert missing.status_code == 403 and "printed in the app&#x27;s log" in missing.text
        assert 'data-testid="setup-code" aria-invalid="true"' in missing.text
        assert 'value="Root.Admin"' in missing.text  # what was typed stays, the code not
        wrong = await client.post("/setup", json={**FORM, "setup_code": "ABCD-EFGH-JKMP"})
        assert wrong.status_code == 403 and "setup code" in wrong.json()["detail"]
        assert storage.call_sync(users.count_users) == 0
        # Case, spaces and dashes aside, the code from the log opens it.
        made = await client.post("/setup", data={**FORM, "setup_code": " abcd efgh-jkmn "})
        assert made.status_code == 303 and COOKIE_NAME in client.cookies
    assert storage.call_sync(users.count_users) == 1


async def test_guessing_the_code_is_limited_per_address(storage: Storage, clock: Clock) -> None:
    gate = _with_code(storage, clock)
    async with client_for(gate, address="10.0.0.66") as guesser:
        for guess in range(10):
            reply = await guesser.post("/setup", json={**FORM, "setup_code": f"WRONG{guess}"})
            assert reply.status_code == 403
        blocked = await guesser.post("/setup", json={**FORM, "setup_code": CODE})
        assert blocked.status_code == 429 and "Too many wrong codes" in blocked.json()["detail"]
        assert int(blocked.headers["retry-after"]) > 0
    # Another address (the operator) is not locked out by the stranger's guesses.
    async with client_for(gate, address="10.0.0.7") as operator:
        made = await operator.post("/setup", json={**FORM, "setup_code": CODE})
        assert made.status_code == 200
    assert storage.call_sync(users.count_users) == 1


def test_the_code_is_asked_beyond_loopback_or_with_a_public_name() -> None:
    from agent_chat.auth.setup_code import matches, required, setup_code

    assert not required(app_host="127.0.0.1", allowed_hosts=None, allowed_origins=None)
    assert not required(app_host="::1", allowed_hosts="", allowed_origins=" ")
    assert required(app_host="0.0.0.0", allowed_hosts=None, allowed_origins=None)
    assert required(app_host="127.0.0.1", allowed_hosts=None, allowed_origins="https://c.example")
    assert required(app_host="127.0.0.1", allowed_hosts="chat.example", allowed_origins=None)
    code = setup_code()
    assert len(code) == 14 and code.count("-") == 2 and matches(code.lower(), code)
    assert not matches("", code) and not matches(code[:-1], code)


def test_the_gate_asks_for_the_code_as_the_settings_say(monkeypatch) -> None:
    from agent_chat.auth.gate import GateConfig
    from agent_chat.auth.setup_code import setup_code
    from agent_chat.config import load_settings

    for name in ("AGENT_CHAT_ALLOWED_HOSTS", "AGENT_CHAT_ALLOWED_ORIGINS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_CHAT_HOST", "127.0.0.1")
    assert GateConfig.from_settings(load_settings()).setup_code is None
    monkeypatch.setenv("AGENT_CHAT_HOST", "0.0.0.0")
    assert GateConfig.from_settings(load_settings()).setup_code == setup_code()

"""Two people on one stack: with a cookie or with an API token, nobody reads, follows,
exports, stops or changes another person's conversation or run: every such request is the
404 of a missing one. A token acts only for its owner, who alone lists and revokes it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from agent_chat.auth import COOKIE_NAME
from agent_chat.db import api_tokens
from agent_chat.db.engine import make_engine, open_session
from agent_chat.db.errors import NotFound
from tests.support.accounts import session_cookie
from tests.support.api import api_client, member_with_token, new_session, start_run, wait_idle
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

BOB, BOB_PASSWORD = "bob-two-users", "bob's long password"
MISSING_SESSION = "00000000-0000-4000-8000-000000000000"


@pytest.fixture(scope="module")
def bob(api_stack: Stack) -> Iterator[tuple[int, str, str]]:
    """A second person on the stack: (id, session cookie, API token)."""
    bob_id, token = member_with_token(api_stack, BOB, BOB_PASSWORD)
    yield bob_id, session_cookie(api_stack.url, BOB, BOB_PASSWORD), token


def _clients(stack: Stack, cookie: str, token: str) -> list[httpx.Client]:
    by_cookie = httpx.Client(base_url=stack.url, cookies={COOKIE_NAME: cookie}, timeout=60)
    return [by_cookie, api_client(stack, token)]


def test_another_persons_conversation_and_run_are_404_by_cookie_and_by_token(
    api_stack: Stack, client: httpx.Client, bob: tuple[int, str, str]
) -> None:
    session_id = new_session(client, title="Alice's secret")
    run = start_run(client, session_id, "long 300 delay=0.02")
    run_id, message_id = run["runId"], run["messageId"]
    try:
        for other in _clients(api_stack, bob[1], bob[2]):
            with other:
                missing = other.get(f"/api/chat/sessions/{MISSING_SESSION}")
                theirs = other.get(f"/api/chat/sessions/{session_id}")
                assert theirs.status_code == missing.status_code == 404
                assert theirs.json()["error"]["message"] == missing.json()["error"][
                    "message"
                ].replace(MISSING_SESSION, session_id)
                for method, path, kw in (
                    ("GET", f"/api/chat/sessions/{session_id}/messages", {}),
                    ("GET", f"/api/chat/sessions/{session_id}/export", {"params": {"format": "json"}}),
                    ("PATCH", f"/api/chat/sessions/{session_id}", {"json": {"title": "mine"}}),
                    ("DELETE", f"/api/chat/sessions/{session_id}", {}),
                    ("POST", f"/api/chat/sessions/{session_id}/runs", {"json": {"message": "hi"}}),
                    ("POST", f"/api/chat/sessions/{session_id}/reset", {"json": {}}),
                    ("GET", f"/api/chat/runs/{run_id}/stream", {}),
                    ("GET", f"/api/chat/runs/{run_id}/state", {}),
                    ("POST", f"/api/chat/runs/{run_id}/stop", {}),
                    ("POST", f"/api/chat/runs/{run_id}/resume", {"json": {"clarifyId": "c", "answer": "x"}}),
                    ("GET", f"/api/chat/messages/{message_id}/versions", {}),
                    ("POST", f"/api/chat/messages/{message_id}/regenerate", {}),
                    ("POST", f"/api/chat/messages/{message_id}/activate", {}),
                ):  # fmt: skip
                    assert other.request(method, path, **kw).status_code == 404, (method, path)
                listed = other.get("/api/chat/sessions").json()["sessions"]
                assert session_id not in {s["sessionId"] for s in listed}
                found = other.get("/api/chat/search", params={"q": "secret"}).json()["results"]
                assert found == []
        # The run went on: its owner still sees it, and stops it.
        state = client.get(f"/api/chat/runs/{run_id}/state")
        assert state.status_code == 200 and state.json()["status"] == "running"
        assert client.get(f"/api/chat/sessions/{session_id}").json()["session"]["title"] == (
            "Alice's secret"
        )
    finally:
        client.post(f"/api/chat/runs/{run_id}/stop")
        wait_idle(client, session_id)


def test_a_token_acts_for_its_owner_and_only_they_revoke_it(
    api_stack: Stack, client: httpx.Client, api_token: str, bob: tuple[int, str, str]
) -> None:
    bob_id, _, bob_token = bob
    with api_client(api_stack, bob_token) as as_bob:
        mine = new_session(as_bob, title="Bob's own")
        assert as_bob.get(f"/api/chat/sessions/{mine}").status_code == 200
    assert client.get(f"/api/chat/sessions/{mine}").status_code == 404  # not the admin's
    engine = make_engine(api_stack.db_url)
    try:
        with open_session(engine) as session:
            admin_id = api_tokens.verify_token(session=session, token=api_token)
            assert admin_id is not None and admin_id != bob_id
            admins = api_tokens.list_tokens(session=session, user_id=admin_id)
            assert {t.user_id for t in admins} == {admin_id}
            assert all(t.name != "bob" for t in admins)
            with pytest.raises(NotFound):
                api_tokens.revoke_token(session=session, user_id=bob_id, token_id=admins[0].id)
        with open_session(engine) as session:
            assert api_tokens.verify_token(session=session, token=api_token) == admin_id
    finally:
        engine.dispose()
    assert client.get("/api/chat/sessions").status_code == 200  # still works

"""The page and the HTTP API are one app: a run started over HTTP shows live in an open
tab, a question asked in the tab is answered over HTTP (the tab closes its card), and the
API token settings page makes a token (shown once) that opens the API, and revokes it."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import Page, expect

from agent_chat.db import api_tokens
from agent_chat.db.engine import make_engine, open_session
from tests.support.api import new_session, read_stream, start_run, wait_state
from tests.support.browser import send
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e


def test_a_run_started_over_http_shows_live_in_an_open_tab(chat: Page, stack: Stack) -> None:
    page = chat
    with httpx.Client(base_url=stack.url, headers=stack.auth_headers, timeout=60) as client:
        # A conversation made over HTTP, open in the tab.
        session_id = new_session(client)
        page.goto(f"{stack.url}/chat/{session_id}")
        expect(page.get_by_test_id("composer-input")).to_be_editable()
        run = start_run(client, session_id, "long 150 delay=0.04")
        assistant = page.get_by_test_id("message-assistant")
        # Live while it streams: the spinner in the sidebar, the stop button, growing text.
        expect(page.get_by_test_id("session-running")).to_be_visible()
        expect(page.get_by_test_id("stop-button")).to_be_visible()
        expect(assistant.get_by_test_id("message-content")).to_contain_text("word20")
        expect(page.get_by_test_id("message-user")).to_have_text("long 150 delay=0.04")
        done = read_stream(client, run["runId"])
        assert done.last().type == "run_completed"
        expect(assistant.get_by_test_id("message-content")).to_contain_text("word150")
        expect(page.get_by_test_id("stop-button")).to_have_count(0)

        send(page, "Please ask me a question")
        expect(page.get_by_test_id("askfor-panel")).to_be_visible()
        asked = client.get(f"/api/chat/sessions/{session_id}").json()["messages"][-1]
        state = wait_state(client, asked["runId"], "waiting_input")
        answered = client.post(
            f"/api/chat/runs/{asked['runId']}/resume",
            json={"clarifyId": state["pending"]["clarifyId"], "answer": "blue"},
        )
        assert answered.status_code == 202
        expect(page.get_by_test_id("askfor-panel")).to_have_count(0)
        expect(assistant.nth(1).get_by_test_id("message-content")).to_have_text("You chose blue.")


def test_api_tokens_page_makes_shows_once_and_revokes(page: Page, stack: Stack) -> None:
    page.goto(f"{stack.url}/settings/models")
    page.get_by_test_id("tokens-link").click()
    expect(page).to_have_url(re.compile(r"/settings/tokens$"))
    expect(page.get_by_test_id("token-name-input")).to_be_enabled()
    page.get_by_test_id("token-name-input").fill("CI job")
    page.get_by_test_id("token-create").click()
    token = page.get_by_test_id("new-token").inner_text()
    assert token.startswith("acht_")
    card = page.get_by_test_id("token-card")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("CI job")
    expect(card).to_contain_text(token[:12])
    expect(card).not_to_contain_text(token)  # the list shows a prefix, never the token

    # This stack has no password; the token is what the database knows (Bearer on a
    # password-protected app: tests/cli).
    assert _valid(stack, token)
    page.reload()
    expect(page.get_by_test_id("token-card")).to_have_count(1)
    expect(page.get_by_test_id("new-token")).to_have_count(0)  # shown once
    page.get_by_test_id("token-revoke").click()
    expect(page.get_by_test_id("token-card")).to_have_count(0)
    assert not _valid(stack, token)


def _valid(stack: Stack, token: str) -> bool:
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            return api_tokens.verify_token(session=session, token=token)
    finally:
        engine.dispose()

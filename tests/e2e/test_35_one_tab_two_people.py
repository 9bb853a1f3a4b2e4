"""One browser tab, two people: what the first left in the tab's states (a
search and its results, an open conversation) is not there for the second,
whether the first signed out with "Log out" or their session ended elsewhere (revoked, as
"Log out everywhere" on another device does) and the next person simply signed in in that
tab."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.accounts import ensure_member, session_cookie
from tests.support.browser import new_chat, send
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e

MEMBER, MEMBER_PASSWORD = "carol", "carol's own long password"
WORDS = "quokka expedition budget"


def _token(page: Page) -> str:
    return page.evaluate("() => window.sessionStorage.getItem('token')") or ""


def _own_session(page: Page, stack: Stack) -> str:
    """A session of the administrator's own in this tab: ending it ends none of the stack's
    other tests' (the kept page's cookie is the stack's)."""
    own = session_cookie(stack.url)
    page.context.clear_cookies()
    page.context.add_cookies([{"name": "agent_chat_session", "value": own, "url": stack.url}])
    page.goto(f"{stack.url}/chat")
    return own


def _leave_traces(page: Page, stack: Stack) -> str:
    """The administrator's conversation, and a search with a result."""
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, WORDS)
    expect(page.get_by_test_id("message-assistant").last).to_contain_text(f"Echo: {WORDS}")
    page.get_by_test_id("session-search").fill("quokka")
    expect(page.get_by_test_id("search-result").first).to_be_visible()
    return _token(page)


def _sign_in(page: Page, username: str, password: str) -> None:
    page.get_by_test_id("login-username").fill(username)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()


def _nothing_of_the_first(page: Page, stack: Stack, old_token: str) -> None:
    expect(page.get_by_test_id("new-session")).to_be_visible()
    expect(page.get_by_test_id("account-menu")).to_contain_text("Carol")
    expect(page.get_by_test_id("session-search")).to_have_value("")
    expect(page.get_by_test_id("search-result")).to_have_count(0)
    expect(page.get_by_text("quokka")).to_have_count(0)
    assert _token(page) not in ("", old_token)  # new states on the server


def test_log_out_then_another_person_in_the_same_tab(page: Page, stack: Stack) -> None:
    ensure_member(stack.db_url, MEMBER, MEMBER_PASSWORD)
    _own_session(page, stack)
    old = _leave_traces(page, stack)
    page.get_by_test_id("account-menu").click()
    page.get_by_test_id("logout").click()
    expect(page).to_have_url(f"{stack.url}/login")
    _sign_in(page, MEMBER, MEMBER_PASSWORD)
    _nothing_of_the_first(page, stack, old)


def test_a_session_ended_elsewhere_then_another_person(page: Page, stack: Stack) -> None:
    ensure_member(stack.db_url, MEMBER, MEMBER_PASSWORD)
    own = _own_session(page, stack)
    old = _leave_traces(page, stack)
    # The session ends elsewhere (revoked, as "Log out everywhere" on another device does
    # to all of them; only this one here: the stack's other tests keep theirs).
    ended = httpx.post(
        f"{stack.url}/api/logout",
        cookies={"agent_chat_session": own},
        headers={"Accept": "application/json"},
    )
    assert ended.status_code == 200, ended.text
    page.goto(f"{stack.url}/")
    expect(page).to_have_url(f"{stack.url}/login")
    _sign_in(page, MEMBER, MEMBER_PASSWORD)
    _nothing_of_the_first(page, stack, old)

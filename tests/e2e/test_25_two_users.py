"""Two people, two browser contexts on one app: each sees only their own conversations in
the sidebar and in search; opening the other's `/chat/<uuid>` shows "not found" and the
other's export URL answers 404."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from agent_chat import routes
from agent_chat.auth import COOKIE_NAME
from tests.support.accounts import ensure_member, session_cookie
from tests.support.browser import fresh_page, new_chat, send, session_uuid_of
from tests.support.stack import ARTIFACTS, Stack, ensure_fake_model

pytestmark = pytest.mark.e2e

BOB, BOB_PASSWORD = "bob", "bob's own long password"


@pytest.fixture(scope="module")
def bob_cookie(stack: Stack) -> str:
    ensure_member(stack.db_url, BOB, BOB_PASSWORD)
    return session_cookie(stack.url, BOB, BOB_PASSWORD)


@pytest.fixture
def bob_page(browser: Browser, stack: Stack, bob_cookie: str, request) -> Iterator[Page]:
    with fresh_page(browser, request) as page:
        page.context.add_cookies(
            [{"name": COOKIE_NAME, "value": bob_cookie, "url": stack.url, "httpOnly": True}]
        )
        yield page


def _ask(page: Page, stack: Stack, text: str) -> str:
    new_chat(page, stack)
    send(page, text)
    expect(page.get_by_test_id("message-assistant").last).to_contain_text(f"Echo: {text}")
    return session_uuid_of(page)


def _search(page: Page, words: str):
    box = page.get_by_test_id("session-search")
    box.fill(words)
    return page.get_by_test_id("search-result")


def test_two_people_never_see_each_others_conversations(
    page: Page, bob_page: Page, stack: Stack, bob_cookie: str
) -> None:
    ensure_fake_model(page, stack)
    alice_chat = _ask(page, stack, "alpaca pasture plans")
    bob_chat = _ask(bob_page, stack, "bobcat hiking plans")
    # The sidebars: each their own.
    for mine, own, other in ((page, alice_chat, bob_chat), (bob_page, bob_chat, alice_chat)):
        mine.reload()
        expect(mine.locator(f'[data-testid=session-item][data-session-id="{own}"]')).to_be_visible()
        expect(mine.get_by_test_id("session-item")).to_have_count(1)
        expect(mine.locator(f'[data-session-id="{other}"]')).to_have_count(0)
    # Search: the other's words find nothing, one's own are found.
    expect(_search(bob_page, "alpaca")).to_have_count(0)
    expect(bob_page.get_by_test_id("search-empty")).to_be_visible()
    expect(_search(page, "alpaca")).to_have_count(1)
    expect(_search(page, "bobcat")).to_have_count(0)
    # Opening the other's conversation: "not found", nothing of it shown.
    bob_page.goto(stack.url + routes.chat_url(alice_chat))
    expect(bob_page.get_by_test_id("not-found")).to_be_visible()
    expect(bob_page.get_by_text("alpaca pasture plans")).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    bob_page.screenshot(path=str(ARTIFACTS / "two-users-not-found.png"))
    page.goto(stack.url + routes.chat_url(bob_chat))
    expect(page.get_by_test_id("not-found")).to_be_visible()
    # The export URL: 404 for the other, the file for the owner.
    export = stack.url + routes.export_url(alice_chat, "md")
    as_bob = httpx.get(export, cookies={COOKIE_NAME: bob_cookie}, timeout=30)
    assert as_bob.status_code == 404
    as_alice = httpx.get(export, headers=stack.auth_headers, timeout=30)
    assert as_alice.status_code == 200 and "alpaca pasture plans" in as_alice.text

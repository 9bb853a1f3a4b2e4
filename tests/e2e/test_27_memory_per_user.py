"""hermes' memory per person in a real browser: two people, two browser
contexts. A writes USER.md through the memory drawer; B's drawer does not show it, B's agent
does not get it in its prompt, B's own edit stays B's, and A's reload still shows A's."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from agent_chat.auth import COOKIE_NAME
from tests.support.accounts import ensure_member, session_cookie, user_id_of
from tests.support.browser import fresh_page, new_chat, send
from tests.support.stack import ARTIFACTS, Stack, ensure_fake_model

pytestmark = pytest.mark.e2e

B_NAME, B_PASSWORD = "bea", "bea-has-a-long-password"
A_FACT = "My name is Ada. I review pull requests on Fridays."
B_FACT = "My name is Bea. I prefer answers in French."


def _signed_in_as(page: Page, stack: Stack, username: str, password: str) -> None:
    cookie = session_cookie(stack.url, username, password)
    page.context.clear_cookies()
    page.context.add_cookies(
        [{"name": COOKIE_NAME, "value": cookie, "url": stack.url, "httpOnly": True}]
    )


def _answered_chat(page: Page, stack: Stack, text: str) -> None:
    new_chat(page, stack)
    send(page, text)
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=30_000
    )


def _long_term(page: Page):
    page.get_by_test_id("memory-button").click()
    drawer = page.get_by_test_id("memory-drawer")
    expect(drawer).to_be_visible()
    drawer.get_by_role("tab", name="Long-term").click()
    long_term = drawer.get_by_test_id("memory-long-term")
    expect(long_term.get_by_test_id("memory-text-user")).to_be_editable()
    return long_term


def _save_user_md(page: Page, text: str) -> None:
    long_term = _long_term(page)
    long_term.get_by_test_id("memory-text-user").fill(text)
    long_term.get_by_test_id("memory-save").click()
    expect(long_term.get_by_test_id("memory-save-message")).to_contain_text("Saved")
    page.get_by_test_id("memory-close").click()


def _bridge_user_md(stack: Stack, user_id: int) -> str:
    reply = httpx.get(f"{stack.bridge_url}/memory", params={"user": user_id}, timeout=10)
    reply.raise_for_status()
    return reply.json()["user"]


def _system_text(request: dict) -> str:
    return " ".join(str(m["content"]) for m in request["messages"] if m["role"] == "system")


def test_each_person_sees_and_edits_only_their_own_memory(
    page: Page, stack: Stack, browser, request: pytest.FixtureRequest
) -> None:
    a_id = user_id_of(stack.db_url)
    b_id = ensure_member(stack.db_url, B_NAME, B_PASSWORD)
    ensure_fake_model(page, stack)

    # A (the administrator) writes USER.md through the drawer.
    _answered_chat(page, stack, "hello from Ada")
    _save_user_md(page, A_FACT)
    assert _bridge_user_md(stack, a_id) == A_FACT

    with fresh_page(browser, request) as b_page:
        _signed_in_as(b_page, stack, B_NAME, B_PASSWORD)
        stack.fake.reset()
        _answered_chat(b_page, stack, "hello from Bea")
        # B's agent was built from B's memory: A's USER.md is not in its prompt.
        prompts = [_system_text(r) for r in stack.fake.requests()]
        assert prompts and all(A_FACT not in p for p in prompts)
        long_term = _long_term(b_page)
        expect(long_term.get_by_test_id("memory-text-user")).to_have_value("")
        expect(long_term.get_by_test_id("memory-text-memory")).to_have_value("")
        ARTIFACTS.mkdir(exist_ok=True)
        b_page.screenshot(path=str(ARTIFACTS / "memory-per-user-b.png"))
        b_page.set_viewport_size({"width": 390, "height": 844})
        b_page.screenshot(path=str(ARTIFACTS / "memory-per-user-b-phone.png"))
        b_page.set_viewport_size({"width": 1280, "height": 800})
        b_page.get_by_test_id("memory-close").click()
        # B's own note stays B's.
        _save_user_md(b_page, B_FACT)
        b_page.reload()
        expect(_long_term(b_page).get_by_test_id("memory-text-user")).to_have_value(B_FACT)

    assert _bridge_user_md(stack, a_id) == A_FACT
    assert _bridge_user_md(stack, b_id) == B_FACT
    # A's reload still shows A's memory, never B's.
    page.reload()
    expect(_long_term(page).get_by_test_id("memory-text-user")).to_have_value(A_FACT)
    # And A's next agent has it in its prompt.
    page.get_by_test_id("memory-close").click()
    stack.fake.reset()
    _answered_chat(page, stack, "hello again from Ada")
    prompts = [_system_text(r) for r in stack.fake.requests()]
    assert any(A_FACT in p for p in prompts) and all(B_FACT not in p for p in prompts)


def test_a_tab_signed_in_as_someone_else_never_shows_the_last_persons_memory(
    browser, stack: Stack, request: pytest.FixtureRequest
) -> None:
    # A tab keeps its state across a sign-out and a sign-in (the same tab, the same Reflex
    # client token): Cy's texts and unsaved edit must not reach Bea, shown or saved.
    cy_id = ensure_member(stack.db_url, "cy", "cy-has-a-long-password")
    b_id = ensure_member(stack.db_url, B_NAME, B_PASSWORD)
    for user_id, text in ((cy_id, "Cy's saved note."), (b_id, B_FACT)):
        httpx.put(
            f"{stack.bridge_url}/memory", params={"user": user_id}, json={"user": text}
        ).raise_for_status()
    with fresh_page(browser, request) as tab:
        _signed_in_as(tab, stack, "cy", "cy-has-a-long-password")
        ensure_fake_model(tab, stack)
        _answered_chat(tab, stack, "hello from Cy")
        long_term = _long_term(tab)
        box = long_term.get_by_test_id("memory-text-user")
        expect(box).to_have_value("Cy's saved note.")
        box.fill("Cy's unsaved secret edit.")
        tab.get_by_test_id("memory-close").click()
        expect(tab.get_by_test_id("signed-in-as")).not_to_have_text("")
        tab.get_by_test_id("account-menu").click()
        tab.get_by_test_id("logout").click()
        expect(tab).to_have_url(f"{stack.url}/login")
        tab.get_by_test_id("login-username").fill(B_NAME)
        tab.get_by_test_id("login-password").fill(B_PASSWORD)
        tab.get_by_test_id("login-submit").click()
        expect(tab.get_by_test_id("signed-in-as")).to_contain_text("Bea")
        tab.goto(f"{stack.url}/")  # the latest conversation
        box = _long_term(tab).get_by_test_id("memory-text-user")
        expect(box).to_have_value(B_FACT)
        expect(tab.get_by_test_id("memory-save-message")).to_have_count(0)
    assert _bridge_user_md(stack, cy_id) == "Cy's saved note."
    assert _bridge_user_md(stack, b_id) == B_FACT

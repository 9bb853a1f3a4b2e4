"""Several conversations at once: switching never interrupts a run, two tabs follow one run,
finished runs you did not watch show as unread."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import new_chat, open_stored_chat, send
from tests.support.stack import Stack, ensure_fake_model

# Several runs and tabs write at once: also on SQLite in ./test.sh (see every_database).
pytestmark = [pytest.mark.e2e, pytest.mark.every_database]


def item(page: Page, url: str):
    session_uuid = url.rsplit("/", 1)[-1]
    return page.locator(f'[data-testid="session-item"][data-session-id="{session_uuid}"]')


def words(page: Page) -> list[str]:
    return re.findall(r"word\d+", page.get_by_test_id("message-assistant").last.inner_text())


def test_switching_away_keeps_the_run_going_and_back_shows_everything(
    page: Page, stack: Stack
) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "long 120 delay=0.1")  # 12 s: still running after the second answer
    expect(page.get_by_test_id("message-content").last).to_contain_text("word10")
    first_url = page.url

    new_chat(page, stack)
    send(page, "A second conversation meanwhile")
    expect(page.get_by_test_id("message-assistant")).to_contain_text("Echo: A second conversation")
    # The first one still runs in the sidebar, while this one is on screen.
    expect(item(page, first_url).get_by_test_id("session-running")).to_be_visible()

    item(page, first_url).get_by_test_id("session-title").click()
    expect(page).to_have_url(first_url)
    # During the client-side switch the other conversation's messages are briefly on screen.
    expect(page.get_by_test_id("message-user")).to_have_text("long 120 delay=0.1")
    answer = page.get_by_test_id("message-assistant").filter(has_text="word1 ")
    expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=40_000)
    assert words(page) == [f"word{i}" for i in range(1, 121)]


def test_a_run_finished_out_of_sight_is_unread_until_opened(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "long 60 delay=0.1")  # 6 s: still running when the switch is done
    expect(page.get_by_test_id("message-content").last).to_contain_text("word3")
    first_url = page.url
    new_chat(page, stack)
    second_url = page.url
    unread = item(page, first_url).get_by_test_id("session-unread")
    expect(unread).to_be_visible(timeout=20_000)
    expect(item(page, second_url).get_by_test_id("session-unread")).to_have_count(0)
    item(page, first_url).get_by_test_id("session-title").click()
    expect(page).to_have_url(first_url)
    expect(unread).to_have_count(0)
    page.reload()
    expect(item(page, first_url)).to_be_visible()
    expect(unread).to_have_count(0)


def test_two_tabs_on_one_conversation_both_follow_it_live(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    open_stored_chat(page, stack)  # the second tab opens the same (stored) conversation
    second_context = page.context.browser.new_context()
    stack.sign_in(second_context)
    second = second_context.new_page()
    try:
        second.goto(page.url)
        expect(second.get_by_test_id("composer-input")).to_be_editable()
        send(page, "long 80 delay=0.04")
        # The other tab shows the run without reloading: live status, then the words.
        expect(second.get_by_test_id("message-content").last).to_contain_text("word20")
        expect(second.get_by_test_id("stop-button")).to_be_visible()
        # A message sent from the second tab while it runs waits in the queue, then goes.
        box = second.get_by_test_id("composer-input")
        box.fill("Me too")
        box.press("Enter")
        expect(second.get_by_test_id("queued-message")).to_contain_text("Me too")
        first_answer = second.get_by_test_id("message-assistant").first
        expect(first_answer).to_have_attribute("data-status", "SUCCESS")
        assert re.findall(r"word\d+", first_answer.inner_text()) == [
            f"word{i}" for i in range(1, 81)
        ]
        for tab in (page, second):
            expect(tab.get_by_test_id("message-user")).to_have_count(2, timeout=30_000)
            expect(tab.get_by_test_id("message-assistant").last).to_have_attribute(
                "data-status", "SUCCESS"
            )
            expect(tab.get_by_test_id("message-assistant").last).to_contain_text("Echo: Me too")
        expect(second.get_by_test_id("queued-message")).to_have_count(0)
    finally:
        second.context.close()

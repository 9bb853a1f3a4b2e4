"""Queue and steer in the page: while an answer streams, Enter (or Queue) queues the next
message, shown as queued across a reload and sent when the answer ends; Steer sends guidance
the working agent reads with its next tool result."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import send
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e


def test_a_message_queued_during_a_run_survives_a_reload_and_goes_after_it(
    chat: Page, stack: Stack
) -> None:
    page = chat
    send(page, "long 120 delay=0.05")
    expect(page.get_by_test_id("queue-button")).to_be_visible()
    box = page.get_by_test_id("composer-input")
    box.fill("and after that, this")
    page.get_by_test_id("queue-button").click()
    queued = page.get_by_test_id("queued-message")
    expect(queued).to_have_count(1)
    expect(queued).to_contain_text("and after that, this")
    expect(box).to_have_value("")
    page.reload()
    expect(page.get_by_test_id("queued-message")).to_contain_text("and after that, this")
    users = page.get_by_test_id("message-user")
    expect(users).to_have_count(2, timeout=60_000)
    expect(users.last).to_have_text("and after that, this")
    expect(page.get_by_test_id("queued-message")).to_have_count(0)
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )


def test_a_queued_message_can_be_cancelled_or_taken_back_to_edit(chat: Page, stack: Stack) -> None:
    page = chat
    send(page, "long 200 delay=0.05")
    box = page.get_by_test_id("composer-input")
    for text in ("first queued", "second queued"):
        box.fill(text)
        box.press("Enter")  # Enter queues while the answer streams
        expect(page.get_by_test_id("queued-message").filter(has_text=text)).to_have_count(1)
    page.get_by_test_id("queued-message").filter(has_text="first queued").get_by_test_id(
        "queued-cancel"
    ).click()
    page.get_by_test_id("queued-message").filter(has_text="second queued").get_by_test_id(
        "queued-edit"
    ).click()
    expect(page.get_by_test_id("queued-message")).to_have_count(0)
    expect(box).to_have_value("second queued")
    page.get_by_test_id("stop-button").click()


def test_steer_reaches_the_working_agent(chat: Page, stack: Stack) -> None:
    page = chat
    send(page, "ask me")
    expect(page.get_by_test_id("askfor-panel")).to_be_visible(timeout=60_000)
    page.get_by_test_id("composer-input").fill("Prefer warm colours.")
    page.get_by_test_id("steer-button").click()
    entry = page.get_by_test_id("steer-entry")
    expect(entry).to_contain_text("Prefer warm colours.")
    expect(entry).to_have_attribute("data-state", "sent")
    page.get_by_test_id("askfor-choice").first.click()
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")
    tool = [m for m in stack.fake.requests()[-1]["messages"] if m["role"] == "tool"][-1]
    assert "Prefer warm colours." in tool["content"]

"""Runs outlive the web app and the browser tab; a lost bridge is said plainly."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import new_chat, send
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e


def test_question_survives_a_web_app_restart_and_the_answer_completes_the_run(
    page: Page, stack: Stack
) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "ask me before the restart")
    expect(page.get_by_test_id("askfor-panel")).to_be_visible()
    chat_url = page.url

    stack.stop_app()
    stack.start_app()

    page.goto(chat_url)
    expect(page.get_by_test_id("askfor-question")).to_have_text("Which color do you prefer?")
    expect(page.get_by_test_id("session-waiting")).to_be_visible()
    page.get_by_test_id("askfor-choice").filter(has_text="red").click()
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    expect(assistant.get_by_test_id("message-content")).to_have_text("You chose red.")


def test_bridge_restart_during_a_question_fails_the_message_with_the_reason(
    page: Page, stack: Stack
) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "ask me before the bridge dies")
    expect(page.get_by_test_id("askfor-panel")).to_be_visible()

    stack.stop_bridge()
    try:
        expect(page.get_by_test_id("reconnect-badge")).to_be_visible()
    finally:
        stack.start_bridge()

    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "FAILED", timeout=40_000)
    expect(assistant.get_by_test_id("message-error")).to_contain_text("agent service was restarted")
    expect(page.get_by_test_id("askfor-panel")).to_have_count(0)
    expect(page.get_by_test_id("session-waiting")).to_have_count(0)
    # The conversation can be used again. The failed answer reaches the agent as a note, so
    # the new question stays its own turn (it is not merged with the unanswered one).
    send(page, "Still there?")
    second = page.get_by_test_id("message-assistant").nth(1)
    # The restarted bridge builds its first agent from cold (beside its own warm-up turn).
    expect(second).to_have_attribute("data-status", "SUCCESS", timeout=40_000)
    expect(second.get_by_test_id("message-content")).to_have_text("Echo: Still there?")
    turns = [m for m in stack.fake.requests()[-1]["messages"] if m["role"] != "system"]
    assert turns[-1] == {"role": "user", "content": "Still there?"}
    assert (
        turns[-2]["role"] == "assistant" and "agent service was restarted" in turns[-2]["content"]
    )

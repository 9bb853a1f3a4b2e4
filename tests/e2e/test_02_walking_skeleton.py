"""The first slice end to end in a real browser: add a model, chat, follow up, reload,
rename, delete, and the error paths a person meets first.

The first test adds the model through the settings page (and needs an app without one: the
file starts with an empty app); the later ones add it straight when they run alone."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import new_chat, send
from tests.support.stack import ARTIFACTS, Stack, ensure_fake_model

pytestmark = pytest.mark.e2e


def add_fake_model(page: Page, stack: Stack) -> None:
    page.goto(f"{stack.url}/settings/models")
    page.get_by_test_id("model-name").fill("Fake model")
    page.get_by_test_id("model-base-url").fill(stack.fake.base_url)
    page.get_by_test_id("model-id").fill("fake-model")
    page.get_by_test_id("model-test").click()
    expect(page.get_by_test_id("model-test-result")).to_contain_text("Connected")
    page.get_by_test_id("model-save").click()
    expect(page.get_by_test_id("model-card")).to_have_count(1)
    expect(page.get_by_test_id("model-default-badge")).to_have_count(1)


def test_chat_streams_answers_keeps_context_and_survives_reload(page: Page, stack: Stack) -> None:
    add_fake_model(page, stack)
    page.goto(stack.url)
    expect(page.get_by_test_id("no-model-notice")).to_have_count(0)

    send(page, "Please write a long answer long 120")
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f-]{36}$"))
    expect(page.get_by_test_id("message-user")).to_contain_text("Please write a long answer")
    assistant = page.get_by_test_id("message-assistant")
    # Mid-stream: some words are on screen, the run is live, stop is offered.
    expect(assistant.get_by_test_id("message-content")).to_contain_text("word10")
    expect(page.get_by_test_id("stop-button")).to_be_visible()
    expect(page.get_by_test_id("session-running")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "mid-stream.png"))
    expect(assistant).to_have_attribute("data-status", "SUCCESS", timeout=30_000)
    expect(assistant.get_by_test_id("message-content")).to_contain_text("word120")
    expect(page.get_by_test_id("stop-button")).to_have_count(0)
    expect(page.get_by_test_id("session-running")).to_have_count(0)

    # The follow-up can only be answered with the first turn in the history.
    send(page, "Do you recall what I asked?")
    expect(page.get_by_test_id("message-assistant")).to_have_count(2)
    second = page.get_by_test_id("message-assistant").nth(1)
    expect(second).to_have_attribute("data-status", "SUCCESS", timeout=30_000)
    expect(second).to_contain_text("Earlier you said: Please write a long answer long 120")

    page.reload()
    expect(page.get_by_test_id("message-user")).to_have_count(2)
    expect(page.get_by_test_id("message-assistant")).to_have_count(2)
    expect(page.get_by_test_id("message-assistant").nth(1)).to_contain_text("Earlier you said")

    # The title is the first 30 characters of the first message.
    item = page.get_by_test_id("session-item")
    expect(item).to_have_count(1)
    expect(item.get_by_test_id("session-title")).to_have_text("Please write a long answer lon")

    # Rename through the menu.
    item.get_by_role("button", name="Conversation actions").click()
    page.get_by_test_id("session-rename").click()
    rename = page.get_by_test_id("session-rename-input")
    rename.fill("Long answers")
    rename.press("Enter")
    expect(page.get_by_test_id("session-title")).to_have_text("Long answers")
    page.reload()
    expect(page.get_by_test_id("session-title")).to_have_text("Long answers")

    # Delete it: the list is empty and the page goes back to the start screen.
    page.get_by_test_id("session-item").get_by_role("button", name="Conversation actions").click()
    page.get_by_test_id("session-delete").click()
    expect(page.get_by_test_id("session-item")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"/chat$"))  # no conversation left: a new one


def test_new_session_button_and_switching_between_sessions(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "First conversation")
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")
    first_url = page.url
    page.get_by_test_id("new-session").click()
    expect(page).not_to_have_url(first_url)
    expect(page.get_by_test_id("message-user")).to_have_count(0)
    send(page, "Second conversation")
    expect(page.get_by_test_id("message-assistant")).to_contain_text("Echo: Second conversation")
    # Most recent first; clicking the older one shows its own messages.
    titles = page.get_by_test_id("session-title")
    expect(titles.first).to_have_text("Second conversation")
    titles.nth(1).click()
    expect(page).to_have_url(first_url)
    expect(page.get_by_test_id("message-user")).to_have_text("First conversation")


def test_empty_message_is_not_sent_and_says_why(page: Page, stack: Stack) -> None:
    new_chat(page, stack)
    box = page.get_by_test_id("composer-input")
    box.fill("   ")
    box.press("Enter")
    expect(page.get_by_test_id("composer-error")).to_contain_text("empty message")
    expect(page.get_by_test_id("message-user")).to_have_count(0)


def test_unknown_session_id_shows_not_found(page: Page, stack: Stack) -> None:
    page.goto(f"{stack.url}/chat/does-not-exist")
    expect(page.get_by_test_id("not-found")).to_be_visible()


def test_bridge_down_shows_banner_and_a_failed_answer(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    stack.stop_bridge()
    try:
        new_chat(page, stack)
        expect(page.get_by_test_id("error-banner")).to_contain_text("not reachable")
        send(page, "Anyone there?")
        assistant = page.get_by_test_id("message-assistant")
        expect(assistant).to_have_attribute("data-status", "FAILED")
        expect(assistant.get_by_test_id("message-error")).to_contain_text("not reachable")
        expect(page.get_by_test_id("message-user")).to_have_text("Anyone there?")
    finally:
        stack.start_bridge()
    # No reload: the banner clears by itself once the bridge answers, and the next message
    # is answered.
    expect(page.get_by_test_id("error-banner")).to_have_count(0, timeout=30_000)
    send(page, "Back again?")
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )


def test_models_can_be_edited_made_default_and_deleted(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)  # "Fake model", as the first test adds it
    page.goto(f"{stack.url}/settings/models")
    page.get_by_test_id("model-name").fill("Second")
    page.get_by_test_id("model-base-url").fill(stack.fake.base_url)
    page.get_by_test_id("model-id").fill("fake-model")
    page.get_by_test_id("model-api-key").fill("sk-secret-second")
    page.get_by_test_id("model-save").click()
    cards = page.get_by_test_id("model-card")
    expect(cards).to_have_count(2)
    # The bridge is a process of its own here: no one-service hosting note (test_29).
    expect(page.get_by_test_id("hosting-note")).to_have_count(0)
    second = cards.filter(has_text="Second")
    badge = "model-default-badge"
    expect(second.get_by_test_id(badge)).to_have_count(0)

    second.get_by_role("button", name="Make default").click()
    expect(cards.filter(has_text="Second").get_by_test_id(badge)).to_have_count(1)
    expect(cards.filter(has_text="Fake model").get_by_test_id(badge)).to_have_count(0)

    # Edit: the stored key is not shown; an empty key field keeps it.
    cards.filter(has_text="Second").get_by_role("button", name="Edit").click()
    expect(page.get_by_test_id("model-api-key")).to_have_value("")
    expect(page.get_by_test_id("model-name")).to_have_value("Second")
    page.get_by_test_id("model-name").fill("Second renamed")
    page.get_by_test_id("model-save").click()
    expect(cards.filter(has_text="Second renamed")).to_have_count(1)
    assert "sk-secret-second" not in page.content()

    # Deleting the default makes the remaining model the default.
    cards.filter(has_text="Second renamed").get_by_role("button", name="Delete").click()
    expect(cards).to_have_count(1)
    expect(cards.first.get_by_test_id(badge)).to_have_count(1)


def test_chosen_skill_reaches_the_agent_as_system_prompt(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    page.get_by_test_id("skill-select").click()
    page.get_by_role("option", name="Haiku writer").click()
    stack.fake.reset()
    send(page, "Tell me about autumn")
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")
    systems = [
        m.get("content")
        for body in stack.fake.requests()
        for m in body.get("messages", [])
        if m.get("role") == "system"
    ]
    assert any("Answer every question as a haiku." in str(s) for s in systems)
    page.reload()
    expect(page.get_by_test_id("skill-select")).to_contain_text("Haiku writer")

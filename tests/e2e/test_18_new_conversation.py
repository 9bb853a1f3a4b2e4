"""A conversation starts with its first message: "New conversation" opens an
empty composer at `/chat` and stores nothing; the first message creates the row and moves the
page to the conversation's URL without remounting it, so text typed meanwhile is kept, also
when the web app is slow to answer (its process paused)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import select

from tests.support.browser import CHAT_URL, NEW_CHAT_URL, new_chat, send
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e


def stored_titles(stack: Stack) -> list[str]:
    from agent_chat.db.engine import make_engine, open_session
    from agent_chat.db.models import ChatSession

    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            return [c.title for c in session.exec(select(ChatSession)).all()]
    finally:
        engine.dispose()


@contextlib.contextmanager
def paused(stack: Stack) -> Iterator[None]:
    """The web app's process stopped (SIGSTOP): a backend that answers late."""
    assert stack.app is not None
    os.kill(stack.app.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(stack.app.pid, signal.SIGCONT)


def test_a_refused_first_message_keeps_the_page_new_and_the_text(page: Page, stack: Stack) -> None:
    # No model at all: the first message cannot be answered and nothing is stored.
    page.goto(f"{stack.url}/chat")
    expect(page.get_by_test_id("no-model-notice")).to_be_visible()
    send(page, "Is anyone configured?")
    expect(page.get_by_test_id("composer-error")).to_contain_text("No model")
    expect(page).to_have_url(NEW_CHAT_URL)
    expect(page.get_by_test_id("composer-input")).to_have_value("Is anyone configured?")
    expect(page.get_by_test_id("session-item")).to_have_count(0)
    assert stored_titles(stack) == []


def test_new_conversation_stores_nothing_until_its_first_message(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    page.reload()  # a reload of /chat is still a new conversation
    expect(page).to_have_url(NEW_CHAT_URL)
    expect(page.get_by_test_id("composer-input")).to_be_editable()
    page.get_by_test_id("new-session").click()
    expect(page.get_by_test_id("session-item")).to_have_count(0)
    assert stored_titles(stack) == []

    send(page, "The very first question")
    expect(page).to_have_url(CHAT_URL)
    expect(page.get_by_test_id("session-item")).to_have_count(1)
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    expect(assistant).to_contain_text("Echo: The very first question")
    assert stored_titles(stack) == ["The very first question"]

    # "/" opens the latest conversation once there is one.
    page.goto(stack.url)
    expect(page).to_have_url(CHAT_URL)
    expect(page.get_by_test_id("message-user")).to_have_text("The very first question")


def test_text_typed_while_the_app_answers_late_is_kept(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    box = page.get_by_test_id("composer-input")
    box.fill("Question one")
    with paused(stack):
        box.press("Enter")
        box.fill("Draft of the next question")  # typed before the app answered
    # The app creates the conversation and moves the page to its URL: the draft stays.
    expect(page).to_have_url(CHAT_URL, timeout=30_000)
    expect(page.get_by_test_id("message-user")).to_have_text("Question one")
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")
    expect(box).to_have_value("Draft of the next question")

    # "New conversation" under a late app: what is typed after the click is kept too.
    with paused(stack):
        page.get_by_test_id("new-session").click()
        box.fill("For the new conversation")
    expect(page).to_have_url(NEW_CHAT_URL, timeout=30_000)
    expect(page.get_by_test_id("message-user")).to_have_count(0)
    expect(box).to_have_value("For the new conversation")
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f-]{36}$"))
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")
    titles = stored_titles(stack)
    assert {"For the new conversation", "Question one"} <= set(titles)
    expect(page.get_by_test_id("session-item")).to_have_count(len(titles))

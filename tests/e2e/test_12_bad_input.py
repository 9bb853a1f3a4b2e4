"""Bad input gets a clear message and loses nothing; unusual text is kept exactly."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import select

from agent_chat.db.engine import make_engine
from agent_chat.db.models import ChatMessage
from agent_chat.runs.storage import Storage
from tests.support.browser import new_chat, send
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e


def test_an_oversized_message_is_refused_naming_the_limit_and_kept_in_the_box(
    page: Page, stack: Stack
) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    text = "x" * 100_001
    box = page.get_by_test_id("composer-input")
    box.fill(text)
    box.press("Enter")
    expect(page.get_by_test_id("composer-error")).to_contain_text("100,000")
    expect(page.get_by_test_id("message-user")).to_have_count(0)
    assert len(box.input_value()) == 100_001  # nothing lost


@pytest.mark.every_database  # the test process reads what the app wrote
def test_emoji_right_to_left_and_control_characters_are_kept_exactly(
    page: Page, stack: Stack
) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    text = "Grüße 👋🏽 مرحبا שלום\u200f a\u0007b\tc — 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"
    stack.fake.reset()
    send(page, text)
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")
    storage = Storage(make_engine(stack.env["AGENT_CHAT_DB_URL"]))

    def contents(*, session: Any) -> list[str]:
        return [
            m.content for m in session.exec(select(ChatMessage).where(ChatMessage.role == "USER"))
        ]

    try:
        assert text in storage.call_sync(contents)
    finally:
        storage.engine.dispose()
    sent = [
        m.get("content")
        for b in stack.fake.requests()
        for m in b["messages"]
        if m["role"] == "user"
    ]
    assert text in sent
    expect(page.get_by_test_id("message-user")).to_contain_text("👋🏽 مرحبا שלום")


def test_invalid_skill_folders_are_listed_as_invalid_and_cannot_be_chosen(
    page: Page, stack: Stack
) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    page.get_by_test_id("skill-select").click()
    invalid = page.get_by_test_id("skill-invalid")
    expect(invalid).to_have_count(2)
    expect(invalid.filter(has_text="broken")).to_contain_text("no front matter")
    expect(invalid.filter(has_text="empty")).to_contain_text("no SKILL.md")
    expect(invalid.first).to_have_attribute("data-disabled", "")
    expect(page.get_by_role("option", name="Haiku writer")).to_be_enabled()

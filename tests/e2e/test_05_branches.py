"""Branches in the browser: regenerate, edit, `< 2/3 >`, reset, search, archive, paging."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from agent_chat.db import messages, sessions
from agent_chat.db.engine import make_engine
from agent_chat.db.models import MessageRole, MessageStatus
from agent_chat.runs.storage import Storage
from tests.support.accounts import ADMIN_USER
from tests.support.browser import new_chat, send
from tests.support.stack import ARTIFACTS, Stack, ensure_fake_model
from tests.support.users import user_named

pytestmark = pytest.mark.e2e


def done(page: Page, index: int) -> None:
    expect(page.get_by_test_id("message-assistant").nth(index)).to_have_attribute(
        "data-status", re.compile("SUCCESS|FAILED|STOPPED")
    )


def test_regenerate_and_switch_between_versions(chat: Page) -> None:
    page = chat
    send(page, "Version question")
    done(page, 0)
    assistant = page.get_by_test_id("message-assistant")
    assistant.hover()
    assistant.get_by_test_id("regenerate").click()
    expect(assistant.get_by_test_id("version-label")).to_have_text("2/2")
    done(page, 0)
    expect(assistant.get_by_test_id("message-content")).to_have_text("Echo: Version question")
    first_id = None
    assistant.get_by_test_id("version-prev").click()
    expect(assistant.get_by_test_id("version-label")).to_have_text("1/2")
    first_id = assistant.get_attribute("data-message-id")
    assistant.get_by_test_id("version-next").click()
    expect(assistant.get_by_test_id("version-label")).to_have_text("2/2")
    assert assistant.get_attribute("data-message-id") != first_id
    page.reload()
    expect(page.get_by_test_id("version-label")).to_have_text("2/2")


def test_edit_creates_a_new_branch_and_the_old_one_comes_back(chat: Page) -> None:
    page = chat
    send(page, "Original wording")
    done(page, 0)
    send(page, "Follow-up on the original")
    done(page, 1)
    first = page.get_by_test_id("message-user").first
    first.hover()
    first.get_by_test_id("edit-message").click()
    editor = page.get_by_test_id("edit-input")
    editor.fill("Better wording")
    page.get_by_test_id("edit-submit").click()
    expect(page.get_by_test_id("message-user")).to_have_count(1)
    expect(page.get_by_test_id("message-user").first).to_contain_text("Better wording")
    done(page, 0)
    expect(page.get_by_test_id("message-assistant").first).to_contain_text("Echo: Better wording")
    # Back to version 1: its whole continuation is shown again.
    page.get_by_test_id("message-user").first.get_by_test_id("version-prev").click()
    expect(page.get_by_test_id("message-user")).to_have_count(2)
    expect(page.get_by_test_id("message-user").nth(1)).to_contain_text("Follow-up on the original")
    ARTIFACTS.mkdir(exist_ok=True)
    page.get_by_test_id("message-user").first.hover()
    page.screenshot(path=str(ARTIFACTS / "branches.png"))


def test_regenerate_is_refused_with_a_reason_while_running(chat: Page) -> None:
    page = chat
    send(page, "Short one")
    done(page, 0)
    send(page, "slow and long 200")
    expect(page.get_by_test_id("stop-button")).to_be_visible()
    first = page.get_by_test_id("message-assistant").first
    first.hover()
    first.get_by_test_id("regenerate").click()
    expect(page.get_by_test_id("error-banner")).to_contain_text(
        "not possible while the agent is answering"
    )
    page.get_by_test_id("stop-button").click()
    expect(page.get_by_test_id("message-assistant").nth(1)).to_have_attribute(
        "data-status", "STOPPED"
    )


def test_reset_adds_a_marker_and_the_agent_forgets(chat: Page) -> None:
    page = chat
    send(page, "Remember the word banana")
    done(page, 0)
    page.get_by_test_id("reset-session").click()
    expect(page.get_by_test_id("message-reset")).to_be_visible()
    send(page, "recall what came before")
    done(page, 1)
    expect(page.get_by_test_id("message-assistant").nth(1)).to_contain_text(
        "I have no earlier message."
    )
    expect(page.get_by_test_id("message-user").first).to_contain_text("banana")  # still visible


def test_search_finds_titles_and_message_contents_and_archive_hides(
    chat: Page, stack: Stack
) -> None:
    page = chat
    send(page, "Zebra facts please")
    done(page, 0)
    zebra_uuid = page.url.rsplit("/", 1)[-1]
    new_chat(page, stack)
    send(page, "Something else entirely")
    done(page, 0)

    search = page.get_by_test_id("session-search")
    search.fill("zebra")  # the list gives way to the results (tests/e2e/test_21_*)
    expect(page.get_by_test_id("search-result")).to_have_count(1)
    expect(page.get_by_test_id("search-result-title")).to_have_text("Zebra facts please")
    search.fill("echo: something else")  # only in an assistant message
    expect(page.get_by_test_id("search-result")).to_have_count(1)
    expect(page.get_by_test_id("search-result-title")).to_have_text("Something else entirely")
    search.fill("")

    item = page.locator(f'[data-testid="session-item"][data-session-id="{zebra_uuid}"]')
    item.get_by_role("button", name="Conversation actions").click()
    page.get_by_test_id("session-archive").click()
    expect(item).to_have_count(0)
    page.get_by_test_id("toggle-archived").click()
    expect(item).to_have_count(1)
    item.get_by_role("button", name="Conversation actions").click()
    page.get_by_test_id("session-unarchive").click()
    page.get_by_test_id("toggle-archived").click()
    expect(item).to_have_count(1)


@pytest.mark.every_database  # the test process writes while the app runs
def test_a_long_conversation_opens_with_the_newest_messages_and_pages_back(
    page: Page, stack: Stack
) -> None:
    ensure_fake_model(page, stack)
    storage = Storage(make_engine(stack.env["AGENT_CHAT_DB_URL"]))

    def build(*, session) -> str:
        chat = sessions.create_session(
            user_id=user_named(session=session, username=ADMIN_USER),
            session=session,
            title="Long history",
        )
        parent = None
        for i in range(120):
            role = MessageRole.USER if i % 2 == 0 else MessageRole.ASSISTANT
            status = MessageStatus.SENT if i % 2 == 0 else MessageStatus.SUCCESS
            parent = messages.append_message(
                session=session,
                chat_session_id=chat.id,
                parent_id=parent.id if parent else None,
                role=role,
                content=f"message number {i}",
                status=status,
            )
        return chat.session_uuid

    session_uuid = storage.call_sync(build)
    storage.engine.dispose()
    page.goto(f"{stack.url}/chat/{session_uuid}")
    expect(page.get_by_test_id("message-user").last).to_contain_text("message number 118")
    expect(page.locator('[data-testid^="message-"][data-message-id]')).to_have_count(50)
    page.get_by_test_id("load-earlier").click()
    expect(page.locator('[data-testid^="message-"][data-message-id]')).to_have_count(100)
    page.get_by_test_id("load-earlier").click()
    expect(page.locator('[data-testid^="message-"][data-message-id]')).to_have_count(120)
    expect(page.get_by_test_id("load-earlier")).to_have_count(0)
    expect(page.get_by_test_id("message-user").first).to_contain_text("message number 0")

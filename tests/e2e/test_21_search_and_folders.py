"""Search with snippets (opening a hit on its branch), pins and folders, in the browser.
The details (query syntax, Chinese, the index kept current) are tests/db/test_search.py."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from agent_chat.db import folders, messages, sessions
from agent_chat.db.engine import make_engine, open_session
from agent_chat.db.models import MessageRole, MessageStatus
from tests.support.accounts import ADMIN_USER
from tests.support.stack import Stack
from tests.support.users import user_named

pytestmark = pytest.mark.e2e


def _conversation(stack: Stack, title: str, turns: list[tuple[str, list[str]]]) -> str:
    """A conversation written straight to the database: each turn a question and its
    answers' versions (the last one active)."""
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as db:
            chat = sessions.create_session(
                user_id=user_named(session=db, username=ADMIN_USER), session=db, title=title
            )
            parent = None
            for question, answers in turns:
                user = messages.append_message(
                    session=db,
                    chat_session_id=chat.id,
                    parent_id=parent,
                    role=MessageRole.USER,
                    content=question,
                    status=MessageStatus.SENT,
                )
                for text in answers:
                    answer = messages.append_message(
                        session=db,
                        chat_session_id=chat.id,
                        parent_id=user.id,
                        role=MessageRole.ASSISTANT,
                        content=text,
                        status=MessageStatus.SUCCESS,
                    )
                parent = answer.id
            return chat.session_uuid
    finally:
        engine.dispose()


def _row(page: Page, uuid: str):
    return page.locator(f'[data-testid="session-item"][data-session-id="{uuid}"]')


def _menu(page: Page, uuid: str) -> None:
    _row(page, uuid).get_by_role("button", name="Conversation actions").click()


def test_search_shows_a_snippet_and_opens_the_hidden_version(page: Page, stack: Stack) -> None:
    uuid = _conversation(
        stack,
        "Fruit talk",
        [
            ("Name a tropical fruit", ["The rare rambutan is hairy and sweet.", "Mango."]),
            *[(f"Question {i}", [f"Answer {i}"]) for i in range(60)],  # beyond the first page
        ],
    )
    _conversation(stack, "Other", [("unrelated", ["nothing to see"])])
    page.goto(f"{stack.url}/settings/models")
    page.get_by_test_id("session-search").fill("rambutan hai")
    result = page.get_by_test_id("search-result")
    expect(result).to_have_count(1)
    expect(result.get_by_test_id("search-snippet").locator("mark")).to_have_text(
        ["rambutan", "hairy"]
    )
    expect(result).to_contain_text("Fruit talk")
    result.click()
    expect(page).to_have_url(f"{stack.url}/chat/{uuid}")
    hit = page.get_by_test_id("message-assistant").filter(has_text="rambutan")
    expect(hit).to_be_in_viewport()
    expect(hit.get_by_test_id("version-label")).to_have_text("1/2")
    # The branch switched in the database too: a reload shows the same version.
    page.reload()
    expect(page.get_by_test_id("message-assistant").filter(has_text="rambutan")).to_have_count(1)


def test_pin_and_folders(page: Page, stack: Stack) -> None:
    older = _conversation(stack, "Older one", [("a", ["b"])])
    newer = _conversation(stack, "Newer one", [("c", ["d"])])
    page.goto(f"{stack.url}/")  # opens the newest conversation, the list loaded
    titles = page.get_by_test_id("session-title")  # the other test's conversations too
    expect(titles.first).to_have_text("Newer one")

    _menu(page, older)
    page.get_by_test_id("session-pin").click()
    expect(titles.first).to_have_text("Older one")
    expect(titles.nth(1)).to_have_text("Newer one")
    expect(_row(page, older).get_by_test_id("pinned-icon")).to_be_visible()

    page.get_by_test_id("folder-new").click()
    page.get_by_test_id("folder-name-input").fill("Projects")
    page.get_by_test_id("folder-name-input").press("Enter")
    folder = page.get_by_test_id("folder")
    expect(folder).to_have_count(1)
    expect(folder.get_by_test_id("folder-name")).to_have_text("Projects")
    page.get_by_test_id("folder-new").click()  # the same name again: refused, said why
    page.get_by_test_id("folder-name-input").fill("projects")
    page.get_by_test_id("folder-name-input").press("Enter")
    expect(page.get_by_test_id("error-banner")).to_contain_text("already exists")
    expect(folder).to_have_count(1)

    _menu(page, newer)
    page.get_by_test_id("session-move").click()
    page.locator('[data-testid="session-move-target"][data-folder-name="Projects"]').click()
    expect(folder.get_by_test_id("session-title")).to_have_text(["Newer one"])
    folder.get_by_test_id("folder-toggle").click()  # fold: its conversations hide
    expect(folder.get_by_test_id("session-item")).to_have_count(0)
    expect(folder.get_by_test_id("folder-count")).to_have_text("1")  # counted, not read
    folder.get_by_test_id("folder-toggle").click()
    expect(folder.get_by_test_id("session-item")).to_have_count(1)

    folder.get_by_role("button", name="Folder actions").click()
    page.get_by_test_id("folder-delete").click()
    expect(folder).to_have_count(0)
    expect(titles.nth(1)).to_have_text("Newer one")  # back in the list, nothing deleted
    expect(_row(page, newer)).to_have_count(1)


def test_a_big_folder_shows_its_newest_and_more_on_request(
    page: Page, stack: Stack, user: int
) -> None:
    total = folders.FOLDER_PAGE + 2
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as db:
            folder_id = folders.create_folder(
                user_id=user_named(session=db, username=ADMIN_USER), session=db, name="Archive box"
            ).id
            for i in range(total):
                chat = sessions.create_session(
                    user_id=user_named(session=db, username=ADMIN_USER),
                    session=db,
                    title=f"Boxed {i:02}",
                )
                folders.move_session(
                    user_id=user_named(session=db, username=ADMIN_USER),
                    session=db,
                    session_uuid=chat.session_uuid,
                    folder_id=folder_id,
                )
    finally:
        engine.dispose()
    page.goto(f"{stack.url}/")  # opens the newest conversation, the list loaded
    folder = page.locator('[data-testid="folder"][data-folder-name="Archive box"]')
    expect(folder.get_by_test_id("folder-count")).to_have_text(str(total))
    rows = folder.get_by_test_id("session-title")
    expect(rows).to_have_count(folders.FOLDER_PAGE)
    expect(rows.first).to_have_text(f"Boxed {total - 1:02}")  # the newest first
    folder.get_by_test_id("folder-show-more").click()
    expect(rows).to_have_count(total)
    expect(rows.last).to_have_text("Boxed 00")
    expect(folder.get_by_test_id("folder-show-more")).to_have_count(0)
    folder.get_by_role("button", name="Folder actions").click()  # the next test's sidebar
    page.get_by_test_id("folder-delete").click()
    expect(folder).to_have_count(0)

"""The memory drawer in a real browser: the four views, the statistics, and editing
long-term memory through the bridge."""

from __future__ import annotations

from datetime import datetime

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.accounts import ADMIN_USER, user_id_of
from tests.support.browser import new_chat, send
from tests.support.stack import ARTIFACTS, Stack, ensure_fake_model
from tests.support.users import user_named

pytestmark = pytest.mark.e2e

MEMORY_LIMIT = 2200  # hermes' default MEMORY.md limit (the e2e HERMES_HOME keeps it)


def _bridge_memory(stack: Stack) -> dict:
    """The signed-in administrator's long-term memory, as the bridge keeps it."""
    params = {"user": user_id_of(stack.db_url)}
    return httpx.get(f"{stack.bridge_url}/memory", params=params, timeout=10).json()


def _open_drawer(page: Page):
    page.get_by_test_id("memory-button").click()
    drawer = page.get_by_test_id("memory-drawer")
    expect(drawer).to_be_visible()
    return drawer


def _add_summaries(stack: Stack, session_uuid: str, *texts_and_times) -> None:
    """Store SUMMARY messages under the conversation's last message, as a compaction would."""
    from agent_chat.db.engine import make_engine, open_session
    from agent_chat.db.messages import active_branch, append_message
    from agent_chat.db.sessions import get_session

    engine = make_engine(stack.env["AGENT_CHAT_DB_URL"])
    try:
        with open_session(engine) as session:
            chat = get_session(
                user_id=user_named(session=session, username=ADMIN_USER),
                session=session,
                session_uuid=session_uuid,
            )
            parent = active_branch(session=session, chat_session_id=chat.id)[-1]
            for text, created_at in texts_and_times:
                parent = append_message(
                    session=session,
                    chat_session_id=chat.id,
                    parent_id=parent.id,
                    role="SYSTEM",
                    content=text,
                    status="SUMMARY",
                )
                parent.created_at = created_at
                session.add(parent)
    finally:
        engine.dispose()


def _close_drawer(page: Page) -> None:
    page.get_by_test_id("memory-close").click()
    expect(page.get_by_test_id("memory-drawer")).to_have_count(0)


@pytest.fixture
def todo_chat(page: Page, stack: Stack) -> Page:
    """A conversation whose one answer ran the `todo` tool."""
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "make a todo plan")
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "SUCCESS", timeout=30_000)
    expect(assistant.get_by_test_id("message-content")).to_have_text("Plan made.")
    return page


def test_drawer_shows_working_memory_tool_calls_summaries_and_stats(todo_chat: Page) -> None:
    page = todo_chat
    drawer = _open_drawer(page)

    # Statistics: one question and one answer, no compression yet.
    stats = drawer.get_by_test_id("memory-stats")
    expect(stats.get_by_test_id("memory-stat-messages")).to_have_text("2 / 2")
    expect(stats.get_by_test_id("memory-stat-compressions")).to_have_text("0")
    expect(stats.get_by_test_id("memory-stat-last-compression")).to_have_text("never")

    # Working memory: what the next run sends, and the estimate (characters ÷ 4).
    items = drawer.get_by_test_id("memory-working-item")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_have_attribute("data-role", "user")
    expect(items.nth(0)).to_contain_text("make a todo plan")
    expect(items.nth(1)).to_have_attribute("data-role", "assistant")
    expect(items.nth(1)).to_contain_text("Plan made.")
    chars = len("make a todo plan") + len("Plan made.")
    estimate = drawer.get_by_test_id("memory-token-estimate")
    expect(estimate).to_contain_text(f"about {-(-chars // 4)} tokens")
    expect(estimate).to_contain_text(f"{chars} characters ÷ 4")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "memory-drawer.png"))

    # Short-term: the todo call, folded; unfolded it shows its arguments and result.
    drawer.get_by_role("tab", name="Short-term").click()
    tool = drawer.get_by_test_id("memory-tool-item")
    expect(tool).to_have_count(1)
    expect(tool).to_have_attribute("data-tool", "todo")
    expect(tool).to_have_attribute("data-error", "false")
    tool.locator("summary").click()
    expect(tool).to_contain_text("Arguments")
    expect(tool).to_contain_text("Gather the facts")
    expect(tool).to_contain_text("Result")
    page.screenshot(path=str(ARTIFACTS / "memory-drawer-short-term.png"))

    # Medium-term: no summaries in a short conversation.
    drawer.get_by_role("tab", name="Medium-term").click()
    summaries = drawer.get_by_test_id("memory-summaries")
    expect(summaries).to_contain_text("No summaries yet")
    expect(summaries.get_by_test_id("memory-summary-item")).to_have_count(0)

    # The tab stays chosen when the drawer is closed and opened again.
    _close_drawer(page)
    drawer = _open_drawer(page)
    expect(drawer.get_by_test_id("memory-summaries")).to_be_visible()


def test_long_term_memory_is_saved_through_the_bridge_and_limits_are_enforced(
    todo_chat: Page, stack: Stack
) -> None:
    page = todo_chat
    drawer = _open_drawer(page)
    drawer.get_by_role("tab", name="Long-term").click()
    long_term = drawer.get_by_test_id("memory-long-term")
    memory_box = long_term.get_by_test_id("memory-text-memory")
    expect(memory_box).to_be_editable()
    expect(long_term.get_by_test_id("memory-count-memory")).to_contain_text(f"/ {MEMORY_LIMIT}")

    note = "The user prefers short answers.\n§\nProject codename: Bluebird."
    memory_box.fill(note)
    expect(long_term.get_by_test_id("memory-count-memory")).to_have_text(
        f"{len(note)} / {MEMORY_LIMIT} characters"
    )
    long_term.get_by_test_id("memory-save").click()
    message = long_term.get_by_test_id("memory-save-message")
    expect(message).to_contain_text("Saved")
    assert _bridge_memory(stack)["memory"] == note

    # Closed and opened again, the text comes back from the bridge.
    _close_drawer(page)
    page.reload()
    drawer = _open_drawer(page)
    long_term = drawer.get_by_test_id("memory-long-term")
    expect(long_term).to_be_visible()  # the Long-term tab is still the chosen one
    expect(long_term.get_by_test_id("memory-text-memory")).to_have_value(note)

    # Over hermes' limit: the bridge refuses with 422, its reason is shown, the text stays.
    too_long = "x" * (MEMORY_LIMIT + 100)
    memory_box = long_term.get_by_test_id("memory-text-memory")
    memory_box.fill(too_long)
    counter = long_term.get_by_test_id("memory-count-memory")
    expect(counter).to_have_text(f"{len(too_long)} / {MEMORY_LIMIT} characters")
    long_term.get_by_test_id("memory-save").click()
    message = long_term.get_by_test_id("memory-save-message")
    expect(message).to_contain_text("Not saved")
    expect(message).to_contain_text(f"hermes allows at most {MEMORY_LIMIT}")
    expect(memory_box).to_have_value(too_long)
    assert _bridge_memory(stack)["memory"] == note
    page.screenshot(path=str(ARTIFACTS / "memory-drawer-over-limit.png"))

    # The unsaved edit survives closing the drawer; discarding brings back the stored text.
    _close_drawer(page)
    drawer = _open_drawer(page)
    memory_box = drawer.get_by_test_id("memory-text-memory")
    expect(memory_box).to_have_value(too_long)
    drawer.get_by_test_id("memory-discard").click()
    expect(memory_box).to_have_value(note)


def test_saving_while_the_bridge_is_down_keeps_the_text(todo_chat: Page, stack: Stack) -> None:
    page = todo_chat
    drawer = _open_drawer(page)
    drawer.get_by_role("tab", name="Long-term").click()
    memory_box = drawer.get_by_test_id("memory-text-memory")
    expect(memory_box).to_be_editable()
    before = _bridge_memory(stack)["memory"]
    edit = "Written while the agent service was down."
    stack.stop_bridge()
    try:
        memory_box.fill(edit)
        drawer.get_by_test_id("memory-save").click()
        message = drawer.get_by_test_id("memory-save-message")
        expect(message).to_contain_text("not reachable")
        expect(message).to_contain_text("Your text is still here")
        expect(memory_box).to_have_value(edit)
        # Reopened while the bridge is still down: the views still work, the edit is kept.
        _close_drawer(page)
        drawer = _open_drawer(page)
        expect(drawer.get_by_test_id("memory-long-term-error")).to_contain_text("not reachable")
        expect(drawer.get_by_test_id("memory-text-memory")).to_have_value(edit)
        expect(drawer.get_by_test_id("memory-stat-messages")).to_have_text("2 / 2")
    finally:
        stack.start_bridge()
    assert _bridge_memory(stack)["memory"] == before
    # Back up: saving works and the edit was not lost.
    drawer.get_by_test_id("memory-refresh").click()
    expect(drawer.get_by_test_id("memory-long-term-error")).to_have_count(0)
    expect(drawer.get_by_test_id("memory-text-memory")).to_have_value(edit)
    drawer.get_by_test_id("memory-save").click()
    expect(drawer.get_by_test_id("memory-save-message")).to_contain_text("Saved")
    assert _bridge_memory(stack)["memory"] == edit


def test_long_messages_are_folded_in_working_memory(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    long_text = "First line of a long note\n" + "word " * 120
    send(page, long_text)
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "SUCCESS", timeout=30_000)
    drawer = _open_drawer(page)
    drawer.get_by_role("tab", name="Working").click()
    item = drawer.get_by_test_id("memory-working-item").first
    summary = item.locator("summary")
    expect(summary).to_contain_text("First line of a long note")
    expect(summary).to_contain_text(f"{len(long_text)} chars")
    full = item.locator("pre")
    expect(full).not_to_be_visible()
    summary.click()
    expect(full).to_be_visible()
    expect(full).to_contain_text("word word")
    page.screenshot(path=str(ARTIFACTS / "memory-drawer-folded.png"))


@pytest.mark.every_database  # the test process writes while the app runs
def test_summaries_are_listed_newest_first_and_counted(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "hello there")
    expect(page.get_by_test_id("message-assistant")).to_have_attribute(
        "data-status", "SUCCESS", timeout=30_000
    )
    session_uuid = page.url.rstrip("/").rsplit("/", 1)[-1]
    _add_summaries(
        stack,
        session_uuid,
        ("## Goal\nThe **older** summary.", datetime(2025, 3, 1, 9, 30)),
        ("## Goal\nThe **newer** summary.", datetime(2025, 3, 2, 10, 45)),
    )
    page.reload()
    expect(page.get_by_test_id("message-summary")).to_have_count(2)
    drawer = _open_drawer(page)
    stats = drawer.get_by_test_id("memory-stats")
    expect(stats.get_by_test_id("memory-stat-compressions")).to_have_text("2")
    expect(stats.get_by_test_id("memory-stat-last-compression")).to_have_text(
        "2025-03-02 10:45 UTC"
    )
    expect(stats.get_by_test_id("memory-stat-messages")).to_have_text("4 / 4")
    # Working memory: the latest summary stands for what came before it.
    first = drawer.get_by_test_id("memory-working-item").first
    expect(first).to_contain_text("Summary of the earlier conversation")
    expect(first).to_contain_text("newer")
    drawer.get_by_role("tab", name="Medium-term").click()
    items = drawer.get_by_test_id("memory-summaries").get_by_test_id("memory-summary-item")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("newer summary")
    expect(items.nth(0)).to_contain_text("2025-03-02 10:45 UTC")
    expect(items.nth(1)).to_contain_text("older summary")
    page.screenshot(path=str(ARTIFACTS / "memory-drawer-summaries.png"))

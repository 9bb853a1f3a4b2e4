"""The five-area thinking panel and AskFor in a real browser."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import new_chat, send
from tests.support.stack import ARTIFACTS, Stack

pytestmark = pytest.mark.e2e


def test_todo_run_shows_tasks_live_then_folds_into_a_summary(chat: Page) -> None:
    page = chat
    send(page, "Make a todo plan delay=1")
    assistant = page.get_by_test_id("message-assistant")
    # Live: the TODO list with a mark per status, the tool in the history.
    todos = assistant.get_by_test_id("todo-item")
    expect(todos).to_have_count(3, timeout=15_000)
    expect(todos.nth(0)).to_have_attribute("data-status", "completed")
    expect(todos.nth(1)).to_have_attribute("data-status", "in_progress")
    expect(todos.nth(2)).to_have_attribute("data-status", "pending")
    expect(assistant.get_by_test_id("thinking-stream")).to_contain_text("Let me make a plan.")
    expect(assistant.get_by_test_id("live-status")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "thinking-panel-live.png"))

    expect(assistant).to_have_attribute("data-status", "SUCCESS", timeout=20_000)
    expect(assistant.get_by_test_id("message-content")).to_have_text("Plan made.")
    # Folded: one line, no panel.
    toggle = assistant.get_by_test_id("thinking-toggle")
    expect(toggle).to_contain_text("1 tool")
    expect(toggle).to_contain_text("1/3 tasks")
    expect(assistant.get_by_test_id("todo-item")).to_have_count(0)
    # Unfolded on click, rebuilt from the stored log.
    toggle.click()
    expect(assistant.get_by_test_id("todo-item")).to_have_count(3)
    item = assistant.get_by_test_id("tool-history-item")
    expect(item).to_have_count(1)
    expect(item).to_have_attribute("data-tool", "todo")
    item.locator("summary").click()
    expect(item).to_contain_text("Gather the facts")
    expect(assistant.get_by_test_id("thinking-stream")).to_contain_text("Let me make a plan.")
    page.screenshot(path=str(ARTIFACTS / "thinking-panel-unfolded.png"))
    toggle.click()
    expect(assistant.get_by_test_id("todo-item")).to_have_count(0)

    # Old messages unfold too, after a reload.
    page.reload()
    page.get_by_test_id("thinking-toggle").click()
    expect(page.get_by_test_id("todo-item")).to_have_count(3)


def test_reasoning_streams_into_the_thinking_area(chat: Page) -> None:
    page = chat
    send(page, "Please think hard")
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    expect(assistant.get_by_test_id("message-content")).to_have_text(
        "After thinking: the answer is 42."
    )
    assistant.get_by_test_id("thinking-toggle").click()
    expect(assistant.get_by_test_id("thinking-stream")).to_contain_text("Let me think about this.")


def test_askfor_waits_survives_reload_and_takes_a_choice(chat: Page) -> None:
    page = chat
    send(page, "Please ask me a question")
    panel = page.get_by_test_id("askfor-panel")
    expect(panel).to_be_visible()
    expect(page.get_by_test_id("askfor-question")).to_have_text("Which color do you prefer?")
    expect(page.get_by_test_id("askfor-choice")).to_have_text(["red", "green", "blue"])
    expect(page.get_by_test_id("session-waiting")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "askfor.png"))

    page.reload()
    expect(page.get_by_test_id("askfor-question")).to_have_text("Which color do you prefer?")
    page.get_by_test_id("askfor-choice").filter(has_text="green").click()
    expect(panel).to_have_count(0)
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    expect(assistant.get_by_test_id("message-content")).to_have_text("You chose green.")
    expect(page.get_by_test_id("session-waiting")).to_have_count(0)
    # The answer is in the tool history too.
    assistant.get_by_test_id("thinking-toggle").click()
    item = assistant.get_by_test_id("tool-history-item").filter(has_text="clarify")
    item.locator("summary").click()
    expect(item).to_contain_text("green")


def test_askfor_takes_a_custom_answer(chat: Page) -> None:
    page = chat
    send(page, "ask me")
    page.get_by_test_id("askfor-custom-input").fill("purple with dots")
    page.get_by_test_id("askfor-submit").click()
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant.get_by_test_id("message-content")).to_have_text("You chose purple with dots.")


def test_stop_ends_a_pending_question(chat: Page) -> None:
    page = chat
    send(page, "ask me")
    expect(page.get_by_test_id("askfor-panel")).to_be_visible()
    page.get_by_test_id("stop-button").click()
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "STOPPED")
    expect(page.get_by_test_id("askfor-panel")).to_have_count(0)
    expect(page.get_by_test_id("session-waiting")).to_have_count(0)


def test_waiting_badge_shows_while_another_session_is_open(chat: Page, stack: Stack) -> None:
    page = chat
    send(page, "ask me")
    expect(page.get_by_test_id("askfor-panel")).to_be_visible()
    waiting_url = page.url
    new_chat(page, stack)
    waiting_item = page.locator(
        f'[data-testid="session-item"][data-session-id="{waiting_url.rsplit("/", 1)[-1]}"]'
    )
    expect(waiting_item.get_by_test_id("session-waiting")).to_be_visible()
    page.goto(waiting_url)
    page.get_by_test_id("askfor-choice").filter(has_text="blue").click()
    expect(page.get_by_test_id("message-assistant").get_by_test_id("message-content")).to_have_text(
        "You chose blue."
    )

"""Scheduled runs on the page (`/schedules`): a schedule made through the form (weekdays at a
time) lists its next run; "Run now" lands a conversation in the sidebar, marked with a clock
and, once the answer is in, the unread dot, and the answer is there when it is opened. A
scheduled prompt that makes the scripted model ask a question waits on the AskFor card until
it is answered. A bad cron is refused next to its field and nothing is saved (the form keeps
what was typed); pause shows paused; "Schedule…" in a conversation's menu opens the form
adding to that conversation."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import CHAT_URL, send
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e


def _open_page(page: Page, stack: Stack) -> None:
    page.goto(f"{stack.url}/schedules")
    expect(page.get_by_test_id("schedule-new")).to_be_enabled()


def schedule_row(page: Page, title: str):
    return page.get_by_test_id("schedule-row").filter(has_text=title)


def create_schedule(page: Page, *, prompt: str, title: str, time: str = "07:30") -> None:
    """A schedule made through the form: weekdays (the form's first choice) at `time`."""
    page.get_by_test_id("schedule-new").click()
    page.get_by_test_id("schedule-prompt").fill(prompt)
    page.get_by_test_id("schedule-title").fill(title)
    page.get_by_test_id("schedule-when").click()
    page.get_by_role("option", name="Weekdays at").click()
    page.get_by_test_id("schedule-time").fill(time)
    page.get_by_test_id("schedule-save").click()
    expect(page.get_by_test_id("schedule-form")).to_have_count(0)
    expect(schedule_row(page, title)).to_be_visible()


def _sidebar_row(page: Page, title: str):
    return page.get_by_test_id("session-item").filter(has_text=title)


def test_run_now_lands_a_marked_conversation_with_its_answer(chat: Page, stack: Stack) -> None:
    page = chat
    _open_page(page, stack)
    expect(page.get_by_test_id("schedules-empty")).to_be_visible()
    create_schedule(page, prompt="Say hello from the schedule", title="Morning hello")
    row = schedule_row(page, "Morning hello")
    expect(row.get_by_test_id("schedule-when-text")).to_have_text(
        re.compile(r"^Weekdays at 07:30 \(.+\)$")
    )
    # The next run, in the browser's zone (the form's zone is the browser's too).
    expect(row.get_by_test_id("schedule-next")).to_have_text(
        re.compile(r"^(Mon|Tue|Wed|Thu|Fri) \d{1,2} \w{3}, 07:30$")
    )

    row.get_by_test_id("schedule-run-now").click()
    expect(row.get_by_test_id("schedule-run-result")).to_have_text("Started.")
    made = _sidebar_row(page, "Morning hello ·")
    expect(made.get_by_test_id("scheduled-mark")).to_be_visible()
    # The page follows the run it started: its end shows the unread dot and the outcome.
    expect(made.get_by_test_id("session-unread")).to_be_visible(timeout=60_000)
    expect(row.get_by_test_id("schedule-last")).to_contain_text("Answered")
    row.get_by_test_id("schedule-history-toggle").click()
    expect(row.get_by_test_id("schedule-history-item")).to_have_count(1)
    expect(row.get_by_test_id("schedule-history-item")).to_contain_text("run now")

    row.get_by_test_id("schedule-run-link").click()
    expect(page).to_have_url(CHAT_URL)
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    expect(assistant.get_by_test_id("message-content")).to_have_text(
        "Echo: Say hello from the schedule"
    )
    expect(made.get_by_test_id("session-unread")).to_have_count(0)  # seen now
    expect(made.get_by_test_id("scheduled-mark")).to_be_visible()


def test_a_scheduled_question_waits_for_its_answer(page: Page, stack: Stack) -> None:
    _open_page(page, stack)
    create_schedule(page, prompt="Please ask me a question", title="Colour poll", time="08:15")
    row = schedule_row(page, "Colour poll")
    row.get_by_test_id("schedule-run-now").click()
    expect(row.get_by_test_id("schedule-run-result")).to_have_text("Started.")
    row.get_by_test_id("schedule-run-link").click()
    expect(page).to_have_url(CHAT_URL)
    expect(page.get_by_test_id("askfor-question")).to_have_text("Which color do you prefer?")
    page.get_by_test_id("askfor-choice").filter(has_text="green").click()
    expect(page.get_by_test_id("askfor-panel")).to_have_count(0)
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    expect(assistant.get_by_test_id("message-content")).to_have_text("You chose green.")


def test_a_bad_cron_is_refused_next_to_its_field(page: Page, stack: Stack) -> None:
    _open_page(page, stack)
    before = page.get_by_test_id("schedule-row").count()
    page.get_by_test_id("schedule-new").click()
    page.get_by_test_id("schedule-prompt").fill("Check the backups")
    page.get_by_test_id("schedule-when").click()
    page.get_by_role("option", name="Custom (cron)").click()
    page.get_by_test_id("schedule-cron").fill("61 * * * *")
    page.get_by_test_id("schedule-save").click()
    expect(page.get_by_test_id("schedule-cron-error")).to_contain_text("minute field “61”")
    expect(page.get_by_test_id("schedule-prompt")).to_have_value("Check the backups")
    expect(page.get_by_test_id("schedule-cron")).to_have_value("61 * * * *")
    expect(page.get_by_test_id("schedule-row")).to_have_count(before)
    # Corrected, it saves.
    # A change clears its field's error, which moves Save up a line: a click before that
    # lands where the button was and is lost, so each click waits for it.
    cron_error = page.get_by_test_id("schedule-cron-error")
    page.get_by_test_id("schedule-cron").fill("*/2 * * * *")
    expect(cron_error).to_have_count(0)
    page.get_by_test_id("schedule-save").click()
    expect(cron_error).to_contain_text("at most every 5 minutes")
    page.get_by_test_id("schedule-cron").fill("15 6 1 * *")
    expect(cron_error).to_have_count(0)
    page.get_by_test_id("schedule-save").click()
    expect(schedule_row(page, "Check the backups")).to_contain_text("Cron: 15 6 1 * *")
    expect(page.get_by_test_id("schedule-row")).to_have_count(before + 1)


def test_pause_shows_paused_and_resume_brings_the_next_run_back(page: Page, stack: Stack) -> None:
    _open_page(page, stack)
    row = schedule_row(page, "Morning hello")
    row.get_by_test_id("schedule-pause").click()
    expect(row.get_by_test_id("schedule-paused")).to_be_visible()
    expect(row.get_by_test_id("schedule-pause")).to_have_text("Resume")
    expect(row.get_by_test_id("schedule-next")).to_have_count(0)
    page.reload()
    expect(schedule_row(page, "Morning hello").get_by_test_id("schedule-paused")).to_be_visible()
    schedule_row(page, "Morning hello").get_by_test_id("schedule-pause").click()
    expect(row.get_by_test_id("schedule-paused")).to_have_count(0)
    expect(row.get_by_test_id("schedule-next")).to_contain_text("07:30")


def test_schedule_from_a_conversations_menu_adds_to_it(chat: Page, stack: Stack) -> None:
    page = chat
    send(page, "Weekly notes start here")
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")
    item = page.locator("[data-testid=session-item].selected")
    title = item.get_by_test_id("session-title").inner_text()
    item.get_by_role("button", name="Conversation actions").click()
    page.get_by_test_id("session-schedule").click()
    expect(page).to_have_url(re.compile(r"/schedules\?conversation="))
    form = page.get_by_test_id("schedule-form")
    expect(form.get_by_test_id("schedule-where-append")).to_have_attribute("data-state", "checked")
    expect(form).to_contain_text(f"Add to this conversation: “{title}”")
    page.get_by_test_id("schedule-prompt").fill("Add this week's notes")
    page.get_by_test_id("schedule-save").click()
    row = schedule_row(page, "Add this week's notes").or_(schedule_row(page, title)).first
    expect(row).to_contain_text(f"Adds to “{title}”")
    row.get_by_test_id("schedule-delete").click()
    page.get_by_test_id("schedule-delete-confirm").click()
    expect(row).to_have_count(0)

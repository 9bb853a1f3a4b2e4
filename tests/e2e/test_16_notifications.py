"""Notifications: turned on in settings, a conversation that finishes while the person looks
at another one raises a browser notification (chromium, permission granted) and counts in the
tab title; a click opens it. A schedule's answer landing notifies too."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_39_schedules import create_schedule, schedule_row
from tests.support.browser import fresh_page, new_chat, send
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e


@pytest.fixture
def page(full_browser, stack: Stack, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A page of its own in full chromium (the headless shell reports notifications as
    denied when granted), which may take the spy below as an init script."""
    with fresh_page(full_browser, request, stack) as page:
        yield page


# Records every notification the page makes (the real one would pop up on the desktop).
SPY = """
window.__notes = [];
const Real = window.Notification;
class SpyNotification {
  constructor(title, options) {
    this.title = title; this.options = options || {};
    window.__notes.push({title, body: this.options.body, tag: this.options.tag, note: this});
  }
  close() {}
  static get permission() { return Real.permission; }
  static requestPermission() { return Real.requestPermission(); }
}
window.Notification = SpyNotification;
"""


def notifications_on(page: Page, stack: Stack) -> None:
    page.context.grant_permissions(["notifications"], origin=stack.url)
    page.add_init_script(SPY)
    ensure_fake_model(page, stack)
    page.goto(f"{stack.url}/settings/models")
    # Once the page is live (its state arrived: the agent services' rows come with it): a
    # click on the prerendered button is lost, more often the longer the page's load takes.
    expect(page.get_by_test_id("bridge-row").first).to_be_visible()
    page.get_by_test_id("notify-on").click()
    expect(page.get_by_test_id("notify-status")).to_have_text("On in this browser.")


def test_a_background_conversation_that_finishes_notifies_and_counts(
    page: Page, stack: Stack
) -> None:
    notifications_on(page, stack)
    new_chat(page, stack)
    # 8 s: still running when the other page has loaded (a run that ends during a page load
    # is unread in the sidebar, not notified: the new page starts watching from what it sees).
    send(page, "long 160 delay=0.05 background work")
    expect(page.get_by_test_id("session-item")).to_have_count(1)
    first_url = page.url
    new_chat(page, stack)  # look elsewhere while it runs
    page.wait_for_function("window.__notes.length > 0", timeout=60_000)
    notes = page.evaluate("window.__notes.map(n => [n.title, n.body, n.tag])")
    assert notes[0][0] == "An answer is ready"
    assert notes[0][1].startswith("long 160")
    assert first_url.endswith(notes[0][2])
    expect(page).to_have_title(re.compile(r"^\(1\) "))
    page.evaluate("window.__notes[0].note.onclick()")  # the person clicks it
    expect(page).to_have_url(first_url)
    expect(page).not_to_have_title(re.compile(r"^\(\d+\) "))


def test_a_scheduled_answer_landing_notifies(page: Page, stack: Stack) -> None:
    """A schedule's run lands a new conversation while the person is elsewhere: a
    notification names it, even when the run was over before the tab looked again."""
    notifications_on(page, stack)
    page.goto(f"{stack.url}/schedules")
    create_schedule(page, prompt="Report from the schedule", title="Nightly report")
    schedule_row(page, "Nightly report").get_by_test_id("schedule-run-now").click()
    page.wait_for_function("window.__notes.length > 0", timeout=60_000)
    notes = page.evaluate("window.__notes.map(n => [n.title, n.body])")
    assert notes[0][0] == "An answer is ready"
    assert notes[0][1].startswith("Nightly report ·"), notes

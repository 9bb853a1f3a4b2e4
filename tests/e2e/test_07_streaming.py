"""The streamed text is only a view: reloads and dropped connections lose nothing, because
the full text comes back from the state."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import new_chat, send
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e


def words_in(page: Page) -> list[str]:
    content = page.get_by_test_id("message-assistant").last.get_by_test_id("message-content")
    return re.findall(r"word\d+", content.inner_text())


def assert_contiguous(words: list[str]) -> None:
    assert words == [f"word{i}" for i in range(1, len(words) + 1)]


def test_reload_mid_stream_shows_the_whole_text_so_far_then_all_of_it(
    page: Page, stack: Stack
) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "long 150 delay=0.03")
    expect(page.get_by_test_id("message-content").last).to_contain_text("word30")
    page.reload()
    expect(page.get_by_test_id("message-content").last).to_contain_text("word60")
    assert page.get_by_test_id("message-assistant").last.get_attribute("data-status") == "RUNNING"
    assert_contiguous(words_in(page))  # nothing before the reload is missing
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS"
    )
    words = words_in(page)
    assert_contiguous(words)
    assert len(words) == 150


def test_a_tab_that_lost_its_connection_mid_stream_catches_up(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "long 300 delay=0.03")
    expect(page.get_by_test_id("message-content").last).to_contain_text("word20")
    page.context.set_offline(True)
    page.wait_for_timeout(1500)
    page.context.set_offline(False)
    # Still running: the text after the reconnect has no hole where the outage was.
    expect(page.get_by_test_id("message-content").last).to_contain_text("word150", timeout=20_000)
    running = (
        page.get_by_test_id("message-assistant").last.get_attribute("data-status") == "RUNNING"
    )
    words = words_in(page)
    assert_contiguous(words)
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS"
    )
    words = words_in(page)
    assert_contiguous(words)
    assert len(words) == 300
    assert running, "the run ended before the check: make the stream longer"


def test_a_streamed_answer_reaches_the_page_once_and_can_still_be_copied(
    page: Page, stack: Stack
) -> None:
    frames: list[str] = []
    page.on(
        "websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload)))
    )
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "long 200 delay=0.01")
    assistant = page.get_by_test_id("message-assistant").last
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    assert_contiguous(words_in(page))
    assert len(words_in(page)) == 200
    # The text came as deltas while streaming and is not sent again when the run ends.
    assert sum(f.count("word199 ") for f in frames) == 1
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    assistant.hover()
    assistant.get_by_test_id("copy-message").click()
    expect(page.get_by_text("Copied")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.split() == [f"word{i}" for i in range(1, 201)]

"""Nothing on the page animates while an answer streams, and the run still shows.

Every running CSS animation makes Chromium restyle, pre-paint and paint a frame 60 times a
second (on the main thread when there is no GPU): the Radix spinner in the sidebar and the
live status's pulsing dot cost the renderer more than the streamed text itself
(benchmarks/RESULTS.md, "Quiet running markers"). So while text streams the running markers
are static: the sidebar's mark (`session-running`) and the live status's dot (`live-dot`),
which pulses only before the first words arrive. With `prefers-reduced-motion: reduce` it
never pulses.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import send

pytestmark = pytest.mark.e2e

# The page's running CSS animations (not transitions: they end by themselves), each as
# "animation-name on the nearest data-testid".
RUNNING_ANIMATIONS_JS = """() => document.getAnimations()
  .filter((a) => a.playState === 'running' && a.animationName)
  .map((a) => {
    const el = a.effect && a.effect.target;
    const owner = el && el.closest('[data-testid]');
    return a.animationName + ' on ' + (owner ? owner.dataset.testid : el && el.tagName);
  })"""


def running_animations(page: Page) -> list[str]:
    return page.evaluate(RUNNING_ANIMATIONS_JS)


def assert_quiet_for_a_while(page: Page, allowed: frozenset[str] = frozenset()) -> None:
    """Sampled five times over a second: no running animation but the allowed ones."""
    for _ in range(5):
        extra = [a for a in running_animations(page) if a not in allowed]
        assert not extra, f"animations running while the answer streams: {extra}"
        page.wait_for_timeout(200)


def test_nothing_animates_while_an_answer_streams_and_the_run_still_shows(chat: Page) -> None:
    page = chat
    send(page, "slowfirst=4 long 200 delay=0.05")  # 4 s before the first word, then ~10 s
    item = page.get_by_test_id("session-item").filter(has=page.get_by_test_id("session-running"))
    assistant = page.get_by_test_id("message-assistant").last
    dot = assistant.get_by_test_id("live-dot")

    # Before the first words nothing else moves: the dot pulses, and only the dot.
    expect(dot).to_be_visible()
    expect(item).to_have_count(1)
    expect(item.get_by_test_id("session-running")).to_be_visible()
    expect(item.get_by_test_id("session-running")).to_have_attribute("aria-label", "Running")
    assert assistant.get_by_test_id("message-content").inner_text() == ""
    assert running_animations(page) == ["pulse on live-dot"]

    # While the answer streams: the text moves, nothing else; the markers stay, lit.
    expect(assistant.get_by_test_id("message-content")).to_contain_text("word10")
    assert_quiet_for_a_while(page)
    expect(page.get_by_test_id("session-running")).to_be_visible()
    expect(dot).to_be_visible()
    expect(dot).to_have_css("animation-name", "none")
    expect(dot).to_have_css("opacity", "1")
    expect(assistant.get_by_test_id("live-status")).to_have_text("Writing…")
    assert assistant.get_attribute("data-status") == "RUNNING", "make the stream longer"

    expect(assistant).to_have_attribute("data-status", "SUCCESS", timeout=30_000)
    expect(page.get_by_test_id("session-running")).to_have_count(0)
    expect(page.get_by_test_id("live-dot")).to_have_count(0)


def test_with_reduced_motion_the_run_shows_without_any_animation(chat: Page) -> None:
    page = chat
    page.emulate_media(reduced_motion="reduce")
    send(page, "slowfirst=3 long 60 delay=0.05")
    assistant = page.get_by_test_id("message-assistant").last
    dot = assistant.get_by_test_id("live-dot")
    expect(dot).to_be_visible()
    expect(page.get_by_test_id("session-running")).to_be_visible()
    assert assistant.get_by_test_id("message-content").inner_text() == ""
    assert_quiet_for_a_while(page)  # not even the waiting dot
    expect(dot).to_have_css("opacity", "1")
    expect(assistant.get_by_test_id("message-content")).to_contain_text("word10")
    assert_quiet_for_a_while(page)
    expect(assistant).to_have_attribute("data-status", "SUCCESS", timeout=30_000)

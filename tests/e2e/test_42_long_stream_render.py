"""The renderer's work while a long answer streams stays bounded (assets/stream_text.jsx):
a render that takes long is not repeated every frame (the frame budget of the page's stream
store), cheap renders are not held back, and a long answer's finished blocks sit in groups
the browser skips while they are off screen, with the same DOM as after a reload."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import send
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

# In the page: chunks appended every 10 ms for `ms`, a listener that costs `cost` ms per
# render, and (`busy` > 0) another task of `busy` ms after every frame, as a page that is
# still loading or reading socket messages has; when each render came, how long it took and
# how much text it had.
FEED_JS = """async ([id, ms, cost, busy]) => {
  const store = window.agentChatStream;
  const spin = (t) => { const s = performance.now(); while (performance.now() - s < t) {} };
  let other = busy > 0;
  const work = () => {
    if (!other) return;
    setTimeout(() => spin(busy), 0);
    requestAnimationFrame(work);
  };
  if (other) requestAnimationFrame(work);
  const renders = [];
  const off = store.subscribe(id, (text) => {
    const start = performance.now();
    spin(cost);
    renders.push({ at: start, took: performance.now() - start, length: text.length });
  });
  let text = "";
  const began = performance.now();
  for (let i = 0; performance.now() - began < ms; i++) {
    const chunk = `word${i} `;
    window.acs(id, text.length, chunk);
    text += chunk;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const lastChunkAt = performance.now();
  other = false;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  off();
  return { renders, lastChunkAt, length: text.length };
}"""

PARAGRAPHS = 120  # more than three groups of 32 finished blocks


def _page(page: Page, stack: Stack) -> None:
    page.goto(f"{stack.url}/chat")
    page.wait_for_function("() => window.agentChatStream && window.acs")


def test_a_slow_render_waits_three_times_its_length_before_the_next(
    page: Page, stack: Stack
) -> None:
    _page(page, stack)
    result = page.evaluate(FEED_JS, ["budget-slow", 2000, 40, 0])
    renders = result["renders"]
    # Without the budget this listener ran once per frame that had new text (~35 renders in
    # 2 s, the main thread all but full); with it, at most ~1 in 4 of the time renders.
    busy = sum(r["took"] for r in renders)
    span = renders[-1]["at"] + renders[-1]["took"] - renders[0]["at"]
    assert busy / span < 0.4, (len(renders), busy, span)
    gaps = [b["at"] - (a["at"] + a["took"]) for a, b in zip(renders, renders[1:], strict=False)]
    assert min(gaps) >= 3 * 40 - 5, gaps
    # ... and nothing is lost: the last render has all the text, soon after the last chunk.
    assert renders[-1]["length"] == result["length"]
    assert renders[-1]["at"] - result["lastChunkAt"] < 500


@pytest.mark.parametrize("busy", [0, 15])
def test_cheap_renders_follow_every_frame(page: Page, stack: Stack, busy: int) -> None:
    # Other work on the page (busy > 0) is not counted as the render's: a cheap render is
    # not held back for it (the budget once timed the render up to a task after its frame,
    # which then waited behind the other tasks, and a render every ~17 ms became one every
    # few hundred while a page was still loading).
    _page(page, stack)
    result = page.evaluate(FEED_JS, [f"budget-fast-{busy}", 1000, 0, busy])
    renders = result["renders"]
    gaps = sorted(b["at"] - a["at"] for a, b in zip(renders, renders[1:], strict=False))
    assert gaps[len(gaps) // 2] < 50, gaps  # a frame is ~17 ms: not held back
    assert renders[-1]["length"] == result["length"]


def test_a_long_answer_is_grouped_skipped_off_screen_and_the_same_after_a_reload(
    chat: Page,
) -> None:
    text = "".join(f"p{i} alpha beta\n\n" for i in range(PARAGRAPHS)) + "delay=0.002"
    send(chat, text)
    assistant = chat.get_by_test_id("message-assistant").last
    content = assistant.get_by_test_id("message-content")
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    expect(content).to_contain_text("delay=0.002")
    streamed = content.inner_html()
    groups = content.locator(".md-group")
    expect(groups).to_have_count(4)  # 121 blocks (the echo's first line ends the first)
    content.locator("p").last.scroll_into_view_if_needed()
    # Far above the view, the first group's content is skipped by the browser (its
    # paragraphs count as hidden by a `content-visibility: auto` ancestor); the last group's
    # is shown.
    hidden = "(el) => !el.checkVisibility({ contentVisibilityAuto: true })"
    chat.wait_for_function(hidden, arg=groups.first.locator("p").first.element_handle())
    assert not groups.last.locator("p").last.evaluate(hidden)
    style = groups.first.evaluate("(el) => getComputedStyle(el).contentVisibility")
    assert style == "auto"
    chat.reload()
    reloaded = chat.get_by_test_id("message-assistant").last.get_by_test_id("message-content")
    expect(reloaded).to_contain_text("delay=0.002")
    assert reloaded.inner_html() == streamed
    assert reloaded.locator("p").count() == PARAGRAPHS + 1

"""The page splits a growing answer into markdown blocks as it streams, resuming where it
stopped (assets/stream_text.jsx): however the text is cut into chunks, the
blocks, and so the DOM, are those of the whole text, i.e. what a reload shows."""

from __future__ import annotations

import random

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import send
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

FENCE_ACROSS_BLANKS = (
    "Intro line\n\n```python\ndef f():\n\n    return 1\n\n\n```\n\nAfter the code\n"
)
LIST_ACROSS_BLANKS = "- one\n- two\n\n- three\n   \n1. first\n2. second\n\n"
TILDES = "~~~\nnot closed by ``` \n\n```\nstill code\n~~~\n\ntail"
MIXED = (
    "# Title\n\nA paragraph with `code` and a [link](https://example.org).\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n> quote\n> more\n\n"
    "```\nopen fence at the end\n\nwith a blank line"
)
MANY = "\n\n".join(f"paragraph {i}" for i in range(100))  # more than one group of blocks
TEXTS = [FENCE_ACROSS_BLANKS, LIST_ACROSS_BLANKS, TILDES, MIXED, MANY, "", "\n\n\n", "one line"]

# A streamed answer: the scripted model echoes the message word by word (delay per word),
# so the chunks cut through the fence, the list and the table; ~40 words at 0.15 s: the
# page shows the open fence while the answer still runs, even on a loaded machine.
ANSWER = (
    "Before the code:\n\n"
    "```python\ndef add(a, b):\n\n    return a + b\n```\n\n"
    "- first item\n- second item\n\n- third item, after a blank line\n\n"
    "| col | val |\n|---|---|\n| x | 1 |\n\n"
    "<b>raw html stays text</b> and [bad](javascript:alert(1)) link\n\n"
    "delay=0.15"
)


def test_blocks_of_a_text_cut_anywhere_are_the_blocks_of_the_whole_text(
    page: Page, stack: Stack
) -> None:
    page.goto(f"{stack.url}/chat")
    page.wait_for_function("() => window.agentChatStream && window.agentChatStream.blocks")
    rng = random.Random(17)
    cases = []
    for text in TEXTS:
        # Every single cut point, and random sets of cuts.
        cases += [(text, [cut]) for cut in range(len(text) + 1)]
        for _ in range(40):
            cases.append((text, sorted(rng.sample(range(len(text) + 1), min(len(text), 6)))))
    results = page.evaluate(
        "(cases) => cases.map(([t, c]) => window.agentChatStream.blocks(t, c))", cases
    )
    for (text, cuts), result in zip(cases, results, strict=True):
        assert result["streamed"] == result["whole"], (text, cuts)
        assert "".join(result["whole"]) == text
    whole = {text: r["whole"] for (text, _), r in zip(cases, results, strict=True)}
    # A blank line inside a fence does not end the block; the fence's end does.
    assert whole[FENCE_ACROSS_BLANKS] == [
        "Intro line\n\n",
        "```python\ndef f():\n\n    return 1\n\n\n```\n\n",
        "After the code\n",
    ]
    assert whole[LIST_ACROSS_BLANKS][0] == "- one\n- two\n\n"
    assert len(whole[MANY]) == 100


def test_a_streamed_answer_shows_the_same_dom_as_after_a_reload(chat: Page) -> None:
    send(chat, ANSWER)
    assistant = chat.get_by_test_id("message-assistant").last
    content = assistant.get_by_test_id("message-content")
    # Mid-stream: the fence is open (its first line is there, the list is not yet).
    expect(content).to_contain_text("def add")
    assert assistant.get_attribute("data-status") == "RUNNING", "make the answer slower"
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    expect(content).to_contain_text("delay=0.15")
    streamed = content.inner_html()
    chat.reload()
    reloaded = chat.get_by_test_id("message-assistant").last.get_by_test_id("message-content")
    expect(reloaded).to_contain_text("delay=0.15")
    assert reloaded.inner_html() == streamed
    # One code block (the blank line inside did not split it), one table, the raw HTML as
    # text, no script link.
    assert reloaded.locator("pre").count() == 1
    assert "return a + b" in reloaded.locator("pre").inner_text()
    assert reloaded.locator("table").count() == 1
    assert reloaded.locator("b").count() == 0
    assert reloaded.locator('[href^="javascript:" i]').count() == 0

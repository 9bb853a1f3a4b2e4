"""Child agents (hermes' delegate_task) on the page: two children working at once show two
cards under the delegate_task call that update live, a reload mid-run shows the same cards,
the finished answer folds them into one line that unfolds to the cards with each child's
summary and tokens, and the answer's usage counts the children's. The scripted model runs
each child by its goal (its first user message), so the goals carry their own CALL lines."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import open_stored_chat, send
from tests.support.stack import ARTIFACTS, Stack

pytestmark = pytest.mark.e2e

ALPHA = "alpha: count the files"
BETA = "beta: read the notes"


def todo(*items: tuple[str, str]) -> str:
    todos = [{"id": str(n), "content": c, "status": s} for n, (c, s) in enumerate(items, 1)]
    return "CALL todo " + json.dumps({"todos": todos, "merge": False})


def goal(name: str, task: str) -> str:
    # Slow words so the children are still at work when the page reloads.
    return "\n".join(
        [
            f"{name} delay=0.2",
            todo((task, "in_progress"), ("report", "pending")),
            todo((task, "completed"), ("report", "in_progress")),
        ]
    )


def message() -> str:
    tasks = [{"goal": goal(ALPHA, "count"), "toolsets": ["todo"]},
             {"goal": goal(BETA, "read"), "toolsets": ["todo"]}]  # fmt: skip
    return "Split the work\nCALL delegate_task " + json.dumps({"tasks": tasks})


def use_workspace(page: Page, stack: Stack) -> None:
    """A conversation with the Workspace profile (it has the delegation toolset)."""
    open_stored_chat(page, stack)
    page.get_by_test_id("tool-profile-select").click()
    page.get_by_role("option", name="Workspace").click()
    expect(page.get_by_test_id("tool-profile-select")).to_contain_text("Workspace")


def tokens_in(text: str) -> int:
    found = re.search(r"([\d.]+)(K?) in", text)
    assert found, text
    return int(float(found.group(1)) * (1000 if found.group(2) else 1))


def test_two_children_show_live_survive_a_reload_and_fold(chat: Page, stack: Stack) -> None:
    page = chat
    use_workspace(page, stack)
    send(page, message())
    answer = page.get_by_test_id("message-assistant")
    cards = answer.get_by_test_id("subagent-card")
    expect(cards).to_have_count(2, timeout=60_000)
    expect(cards.nth(0).get_by_test_id("subagent-goal")).to_contain_text(ALPHA)
    expect(cards.nth(1).get_by_test_id("subagent-goal")).to_contain_text(BETA)
    expect(cards.nth(0)).to_have_attribute("data-status", "running")
    # Live: each card follows its own child (its TODO list, its tools).
    expect(cards.nth(0).get_by_test_id("subagent-todo").first).to_contain_text("count")
    expect(cards.nth(1).get_by_test_id("subagent-todo").first).to_contain_text("read")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "subagents-live.png"))

    # A reload mid-run shows the same cards (the stored log and the live events replayed).
    page.reload()
    cards = page.get_by_test_id("message-assistant").get_by_test_id("subagent-card")
    expect(cards).to_have_count(2, timeout=30_000)
    expect(cards.nth(0).get_by_test_id("subagent-goal")).to_contain_text(ALPHA)
    expect(cards.nth(1).get_by_test_id("subagent-goal")).to_contain_text(BETA)
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "RUNNING")
    # Side by side on a wide page.
    first, second = cards.nth(0).bounding_box(), cards.nth(1).bounding_box()
    assert first and second and abs(first["y"] - second["y"]) < 2, (first, second)

    answer = page.get_by_test_id("message-assistant")
    expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=120_000)
    expect(answer.get_by_test_id("subagent-card")).to_have_count(0)  # folded with the panel
    answer.get_by_test_id("thinking-toggle").click()
    fold = answer.get_by_test_id("subagents-fold")
    expect(fold).to_have_text(re.compile(r"^2 subagents · \d+ s · 4 tools$"))
    fold.click()
    cards = answer.get_by_test_id("subagent-card")
    expect(cards).to_have_count(2)
    for n in range(2):
        expect(cards.nth(n)).to_have_attribute("data-status", "completed")
        expect(cards.nth(n).get_by_test_id("subagent-summary")).to_contain_text("Tool todo done")
        expect(cards.nth(n).get_by_test_id("subagent-usage")).to_contain_text("out tokens")
    children = sum(
        tokens_in(cards.nth(n).get_by_test_id("subagent-usage").inner_text()) for n in range(2)
    )
    # The answer's usage line is its own plus its children's.
    total = tokens_in(answer.get_by_test_id("message-usage").inner_text())
    assert total > children > 0, (total, children)
    page.screenshot(path=str(ARTIFACTS / "subagents-unfolded.png"))

    # A phone: the cards stack, nothing wider than the screen.
    page.set_viewport_size({"width": 390, "height": 844})
    page.keyboard.press("Escape")  # the phone's drawer, if the narrower page opened it
    first, second = cards.nth(0).bounding_box(), cards.nth(1).bounding_box()
    assert first and second and second["y"] >= first["y"] + first["height"] - 1
    assert first["x"] + first["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(ARTIFACTS / "subagents-phone.png"))


def test_a_childs_approval_waits_in_its_name_across_a_reload(chat: Page, stack: Stack) -> None:
    """A child's dangerous command asks the person: the approval card names the child, its
    card waits, a reload shows both again, and Allow lets the child go on."""
    page = chat
    use_workspace(page, stack)
    cleaner = "gamma: clean up\nCALL terminal " + json.dumps({"command": "rm -rf victim"})
    tasks = [{"goal": cleaner, "toolsets": ["terminal"]}]
    send(page, "Delegate the cleaning\nCALL delegate_task " + json.dumps({"tasks": tasks}))
    for reloaded in (False, True):
        if reloaded:
            page.reload()
        panel = page.get_by_test_id("approval-panel")
        expect(panel.get_by_test_id("approval-command")).to_have_text(
            "rm -rf victim", timeout=60_000
        )
        expect(panel.get_by_test_id("approval-subagent")).to_contain_text("gamma: clean up")
        card = page.get_by_test_id("message-assistant").get_by_test_id("subagent-card")
        expect(card).to_have_attribute("data-status", "waiting")
        expect(card.get_by_test_id("subagent-status")).to_have_text("Waiting for your approval")
    page.screenshot(path=str(ARTIFACTS / "subagent-approval.png"))
    page.get_by_test_id("approval-once").click()
    expect(page.get_by_test_id("approval-panel")).to_have_count(0)
    answer = page.get_by_test_id("message-assistant")
    expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=120_000)
    answer.get_by_test_id("thinking-toggle").click()
    answer.get_by_test_id("subagents-fold").click()
    expect(answer.get_by_test_id("subagent-card")).to_have_attribute("data-status", "completed")

"""The workspace follows the version arrows, in a real browser (the real stack: hermes and
the scripted model): the agent writes a.txt = 1, a regenerate writes a.txt = 2; `< 1/2 >`
puts 1 back in the drawer and on disk, `2/2` brings 2; an edit of the question starts from
the empty folder; "1 file changed" lists the change as a diff, and undo, once confirmed,
puts the files back as before the answer and says so."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from tests.checkpoints.test_versions import counted
from tests.e2e.test_20_workspace_panel import use_workspace
from tests.support.browser import shot
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e


def script(command: str) -> str:
    return "Work in the folder\nCALL terminal " + json.dumps({"command": command})


def done(page: Page, status: str = "SUCCESS") -> None:
    answer = page.get_by_test_id("message-assistant").last
    expect(answer).to_have_attribute("data-status", status, timeout=90_000)


def drawer_shows(page: Page, version: str, text: str) -> None:
    """Open the drawer: its words name the version, a.txt's preview holds `text`; closed."""
    page.get_by_test_id("workspace-button").click()
    drawer = page.get_by_test_id("workspace-drawer")
    expect(drawer.get_by_test_id("workspace-version")).to_have_text(version)
    drawer.locator('[data-testid="workspace-file"][data-path="a.txt"]').click()
    expect(drawer.get_by_test_id("workspace-preview")).to_contain_text(text)
    page.keyboard.press("Escape")
    expect(drawer).to_have_count(0)


def test_switching_versions_switches_files_and_undo(chat: Page, stack: Stack) -> None:
    page = chat
    folder = use_workspace(page, stack)
    root = folder.parent
    send_text = script(counted(root, folder.name))
    box = page.get_by_test_id("composer-input")
    box.fill(send_text)
    box.press("Enter")
    done(page)
    assert (folder / "a.txt").read_text() == "1"

    answer = page.get_by_test_id("message-assistant")
    answer.hover()
    answer.get_by_test_id("regenerate").click()
    expect(answer.get_by_test_id("version-label")).to_have_text("2/2")
    done(page)
    assert (folder / "a.txt").read_text() == "2"
    drawer_shows(page, "Files as answer 2/2 left them", "2")

    answer.get_by_test_id("version-prev").click()
    expect(answer.get_by_test_id("version-label")).to_have_text("1/2")
    drawer_shows(page, "Files as answer 1/2 left them", "1")
    assert (folder / "a.txt").read_text() == "1"
    page.get_by_test_id("workspace-button").click()
    page.wait_for_timeout(400)  # the drawer's opening animation, for the screenshot
    shot(page, "workspace-version-1")
    page.keyboard.press("Escape")
    answer.get_by_test_id("version-next").click()
    expect(answer.get_by_test_id("version-label")).to_have_text("2/2")
    drawer_shows(page, "Files as answer 2/2 left them", "2")
    assert (folder / "a.txt").read_text() == "2"

    # What the answer changed: a.txt added, as a diff.
    changed = answer.get_by_test_id("workspace-changes")
    expect(changed).to_have_text("1 file changed")
    changed.click()
    dialog = page.get_by_test_id("workspace-changes-dialog")
    item = dialog.get_by_test_id("workspace-change")
    expect(item).to_have_attribute("data-path", "a.txt")
    expect(item).to_contain_text("added")
    expect(item).to_contain_text("+2")
    page.wait_for_timeout(400)
    shot(page, "workspace-changes")
    page.keyboard.press("Escape")

    # An edit of the question starts from the empty folder.
    question = page.get_by_test_id("message-user").first
    question.hover()
    question.get_by_test_id("edit-message").click()
    page.get_by_test_id("edit-input").fill(script("n=$(ls -A | wc -l); printf $n > seen.txt"))
    page.get_by_test_id("edit-submit").click()
    expect(question.get_by_test_id("version-label")).to_have_text("2/2")
    done(page)
    assert sorted(p.name for p in folder.iterdir()) == ["seen.txt"]
    assert (folder / "seen.txt").read_text() == "0"  # nothing was there when it looked

    # Undo, confirmed: the files as before the answer (the empty folder), said and recorded.
    answer = page.get_by_test_id("message-assistant")
    answer.get_by_test_id("workspace-changes").click()
    expect(dialog.get_by_test_id("workspace-change")).to_have_attribute("data-path", "seen.txt")
    dialog.get_by_test_id("workspace-undo").click()
    shot(page, "workspace-undo-confirm")
    dialog.get_by_test_id("workspace-undo-confirm").click()
    # Said in a toast (and, if the drawer is open, in its "Undone" line: the same words).
    toast = page.get_by_text("The files are back as before this answer. Its changes are undone.")
    expect(toast).to_be_visible()
    expect(answer.get_by_test_id("workspace-changes")).to_have_text("Changes undone")
    assert list(folder.iterdir()) == []

    # The other version of the question comes back with its files.
    question.get_by_test_id("version-prev").click()
    expect(question.get_by_test_id("version-label")).to_have_text("1/2")
    drawer_shows(page, "Files as answer 2/2 left them", "2")
    assert (folder / "a.txt").read_text() == "2"

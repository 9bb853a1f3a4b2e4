"""Approvals in the page: the tool-profile selector, the approval card (command, reason, four
choices) that survives a reload, Deny and Allow once, and the always-allowed rules in
settings (the shared stack enables the Chat and Workspace profiles)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import open_stored_chat, send
from tests.support.stack import ARTIFACTS, Stack

pytestmark = pytest.mark.e2e


def rm_message(target: str) -> str:
    return f"clean up\nCALL terminal {json.dumps({'command': f'rm -rf {target}'})}"


def use_workspace(page: Page, stack: Stack) -> str:
    """A conversation with the Workspace profile; its folder, with a victim."""
    uuid = open_stored_chat(page, stack)
    page.get_by_test_id("tool-profile-select").click()
    options = page.get_by_role("option")
    expect(options).to_have_count(2)
    page.get_by_role("option", name="Workspace").click()
    expect(page.get_by_test_id("tool-profile-select")).to_contain_text("Workspace")
    folder = stack.tmp / "workspaces" / uuid
    (folder / "victim").mkdir(parents=True)
    (folder / "victim" / "keep.txt").write_text("keep me", encoding="utf-8")
    return str(folder)


def test_a_dangerous_command_waits_in_the_card_across_a_reload_and_deny_keeps_the_files(
    chat: Page, stack: Stack
) -> None:
    page = chat
    folder = use_workspace(page, stack)
    send(page, rm_message("victim"))
    card = page.get_by_test_id("approval-panel")
    expect(card).to_be_visible(timeout=60_000)
    expect(card.get_by_test_id("approval-command")).to_have_text("rm -rf victim")
    expect(card.get_by_test_id("approval-reason")).to_contain_text("delete")
    for choice in ("once", "session", "always", "deny"):
        expect(card.get_by_test_id(f"approval-{choice}")).to_be_visible()
    expect(page.get_by_test_id("session-waiting")).to_have_count(1)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "approval-card.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(ARTIFACTS / "approval-card-phone.png"))
    page.set_viewport_size({"width": 1280, "height": 800})

    page.reload()  # the approval waits: it is still there after a reload
    card = page.get_by_test_id("approval-panel")
    expect(card.get_by_test_id("approval-command")).to_have_text("rm -rf victim")
    card.get_by_test_id("approval-deny").click()
    expect(page.get_by_test_id("approval-panel")).to_have_count(0)
    answer = page.get_by_test_id("message-assistant")
    expect(answer).to_have_attribute("data-status", "SUCCESS")
    expect(answer.get_by_test_id("message-content")).to_contain_text("BLOCKED")
    assert (Path(folder) / "victim" / "keep.txt").exists()
    expect(page.get_by_test_id("session-waiting")).to_have_count(0)


def test_allow_once_runs_the_command(chat: Page, stack: Stack) -> None:
    page = chat
    folder = use_workspace(page, stack)
    send(page, rm_message("victim"))
    page.get_by_test_id("approval-once").click(timeout=60_000)
    answer = page.get_by_test_id("message-assistant")
    expect(answer).to_have_attribute("data-status", "SUCCESS")
    expect(page.get_by_test_id("approval-panel")).to_have_count(0)
    assert not (Path(folder) / "victim").exists()


def test_always_allow_is_listed_in_settings_and_revoked_there(chat: Page, stack: Stack) -> None:
    page = chat
    use_workspace(page, stack)
    send(page, "tidy\nCALL terminal " + json.dumps({"command": "chmod 777 victim"}))
    page.get_by_test_id("approval-always").click(timeout=60_000)
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")
    page.goto(f"{stack.url}/settings/models")
    rules = page.get_by_test_id("always-rule")
    expect(rules).to_have_count(1)
    rules.first.get_by_test_id("always-revoke").click()
    expect(page.get_by_test_id("always-rule")).to_have_count(0)
    expect(page.get_by_test_id("always-allowed")).to_contain_text("every dangerous command asks")

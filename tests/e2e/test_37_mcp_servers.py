"""Settings → Tools in the browser: an administrator adds the reference `mcp-server-time`
(a stdio command), Test lists its tools, Save lists it; a conversation's answer then holds
the server's real result. A bad name is refused under its field with nothing lost; a command
that does not exist is said by Test; a server is disabled and deleted. A member's composer
names the servers the chosen tool profile gets; a tool's picture loads only when asked."""

from __future__ import annotations

import re
import sys

import httpx
import pytest
from playwright.sync_api import Page, expect

from agent_chat.auth import COOKIE_NAME
from tests.support.accounts import ensure_member, session_cookie
from tests.support.browser import fresh_page, send
from tests.support.stack import ARTIFACTS, Stack

pytestmark = pytest.mark.e2e

TIME_COMMAND = f"{sys.executable} -m mcp_server_time"
MEMBER, MEMBER_PASSWORD = "mira", "mira-has-a-long-password"


def _open(page: Page, stack: Stack) -> None:
    page.goto(f"{stack.url}/settings/tools")
    expect(page.get_by_test_id("mcp-new")).to_be_enabled()


def _add_time(page: Page, *, ask: bool = False) -> None:
    page.get_by_test_id("mcp-new").click()
    page.get_by_test_id("mcp-name").fill("time")
    page.get_by_test_id("mcp-command").fill(TIME_COMMAND)
    if not ask:
        page.get_by_test_id("mcp-ask").click()  # ticked by default for a command


def test_an_administrator_adds_tests_and_uses_the_time_server(chat: Page, stack: Stack) -> None:
    page = chat
    _open(page, stack)
    expect(page.get_by_test_id("mcp-empty")).to_be_visible()
    _add_time(page)
    page.get_by_test_id("mcp-test").click()
    result = page.get_by_test_id("mcp-test-result")
    expect(result).to_have_attribute("data-ok", "true", timeout=60_000)
    expect(
        result.get_by_test_id("mcp-test-tool").filter(has_text="get_current_time")
    ).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "mcp-form-tested.png"), full_page=True)
    page.get_by_test_id("mcp-save").click()
    row = page.get_by_test_id("mcp-row").filter(has_text="time")
    expect(row).to_be_visible()
    expect(page.get_by_test_id("mcp-form")).to_have_count(0)
    expect(row.get_by_test_id("mcp-row-name")).to_have_text("time")

    # A conversation's answer uses it: the scripted model calls the tool, the server answers.
    page.goto(f"{stack.url}/chat")
    expect(page.get_by_test_id("composer-input")).to_be_enabled()
    send(page, 'what time is it\nCALL mcp__time__get_current_time {"timezone": "Europe/Berlin"}')
    answer = page.get_by_test_id("message-assistant").last
    expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=60_000)
    expect(answer.get_by_test_id("message-content")).to_contain_text("Europe/Berlin")
    expect(answer.get_by_test_id("message-content")).to_contain_text(re.compile(r"datetime"))

    # Its status on the agent service, then disabled, then deleted.
    _open(page, stack)
    row = page.get_by_test_id("mcp-row").filter(has_text="time")
    expect(row.get_by_test_id("mcp-status")).to_contain_text("Connected · 2 tools", timeout=20_000)
    page.screenshot(path=str(ARTIFACTS / "mcp-list.png"), full_page=True)
    row.get_by_test_id("mcp-toggle").click()
    expect(row.get_by_test_id("mcp-disabled")).to_be_visible()
    row.get_by_test_id("mcp-delete").click()
    page.get_by_test_id("mcp-delete-confirm").click()
    expect(page.get_by_test_id("mcp-row")).to_have_count(0)
    expect(page.get_by_test_id("mcp-empty")).to_be_visible()


def test_bad_input_is_refused_under_its_field_and_test_says_why(page: Page, stack: Stack) -> None:
    _open(page, stack)
    page.get_by_test_id("mcp-new").click()
    page.get_by_test_id("mcp-name").fill("Not OK")
    page.get_by_test_id("mcp-command").fill("/no/such/mcp-server --flag")
    page.get_by_test_id("mcp-env").fill("TOKEN=abc")
    page.get_by_test_id("mcp-save").click()
    expect(page.get_by_test_id("mcp-name-error")).to_contain_text("lower-case letters")
    # Nothing typed is lost, nothing saved.
    expect(page.get_by_test_id("mcp-command")).to_have_value("/no/such/mcp-server --flag")
    expect(page.get_by_test_id("mcp-env")).to_have_value("TOKEN=abc")
    expect(page.get_by_test_id("mcp-row")).to_have_count(0)
    page.get_by_test_id("mcp-name").fill("nowhere")
    # The typed name clears its error, which moves the buttons up a line: a click before
    # that lands where the button was and is lost.
    expect(page.get_by_test_id("mcp-name-error")).to_have_count(0)
    page.get_by_test_id("mcp-test").click()
    result = page.get_by_test_id("mcp-test-result")
    expect(result).to_have_attribute("data-ok", "false", timeout=30_000)
    expect(result).to_contain_text("Command not found")
    # On a phone the form fits the screen's width.
    page.set_viewport_size({"width": 390, "height": 844})
    _open(page, stack)
    page.get_by_test_id("mcp-new").click()
    form = page.get_by_test_id("mcp-form")
    expect(form).to_be_visible()
    box = form.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    page.screenshot(path=str(ARTIFACTS / "mcp-form-phone.png"))


def test_an_asking_server_holds_the_call_in_the_approval_card_until_allowed(
    chat: Page, stack: Stack
) -> None:
    page = chat
    _open(page, stack)
    _add_time(page, ask=True)  # a command's default: ask before each call
    expect(page.get_by_test_id("mcp-ask")).to_be_checked()
    page.get_by_test_id("mcp-save").click()
    expect(page.get_by_test_id("mcp-row").filter(has_text="asks before each call")).to_be_visible()

    page.goto(f"{stack.url}/chat")
    expect(page.get_by_test_id("composer-input")).to_be_enabled()
    send(page, 'the time?\nCALL mcp__time__get_current_time {"timezone": "Asia/Tokyo"}')
    card = page.get_by_test_id("approval-panel")
    expect(card).to_be_visible(timeout=60_000)
    expect(card.get_by_test_id("approval-command")).to_contain_text(
        'time · get_current_time {"timezone": "Asia/Tokyo"}'
    )
    page.reload()  # it waits: still there after a reload, the call not made
    card = page.get_by_test_id("approval-panel")
    expect(card).to_be_visible()
    answer = page.get_by_test_id("message-assistant").last
    expect(answer).to_have_attribute("data-status", "RUNNING")
    card.get_by_test_id("approval-once").click()
    expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=60_000)
    expect(answer.get_by_test_id("message-content")).to_contain_text("Asia/Tokyo")
    _open(page, stack)
    row = page.get_by_test_id("mcp-row").filter(has_text="time")
    row.get_by_test_id("mcp-delete").click()
    page.get_by_test_id("mcp-delete-confirm").click()
    expect(page.get_by_test_id("mcp-row")).to_have_count(0)


def test_a_stored_secret_never_comes_back_to_the_browser(page: Page, stack: Stack) -> None:
    secret = "quince-secret-5150"
    _open(page, stack)
    _add_time(page)
    page.get_by_test_id("mcp-env").fill(f"TIME_SECRET={secret}")
    page.get_by_test_id("mcp-save").click()
    expect(page.get_by_test_id("mcp-row")).to_have_count(1)
    received: list[str] = []
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda frame: received.append(str(frame))),
    )
    _open(page, stack)  # a fresh page load: its own websocket
    row = page.get_by_test_id("mcp-row").filter(has_text="time")
    expect(row).to_contain_text("secrets: TIME_SECRET")
    row.get_by_test_id("mcp-edit").click()
    expect(page.get_by_test_id("mcp-env")).to_have_value("TIME_SECRET=\n")
    # Saved unchanged: the secret stays (the server still starts with it), never shown.
    page.get_by_test_id("mcp-save").click()
    expect(page.get_by_test_id("mcp-form")).to_have_count(0)
    row.get_by_test_id("mcp-row-test").click()
    expect(page.get_by_test_id("mcp-test-result")).to_have_attribute(
        "data-ok", "true", timeout=60_000
    )
    assert received, "no websocket frame was seen"
    assert not [f for f in received if secret in f]
    assert secret not in page.content()
    row.get_by_test_id("mcp-delete").click()
    page.get_by_test_id("mcp-delete-confirm").click()
    expect(page.get_by_test_id("mcp-row")).to_have_count(0)


def _choose_profile(page: Page, label: str) -> None:
    page.get_by_test_id("tool-profile-select").click()
    page.get_by_role("option", name=label).click()
    expect(page.get_by_test_id("tool-profile-select")).to_contain_text(label)


def test_a_member_sees_which_servers_their_profile_gets(
    page: Page, stack: Stack, browser, request: pytest.FixtureRequest
) -> None:
    _open(page, stack)
    _add_time(page)
    page.get_by_test_id("mcp-profile-workspace").click()  # for Workspace conversations only
    page.get_by_test_id("mcp-save").click()
    row = page.get_by_test_id("mcp-row").filter(has_text="time")
    expect(row).to_be_visible()
    ensure_member(stack.db_url, MEMBER, MEMBER_PASSWORD)
    with fresh_page(browser, request) as member:
        cookie = session_cookie(stack.url, MEMBER, MEMBER_PASSWORD)
        member.context.add_cookies(
            [{"name": COOKIE_NAME, "value": cookie, "url": stack.url, "httpOnly": True}]
        )
        member.goto(f"{stack.url}/chat")
        expect(member.get_by_test_id("composer-input")).to_be_editable()
        hint = member.get_by_test_id("mcp-hint")
        expect(hint).to_have_count(0)  # the Chat profile does not get it
        _choose_profile(member, "Workspace")
        expect(hint).to_have_text("MCP: time")
        member.screenshot(path=str(ARTIFACTS / "mcp-hint.png"))
        hint.hover()
        expect(member.get_by_role("tooltip")).to_contain_text("Settings → Tools")
        # On a phone (a page opened at its size: the sidebar folded away) it fits the screen.
        member.set_viewport_size({"width": 390, "height": 844})
        member.reload()
        expect(member.get_by_test_id("composer-input")).to_be_editable()
        # The new conversation's choice survives the reload (the page's load keeps it).
        expect(member.get_by_test_id("tool-profile-select")).to_contain_text("Workspace")
        expect(hint).to_have_text("MCP: time")
        box = hint.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        member.screenshot(path=str(ARTIFACTS / "mcp-hint-phone.png"))
        member.set_viewport_size({"width": 1280, "height": 800})

        # Disabled by the administrator: the member's next choice of the profile has none.
        row.get_by_test_id("mcp-toggle").click()
        expect(row.get_by_test_id("mcp-disabled")).to_be_visible()
        _choose_profile(member, "Chat")
        _choose_profile(member, "Workspace")
        expect(hint).to_have_count(0)
    row.get_by_test_id("mcp-delete").click()
    page.get_by_test_id("mcp-delete-confirm").click()
    expect(page.get_by_test_id("mcp-row")).to_have_count(0)


ITEM = '[data-testid="tool-history-item"][data-tool="mcp__tst__picture"]'


def test_a_tools_picture_loads_only_when_asked(
    chat: Page, stack: Stack, browser, request: pytest.FixtureRequest
) -> None:
    page = chat
    ours = {"name": "tst", "transport": "stdio", "command": sys.executable, "ask": False}
    ours["args"] = ["-m", "tests.support.mcp_server"]
    with httpx.Client(base_url=stack.url, headers=stack.auth_headers, timeout=30) as client:
        made = client.post("/api/mcp/servers", json=ours)
        assert made.status_code == 201, made.text
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url) if "/tool-images/" in r.url else None)
        send(page, "draw it\nCALL mcp__tst__picture {}")
        answer = page.get_by_test_id("message-assistant").last
        expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=60_000)
        answer.get_by_test_id("thinking-toggle").click()
        item = answer.locator(ITEM)
        item.locator("summary").first.click()
        show = item.get_by_test_id("tool-image-show")
        expect(show).to_be_visible()
        expect(item.get_by_test_id("tool-mcp-server")).to_have_text("tst (MCP)")
        assert asked == []  # not fetched while folded
        show.click()
        picture = item.get_by_test_id("tool-image")
        expect(picture).to_be_visible()
        page.wait_for_function(
            "img => img.complete && img.naturalWidth > 0", arg=picture.element_handle()
        )
        assert picture.evaluate("img => img.naturalWidth") == 24 and len(asked) == 1
        page.screenshot(path=str(ARTIFACTS / "mcp-tool-picture.png"))
        # In a new tab (the stored log), on a phone: the same, within the screen.
        with fresh_page(browser, request, stack) as phone:
            phone.set_viewport_size({"width": 390, "height": 844})
            phone.goto(page.url)
            expect(phone.get_by_test_id("send-button")).to_be_enabled()
            answer = phone.get_by_test_id("message-assistant").last
            answer.get_by_test_id("thinking-toggle").click()
            item = answer.locator(ITEM)
            item.locator("summary").first.click()
            item.get_by_test_id("tool-image-show").click()
            expect(item.get_by_test_id("tool-image")).to_be_visible()
            box = item.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
            phone.screenshot(path=str(ARTIFACTS / "mcp-tool-picture-phone.png"))
        # The route serves it to the conversation's owner only (another: tests/api).
        assert client.get(asked[0]).status_code == 200
        client.delete(f"/api/mcp/servers/{made.json()['id']}")

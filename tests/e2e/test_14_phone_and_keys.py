"""Phone and desktop layout, keyboard shortcuts, code blocks in answers.

Below 768 px the sidebar is a drawer behind a menu button; nothing scrolls sideways at 360 px;
touch targets are at least 40 px. Ctrl/Cmd+K, Ctrl/Cmd+Shift+O, Esc, ↑ and ? do what the
shortcut list says. Code blocks are highlighted (Prism's token spans), streamed or finished,
and their copy button copies the raw code.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import open_stored_chat, send
from tests.support.stack import ARTIFACTS, Stack

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
SMALL_PHONE = {"width": 360, "height": 740}
TABLET = {"width": 768, "height": 1024}
DESKTOP = {"width": 1280, "height": 800}

CODE = (
    "def greet(name: str) -> str:\n"
    "    # say hello, politely\n"
    '    return f"Hello, {name}!" + " and a long line of code that does not fit a phone"\n'
    "\n"
    "print(greet('world'))"
)
LONG_WORD = "supercalifragilistic" * 6
CODE_MESSAGE = (
    "Here is a fairly long explanation of the code below, " * 6
    + LONG_WORD
    + "\n\n```python\n"
    + CODE
    + "\n```\n\nThat is all."
)
# The code comes first, so that it is on the page well before the answer ends.
STREAM_MESSAGE = (
    "Code first:\n\n```python\n"
    + CODE
    + "\n```\n\n"
    + "Then a fairly long explanation of it, word after word, " * 8
    + "delay=0.05"
)

# Visible controls smaller than 40 px in either direction, inside `root`.
SMALL_TARGETS = """(root) => {
  const out = [];
  document.querySelectorAll(root).forEach((scope) => {
    const targets = "button, [role=button], [role=combobox], [data-testid=session-item], "
      + "[data-testid=session-item] > a";
    scope.querySelectorAll(targets)
      .forEach((el) => {
        const r = el.getBoundingClientRect();
        const style = getComputedStyle(el);
        if (r.width === 0 || r.height === 0 || style.visibility === "hidden") return;
        if (r.width < 40 || r.height < 40) {
          const label = el.getAttribute("data-testid") || el.getAttribute("aria-label")
            || el.textContent.trim().slice(0, 30);
          out.push(`${label}: ${Math.round(r.width)}x${Math.round(r.height)}`);
        }
      });
  });
  return out;
}"""
# Elements that stick out of the viewport sideways.
OUTSIDE = """(selectors) => {
  const out = [];
  for (const sel of selectors) {
    document.querySelectorAll(sel).forEach((el) => {
      const r = el.getBoundingClientRect();
      if (r.width && (r.left < -0.5 || r.right > innerWidth + 0.5)) {
        out.push(`${sel}: ${Math.round(r.left)}..${Math.round(r.right)}`);
      }
    });
  }
  return out;
}"""


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"phone-and-keys-{name}.png"))


def _done(page: Page) -> None:
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS"
    )


def test_phone_drawer_closed_by_default_opens_and_closes_after_a_choice(chat: Page) -> None:
    page = chat
    send(page, "The first conversation")
    _done(page)
    first = page.url
    page.get_by_test_id("new-session").click()
    expect(page).not_to_have_url(first)
    send(page, "The second conversation")
    _done(page)
    second = page.url

    page.set_viewport_size(PHONE)
    page.reload()
    toggle = page.get_by_test_id("sidebar-toggle")
    expect(toggle).to_be_visible()
    new_session = page.get_by_test_id("new-session")
    expect(new_session).to_be_hidden()  # closed by default
    # The conversation takes the whole width.
    pane = page.locator(".main-pane").bounding_box()
    assert pane is not None and pane["x"] == 0 and pane["width"] == PHONE["width"]

    toggle.click()
    expect(new_session).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_test_id("sidebar-close")).to_be_focused()  # focus moves into it
    page.wait_for_function(
        "getComputedStyle(document.querySelector('.sidebar')).transform === 'none'"
    )
    assert page.evaluate(SMALL_TARGETS, ".sidebar") == []
    _shot(page, "390x844-drawer")
    items = page.get_by_test_id("session-item")
    expect(items).to_have_count(2)
    items.filter(has_text="The first conversation").get_by_test_id("session-title").click()
    expect(page).to_have_url(first)
    expect(new_session).to_be_hidden()  # closed after choosing a conversation
    expect(page.get_by_test_id("message-user")).to_contain_text("The first conversation")

    # The header's exports and reset fold into one menu that fits the phone.
    expect(page.get_by_test_id("export-md")).to_be_hidden()
    page.get_by_test_id("header-more").click()
    expect(page.get_by_test_id("menu-reset-session")).to_be_visible()
    with page.expect_download() as download:
        page.get_by_test_id("menu-export-md").click()
    assert download.value.suggested_filename.endswith(".md")
    expect(page.get_by_test_id("menu-reset-session")).to_be_hidden()

    # Esc and the backdrop close it too; "New conversation" closes it and opens one.
    toggle.click()
    expect(new_session).to_be_visible()
    page.keyboard.press("Escape")
    expect(new_session).to_be_hidden()
    toggle.click()
    page.mouse.click(PHONE["width"] - 10, PHONE["height"] // 2)  # the backdrop
    expect(new_session).to_be_hidden()
    toggle.click()
    new_session.click()
    expect(page).not_to_have_url(first)
    expect(page).not_to_have_url(second)
    expect(new_session).to_be_hidden()


def test_no_sideways_scroll_at_360_and_big_touch_targets(chat: Page) -> None:
    page = chat
    send(page, CODE_MESSAGE)
    _done(page)
    send(page, "Make a todo plan")
    expect(page.get_by_test_id("message-assistant")).to_have_count(2)
    _done(page)
    page.get_by_test_id("thinking-toggle").last.click()  # the thinking panel, unfolded
    expect(page.get_by_test_id("todo-item")).to_have_count(3)

    page.set_viewport_size(SMALL_PHONE)
    page.get_by_test_id("code-block").scroll_into_view_if_needed()
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    selectors = [
        "[data-testid=message-assistant]",
        "[data-testid=message-user]",
        "[data-testid=code-block]",
        ".unfolded-panel",
        ".composer",
        "[data-testid=send-button]",
        ".chat-header",
    ]
    assert page.evaluate(OUTSIDE, selectors) == []
    for scroller in (".main-pane", ".message-scroll"):
        assert page.evaluate(
            f"(() => {{ const e = document.querySelector('{scroller}');"
            " return e.scrollWidth <= e.clientWidth; })()"
        ), f"{scroller} scrolls sideways"
    # Full width: the text box spans the screen, less the composer's padding and the two
    # 40-pixel buttons beside it (attach, send).
    box = page.get_by_test_id("composer-input").bounding_box()
    assert box is not None and box["width"] >= SMALL_PHONE["width"] - 140
    # Touch targets in the header, the composer and the answers' actions.
    assert page.evaluate(SMALL_TARGETS, ".chat-header, .composer, .message-column") == []
    # The on-screen keyboard shrinks the viewport (interactive-widget=resizes-content), and
    # the frame follows it (100dvh): the send button stays above the keyboard.
    viewport = page.locator('meta[name="viewport"]').get_attribute("content") or ""
    assert "interactive-widget=resizes-content" in viewport
    page.get_by_test_id("composer-input").focus()
    page.set_viewport_size({"width": SMALL_PHONE["width"], "height": 400})
    send_box = page.get_by_test_id("send-button").bounding_box()
    assert send_box is not None and send_box["y"] + send_box["height"] <= 400
    expect(page.get_by_test_id("send-button")).to_be_in_viewport()

    for name, size in (("390x844", PHONE), ("768x1024", TABLET), ("1280x800", DESKTOP)):
        page.set_viewport_size(size)
        page.get_by_test_id("code-block").scroll_into_view_if_needed()
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        assert page.evaluate(OUTSIDE, selectors) == [], name
        _shot(page, name)


def test_desktop_layout_keeps_the_sidebar_and_no_menu_button(chat: Page, stack: Stack) -> None:
    page = chat
    open_stored_chat(page, stack)  # a stored conversation has the header's actions
    page.set_viewport_size(DESKTOP)
    sidebar = page.locator(".sidebar")
    expect(sidebar).to_be_visible()
    box = sidebar.bounding_box()
    assert box is not None and box["x"] == 0 and box["width"] == 270
    pane = page.locator(".main-pane").bounding_box()
    assert pane is not None and pane["x"] == 270 and pane["width"] == DESKTOP["width"] - 270
    for hidden in ("sidebar-toggle", "sidebar-close", "header-more"):  # there, for phones
        expect(page.get_by_test_id(hidden)).to_have_count(1)
        expect(page.get_by_test_id(hidden)).to_be_hidden()
    expect(page.get_by_test_id("export-md")).to_be_visible()
    expect(page.get_by_test_id("new-session")).to_be_visible()
    expect(page.get_by_test_id("session-search")).to_be_visible()
    # At 768 px (a tablet) the sidebar is still beside the conversation.
    page.set_viewport_size(TABLET)
    expect(page.get_by_test_id("new-session")).to_be_visible()
    expect(page.get_by_test_id("sidebar-toggle")).to_be_hidden()


def test_keyboard_shortcuts(chat: Page) -> None:
    page = chat
    composer = page.get_by_test_id("composer-input")
    send(page, "Remember this line")
    _done(page)

    # ↑ in the empty composer edits the last message.
    composer.focus()
    page.keyboard.press("ArrowUp")
    edit = page.get_by_test_id("edit-input")
    expect(edit).to_be_visible()
    expect(edit).to_have_value("Remember this line")
    page.get_by_role("button", name="Cancel").click()
    expect(edit).to_have_count(0)
    # Not while there is text in the composer: the cursor moves as usual.
    composer.fill("draft")
    composer.press("ArrowUp")
    expect(edit).to_have_count(0)
    composer.fill("")

    # Esc stops the running answer.
    send(page, "long 400 delay=0.05")
    assistant = page.get_by_test_id("message-assistant").last
    expect(page.get_by_test_id("stop-button")).to_be_visible()
    expect(assistant.get_by_test_id("message-content")).to_contain_text("word3")
    page.keyboard.press("Escape")
    expect(assistant).to_have_attribute("data-status", "STOPPED")

    # ? (not while typing) lists the shortcuts.
    composer.press("?")
    expect(page.get_by_test_id("shortcuts-dialog")).to_have_count(0)
    expect(composer).to_have_value("?")
    composer.fill("")
    page.locator(".chat-header").click()  # focus out of the composer
    page.keyboard.press("?")
    dialog = page.get_by_test_id("shortcuts-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_test_id("shortcut-row")).to_have_count(7)
    expect(dialog).to_contain_text("Search conversations")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    page.get_by_test_id("shortcuts-button").click()  # the same list from the sidebar
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)

    # Ctrl+K focuses the search (on a phone it opens the drawer first).
    page.keyboard.press("Control+k")
    search = page.get_by_test_id("session-search")
    expect(search).to_be_focused()
    page.set_viewport_size(PHONE)
    composer.focus()
    expect(page.get_by_test_id("new-session")).to_be_hidden()
    page.keyboard.press("Control+k")
    expect(page.get_by_test_id("new-session")).to_be_visible()
    expect(search).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("new-session")).to_be_hidden()
    page.set_viewport_size(DESKTOP)

    # Ctrl+Shift+O starts a conversation.
    before = page.url
    page.keyboard.press("Control+Shift+O")
    expect(page).not_to_have_url(before)
    expect(page).to_have_url(re.compile(r"/chat$"))  # a new one, stored by its first message
    expect(page.get_by_test_id("message-user")).to_have_count(0)


def test_code_blocks_are_highlighted_streamed_and_finished_and_copy_raw_code(
    chat: Page, stack: Stack
) -> None:
    page = chat
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    send(page, STREAM_MESSAGE)
    assistant = page.get_by_test_id("message-assistant").last
    block = assistant.get_by_test_id("code-block")
    # While it streams: already a highlighted block (the same renderer as a finished one).
    expect(block.locator(".token.keyword").first).to_be_visible()
    assert assistant.get_attribute("data-status") == "RUNNING"
    _done(page)
    for reloaded in (False, True):
        if reloaded:
            page.reload()
        block = page.get_by_test_id("message-assistant").last.get_by_test_id("code-block")
        expect(block).to_have_count(1)
        expect(block).to_have_attribute("data-language", "python")
        expect(block.locator(".token.keyword").first).to_have_text("def")
        expect(block.locator(".token.comment")).to_have_text("# say hello, politely")
        assert block.locator(".token.string").count() >= 2
        block.get_by_test_id("code-copy").click()
        expect(block.get_by_test_id("code-copy")).to_contain_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == CODE
        expect(block.get_by_test_id("code-copy")).to_contain_text("Copy", timeout=5000)
        expect(block.get_by_test_id("code-copy")).not_to_contain_text("Copied")


def test_hostile_code_in_a_code_block_stays_text(chat: Page) -> None:
    page = chat
    hostile = '<script>window.__pwned = 1</script>\n<img src=x onerror="window.__pwned = 2">'
    send(page, "Look:\n\n```html\n" + hostile + "\n```")
    _done(page)
    block = page.get_by_test_id("code-block")
    expect(block).to_contain_text("<script>window.__pwned = 1</script>")
    assert block.locator(".token.tag").count() >= 2  # highlighted as markup, not made into it
    assert block.locator("script, img, [onerror]").count() == 0
    assert page.evaluate("window.__pwned") is None

"""The agent at work, in a real browser: real hermes tools called by the
scripted model show as a console block, diffs, an excerpt and code, the same live and after
a reload; the workspace drawer lists the conversation's files while the agent writes them,
previews text, code, markdown and images, downloads them, and the app refuses every path
out of the folder. (The shared stack enables the Chat and Workspace profiles.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support import pictures
from tests.support.browser import open_stored_chat, send
from tests.support.stack import ARTIFACTS, Stack

pytestmark = pytest.mark.e2e

SCRIPT = "import sys\n\n\ndef main():\n    print('hello from the workspace')\n    return 0\n"
PATCHED = "    print('hello, patched')\n"


def calls(*steps: tuple[str, dict]) -> str:
    lines = [f"CALL {tool} {json.dumps(args)}" for tool, args in steps]
    return "Work in the workspace please\n" + "\n".join(lines)


def use_workspace(page: Page, stack: Stack) -> Path:
    """A conversation with the Workspace profile; the conversation's folder."""
    uuid = open_stored_chat(page, stack)
    page.get_by_test_id("tool-profile-select").click()
    page.get_by_role("option", name="Workspace").click()
    expect(page.get_by_test_id("tool-profile-select")).to_contain_text("Workspace")
    return stack.tmp / "workspaces" / uuid


def png(width: int = 160, height: int = 100) -> bytes:
    """A small real PNG (an orange gradient), made here so no binary file is committed."""
    return pictures.png(width, height, lambda x, y: (255, 60 + x, 40 + y, 255))


def unfold(page: Page):
    """The finished answer's thinking panel, unfolded, once the page is live (a click on the
    prerendered page is lost; the send button is enabled once the state arrived)."""
    expect(page.get_by_test_id("send-button")).to_be_enabled()
    answer = page.get_by_test_id("message-assistant")
    answer.get_by_test_id("thinking-toggle").click()
    panel = answer.locator(".unfolded-panel")
    expect(panel).to_be_visible()
    return panel


def open_item(panel, tool: str):
    item = panel.get_by_test_id("tool-history-item").and_(panel.locator(f'[data-tool="{tool}"]'))
    item.locator("summary").first.click()
    return item


def test_tools_show_as_what_they_are_and_their_files_appear_in_the_drawer(
    chat: Page, stack: Stack
) -> None:
    page = chat
    ARTIFACTS.mkdir(exist_ok=True)
    folder = use_workspace(page, stack)
    message = calls(
        ("write_file", {"path": "hello.py", "content": SCRIPT}),
        (
            "patch",
            {
                "mode": "replace",
                "path": "hello.py",
                "old_string": "    print('hello from the workspace')\n",
                "new_string": PATCHED,
            },
        ),  # fmt: skip
        ("read_file", {"path": "hello.py"}),
        ("execute_code", {"code": "print(sum(range(10)))"}),
        ("terminal", {"command": "cat hello.py; sleep 6; exit 3"}),
    )
    send(page, message)
    answer = page.get_by_test_id("message-assistant")

    # Live: the drawer lists the file as soon as the agent wrote it, while the run goes on.
    page.get_by_test_id("workspace-button").click()
    drawer = page.get_by_test_id("workspace-drawer")
    expect(drawer.get_by_test_id("workspace-file")).to_have_attribute(
        "data-path", "hello.py", timeout=60_000
    )
    expect(answer).to_have_attribute("data-status", "RUNNING")
    page.keyboard.press("Escape")
    expect(drawer).to_have_count(0)
    # The current tool: the command it runs, as a console block.
    current = page.get_by_test_id("current-tool")
    expect(current.get_by_test_id("tool-command")).to_have_text("$ cat hello.py; sleep 6; exit 3")
    live_items = answer.get_by_test_id("tool-history-item")
    expect(live_items).to_have_count(5)
    page.screenshot(path=str(ARTIFACTS / "tools-live.png"))
    # The live history shows a finished call the way the stored log will (compared below).
    answer.get_by_text("Tools used (5)").click()
    live_write = open_item(answer, "write_file").locator(".tv-body").inner_text()
    expect(answer).to_have_attribute("data-status", "RUNNING")  # it was still the live view

    expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=30_000)
    expect(answer.get_by_test_id("message-content")).to_contain_text("Tool terminal done")
    panel = unfold(page)
    expect(panel.get_by_test_id("tool-history-item")).to_have_count(5)

    terminal = open_item(panel, "terminal")
    console = terminal.get_by_test_id("tool-console")
    expect(console.get_by_test_id("tool-command")).to_have_text("$ cat hello.py; sleep 6; exit 3")
    expect(console.get_by_test_id("tool-output")).to_contain_text("print('hello, patched')")
    expect(console.get_by_test_id("tool-exit-code")).to_have_text("exit 3")
    write = open_item(panel, "write_file")
    expect(write.get_by_test_id("tool-label")).to_have_text("hello.py")
    assert write.locator(".tv-body").inner_text() == live_write
    added = write.locator('[data-testid="diff-line"][data-kind="add"]')
    expect(added).to_have_count(len(SCRIPT.splitlines()))
    expect(added.nth(4)).to_have_text("+    print('hello from the workspace')")
    patch = open_item(panel, "patch")
    expect(patch.locator('[data-kind="del"]')).to_have_text(
        ["-    print('hello from the workspace')"]
    )
    expect(patch.locator('[data-kind="add"]')).to_have_text(["+    print('hello, patched')"])
    read = open_item(panel, "read_file")
    expect(read.get_by_test_id("tool-excerpt")).to_contain_text("def main():")
    expect(read.get_by_test_id("tool-note")).to_have_text("lines 1–6 of 6")
    code = open_item(panel, "execute_code")
    expect(code.get_by_test_id("tool-code")).to_have_text("print(sum(range(10)))")
    expect(code.locator(".hl-b")).to_have_text(["print", "sum", "range"])  # highlighted
    expect(code.get_by_test_id("tool-output")).to_have_text("45\n")
    assert (folder / "hello.py").read_text() == SCRIPT.replace(
        "    print('hello from the workspace')\n", PATCHED
    )
    terminal.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "tools-terminal.png"))
    write.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "tools-diff.png"))
    before = panel.inner_text()
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(500)  # the phone layout's sidebar slides away
    patch.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "tools-diff-phone.png"))
    terminal.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "tools-terminal-phone.png"))
    page.set_viewport_size({"width": 1280, "height": 800})

    # After a reload the stored log renders the same (folded first: the tab's state keeps
    # an unfolded panel unfolded across a reload).
    answer.get_by_test_id("thinking-toggle").click()
    expect(panel).to_have_count(0)
    page.reload()
    panel = unfold(page)
    for tool in ("write_file", "patch", "read_file", "execute_code", "terminal"):
        open_item(panel, tool)
    expect(panel.get_by_test_id("tool-exit-code")).to_have_count(2)
    assert panel.inner_text() == before


def test_the_drawer_previews_downloads_and_refuses_paths_out(chat: Page, stack: Stack) -> None:
    page = chat
    ARTIFACTS.mkdir(exist_ok=True)
    folder = use_workspace(page, stack)
    page.get_by_test_id("workspace-button").click()
    drawer = page.get_by_test_id("workspace-drawer")
    expect(drawer.get_by_test_id("workspace-empty")).to_contain_text("No files yet")
    expect(drawer.get_by_test_id("workspace-file")).to_have_count(0)

    # Files appear while the drawer is open (the agent's commands write them like this).
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text(
        "def greet(name):\n    # say hello\n    return f'hello {name}'\n", encoding="utf-8"
    )
    (folder / "README.md").write_text(
        "# Report\n\nSome **bold** words.\n\n<img src=x onerror=alert(1)>\n", encoding="utf-8"
    )
    (folder / "chart.png").write_bytes(png())
    (folder / "big.log").write_text("line of the log\n" * 21_000, encoding="utf-8")
    files = drawer.get_by_test_id("workspace-file")
    expect(files).to_have_count(4)
    expect(files.nth(0)).to_have_attribute("data-path", "README.md")
    paths = [files.nth(n).get_attribute("data-path") for n in range(4)]
    assert paths == ["README.md", "big.log", "chart.png", "src/app.py"]
    expect(files.nth(1).get_by_test_id("workspace-file-size")).to_have_text("328 KB")
    expect(files.nth(1).get_by_test_id("workspace-file-time")).to_have_text("just now")

    preview = drawer.get_by_test_id("workspace-preview")
    files.nth(3).click()
    expect(preview).to_have_attribute("data-kind", "code")
    expect(preview.locator(".hl-k").first).to_have_text("def")
    expect(preview.get_by_test_id("workspace-preview-code")).to_contain_text(
        "return f'hello {name}'"
    )
    page.screenshot(path=str(ARTIFACTS / "workspace-drawer-code.png"))

    files.nth(0).click()
    expect(preview).to_have_attribute("data-kind", "markdown")
    expect(preview.get_by_role("heading", name="Report")).to_be_visible()
    expect(preview.locator("strong")).to_have_text("bold")
    expect(preview.locator("img")).to_have_count(0)  # raw HTML stays text
    expect(preview).to_contain_text("<img src=x onerror=alert(1)>")
    page.screenshot(path=str(ARTIFACTS / "workspace-drawer-markdown.png"))

    files.nth(1).click()
    expect(preview).to_have_attribute("data-kind", "text")
    expect(preview).to_contain_text("Showing the first 100 KB of 328 KB")

    files.nth(2).click()
    expect(preview).to_have_attribute("data-kind", "image")
    image = preview.get_by_test_id("workspace-preview-image")
    expect(image).to_be_visible()
    page.wait_for_function(
        "el => el.complete && el.naturalWidth === 160", arg=image.element_handle()
    )
    page.screenshot(path=str(ARTIFACTS / "workspace-drawer-image.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(500)
    files.nth(3).click()
    expect(preview).to_have_attribute("data-kind", "code")
    page.screenshot(path=str(ARTIFACTS / "workspace-drawer-phone.png"))
    page.set_viewport_size({"width": 1280, "height": 800})

    # Download: the file as an attachment, from the app's own route.
    with page.expect_download() as download_info:
        preview.get_by_test_id("workspace-download").click()
    download = download_info.value
    assert download.suggested_filename == "app.py"
    assert Path(download.path()).read_text(encoding="utf-8").startswith("def greet(name):")

    # A changed file is previewed again; a deleted one says so.
    (folder / "src" / "app.py").write_text("def greet():\n    return 'changed'\n")
    expect(preview.get_by_test_id("workspace-preview-code")).to_contain_text("changed")
    (folder / "src" / "app.py").unlink()
    expect(preview).to_have_attribute("data-kind", "missing")
    expect(files).to_have_count(3)

    # Paths out of the folder, through the real app (gate and guard included): 404.
    other = stack.tmp / "workspaces" / "00000000-0000-4000-8000-000000000000"
    other.mkdir(parents=True, exist_ok=True)
    (other / "secret.txt").write_text("another conversation's")
    (folder / "link-out").symlink_to(other / "secret.txt")
    base = f"{stack.url}/api/chat/sessions/{folder.name}/workspace/"
    for path in ("%2e%2e/" + other.name + "/secret.txt", "..%2F..%2Fapp.db", "%2Fetc%2Fpasswd",
                 "link-out", "src"):  # fmt: skip
        reply = page.request.get(base + path)
        assert reply.status == 404, (path, reply.status)
    ok = page.request.get(base + "README.md")
    assert ok.status == 200 and ok.headers["content-disposition"].startswith("attachment")

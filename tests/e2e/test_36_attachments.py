"""Files in the composer (assets/attach.jsx): picked with the paperclip, dropped on the page
or pasted, each a chip with its name and size that uploads at once; Send carries them to the
agent (the scripted model's request log shows what it was sent) and the chips go. A file
that cannot go (empty, over the size limit, a program) says why on its chip and nothing is
sent until it is removed; a send while an upload goes on waits for it. A sent message's edit
form keeps or drops its files and adds new ones the same way."""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import NEW_CHAT_URL, send
from tests.support.pictures import png
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

CSV = b"city,people\nLyon,522250\nGhent,265086\n"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + os.urandom(48)
ELF = b"\x7fELF\x02\x01\x01" + bytes(200)


def _png(width: int = 8, height: int = 8) -> bytes:
    """A real picture (a red square), which a browser draws."""
    return png(width, height, lambda x, y: (255, 0, 0))


def _file(name: str, data: bytes, mime: str) -> dict[str, Any]:
    return {"name": name, "mimeType": mime, "buffer": data}


def _attach(page: Page, *files: dict[str, Any] | Path, scope: str = "") -> None:
    """Files picked with a paperclip: the composer's, or `scope="edit-"` the edit form's."""
    # Payloads or paths, never both in one pick (Playwright takes one kind per call).
    page.get_by_test_id(f"{scope}attach-input").set_input_files(list(files))  # type: ignore[arg-type]


def _huge(folder: Path) -> Path:
    """huge.txt, one byte over the 20 MB limit, as a file on disk (sparse): picked by its
    path, the browser reads its size only. As a buffer its 20 MB went base64 through the
    Playwright driver into the page, several CPU-s each time, for a chip that only looks at
    `file.size`."""
    path = folder / "huge.txt"
    with path.open("wb") as out:
        out.truncate(20 * 1024 * 1024 + 1)
    return path


def _drop(page: Page, name: str, data: bytes, mime: str) -> None:
    """A file dragged over the page and dropped on it, as a browser's own drag sends it."""
    page.evaluate(
        """([name, bytes, mime]) => {
          const dt = new DataTransfer();
          dt.items.add(new File([new Uint8Array(bytes)], name, {type: mime}));
          for (const type of ["dragenter", "dragover", "drop"]) {
            document.body.dispatchEvent(
              new DragEvent(type, {dataTransfer: dt, bubbles: true, cancelable: true}));
          }
        }""",
        [name, list(data), mime],
    )


def _paste(page: Page, png: bytes) -> None:
    """A picture pasted into the focused element, as a screenshot comes from the clipboard
    (no name)."""
    page.evaluate(
        """(bytes) => {
          const dt = new DataTransfer();
          dt.items.add(new File([new Uint8Array(bytes)], "", {type: "image/png"}));
          document.activeElement.dispatchEvent(
            new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
        }""",
        list(png),
    )


def _chip(page: Page, name: str) -> Any:
    return page.locator(f'[data-testid="attachment-chip"][data-name="{name}"]')


def _sent_with(stack: Stack, marker: str, name: str) -> str:
    """The text of the last user turn the model got that holds `marker` and the file `name`
    (the agent's turn, not the title's request, which may come after it)."""
    for body in reversed(stack.fake.requests()):
        users = [m for m in body.get("messages", []) if m["role"] == "user"]
        content = users[-1]["content"] if users else ""
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        text = "\n".join(p.get("text", "") for p in parts)
        if marker in text and name in text:
            return text
    raise AssertionError(f"no request with {marker!r} and {name!r}")


def test_a_picked_file_reaches_the_agent_and_its_chip_goes(chat: Page, stack: Stack) -> None:
    page = chat
    expect(page.get_by_test_id("attach-button")).to_be_visible()
    _attach(page, _file("cities.csv", CSV, "text/csv"))
    chip = _chip(page, "cities.csv")
    expect(chip).to_have_attribute("data-state", "done")
    expect(chip).to_contain_text(f"{len(CSV)} B")
    send(page, "How many people live in these cities?")
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )
    text = _sent_with(stack, "How many people live in these cities?", "cities.csv")
    assert "cities.csv" in text and "Ghent,265086" in text
    expect(page.get_by_test_id("attachment-chip")).to_have_count(0)
    expect(page.get_by_test_id("composer-input")).to_have_value("")
    card = page.get_by_test_id("message-user").get_by_test_id("message-file")
    expect(card).to_have_attribute("data-name", "cities.csv")
    expect(card).to_contain_text("37 bytes")
    with page.expect_download() as download:  # a file card is the download
        card.click()
    assert download.value.suggested_filename == "cities.csv"
    assert "/chat/" in page.url  # the page stays


def test_a_sent_picture_shows_in_its_message_after_a_reload(chat: Page, stack: Stack) -> None:
    page = chat
    _attach(page, _file("red.png", _png(), "image/png"), _file("notes.md", b"# hi\n", "text/x"))
    expect(page.locator('[data-testid="attachment-chip"][data-state="done"]')).to_have_count(2)
    send(page, "What colour is it?")
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )
    page.reload()
    files = page.get_by_test_id("message-user").get_by_test_id("message-file")
    expect(files).to_have_count(2)
    picture = files.filter(has=page.locator("img"))
    expect(picture).to_have_attribute("data-name", "red.png")
    picture.locator("img").scroll_into_view_if_needed()
    page.wait_for_function(
        "() => { const i = document.querySelector('[data-testid=message-file] img');"
        " return i && i.complete && i.naturalWidth === 8; }"
    )
    assert (picture.locator("img").get_attribute("src") or "").endswith("/thumbnail")
    picture.click()  # the full picture over the page, not a download
    viewer = page.get_by_test_id("picture-viewer")
    expect(viewer).to_be_visible()
    expect(viewer.locator("img")).to_have_attribute("alt", "red.png")
    with page.expect_download() as download:  # the viewer's link downloads it
        viewer.get_by_role("link").click()
    assert download.value.suggested_filename == "red.png"
    expect(viewer).to_have_count(0)  # a click closes it
    expect(files.last).to_contain_text("notes.md")
    download = page.request.get(page.url.split("/chat")[0] + (picture.get_attribute("href") or ""))
    assert download.ok and download.body() == _png()


def test_dropped_and_pasted_files_become_chips(chat: Page, stack: Stack) -> None:
    page = chat
    _drop(page, "dropped.csv", CSV, "text/csv")
    expect(_chip(page, "dropped.csv")).to_have_attribute("data-state", "done")
    expect(page.get_by_test_id("attach-drop")).to_have_count(0)
    page.get_by_test_id("composer-input").focus()
    _paste(page, PNG)
    pasted = page.locator('[data-testid="attachment-chip"][data-name^="pasted-"]')
    expect(pasted).to_have_attribute("data-state", "done")
    expect(pasted.locator("img.attachment-thumb")).to_have_count(1)
    page.get_by_test_id("attachment-chip").first.get_by_test_id("attachment-remove").click()
    expect(page.get_by_test_id("attachment-chip")).to_have_count(1)


def test_a_refused_file_says_why_and_blocks_the_send(
    chat: Page, stack: Stack, tmp_path: Path
) -> None:
    page = chat
    before = len(stack.fake.requests())
    _attach(
        page,
        _file("empty.txt", b"", "text/plain"),
        _file("tool", ELF, "application/octet-stream"),
    )
    _attach(page, _huge(tmp_path))  # a second pick adds its chip to the first two
    expect(_chip(page, "empty.txt")).to_have_attribute("data-state", "error")
    expect(_chip(page, "empty.txt")).to_contain_text("empty")
    expect(_chip(page, "huge.txt")).to_contain_text("Too large (at most 20 MB)")
    expect(_chip(page, "tool")).to_have_attribute("data-state", "error")
    expect(_chip(page, "tool").get_by_test_id("attachment-error")).to_have_text(re.compile(r"\w"))
    box = page.get_by_test_id("composer-input")
    box.fill("with these files")
    box.press("Enter")
    expect(page.get_by_test_id("attach-blocked")).to_be_visible()
    expect(box).to_have_value("with these files")  # nothing was sent, nothing lost
    assert NEW_CHAT_URL.search(page.url)  # still a new conversation
    assert len(stack.fake.requests()) == before
    for name in ("empty.txt", "tool", "huge.txt"):
        _chip(page, name).get_by_test_id("attachment-remove").click()
    expect(page.get_by_test_id("attach-blocked")).to_have_count(0)
    send(page, "with these files")
    expect(page.get_by_test_id("message-user").get_by_test_id("message-content")).to_have_text(
        "with these files"
    )


def test_a_send_waits_for_the_upload(chat: Page, stack: Stack) -> None:
    page = chat
    held: list[Any] = []
    page.route("**/api/chat/attachments", lambda route: held.append(route))
    _attach(page, _file("late.csv", CSV, "text/csv"))
    expect(_chip(page, "late.csv")).to_have_attribute("data-state", "uploading")
    box = page.get_by_test_id("composer-input")
    box.fill("use the late file")
    box.press("Enter")
    expect(page.get_by_test_id("attach-waiting")).to_be_visible()
    expect(page.get_by_test_id("message-user")).to_have_count(0)
    page.wait_for_timeout(200)
    assert held, "the upload request was not made"
    held[0].continue_()
    page.unroute("**/api/chat/attachments")
    expect(page.get_by_test_id("message-user").get_by_test_id("message-content")).to_have_text(
        "use the late file"
    )
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )
    text = _sent_with(stack, "use the late file", "late.csv")
    assert "late.csv" in text and "Lyon,522250" in text


def test_export_with_files_then_import_brings_the_files_back(
    chat: Page, stack: Stack, tmp_path: Path
) -> None:
    page = chat
    _attach(page, _file("travel.csv", b"day,city\n1,Lyon\n2,Ghent\n", "text/csv"))
    expect(_chip(page, "travel.csv")).to_have_attribute("data-state", "done")
    send(page, "Plan the trip (export)")
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )
    with page.expect_download() as info:
        page.get_by_test_id("export-json-files").click()
    exported = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    (question,) = [m for m in exported["messages"] if m["role"] == "USER"]
    (file,) = question["attachments"]
    assert file["name"] == "travel.csv"
    assert base64.b64decode(file["data"]) == b"day,city\n1,Lyon\n2,Ghent\n"
    source = tmp_path / "export.json"
    source.write_text(json.dumps(exported), encoding="utf-8")
    before = page.url
    with page.expect_file_chooser() as chooser:
        page.get_by_test_id("import-button").click()
    chooser.value.set_files(str(source))
    page.wait_for_url(lambda url: url != before and "/chat/" in url)
    card = page.get_by_test_id("message-user").get_by_test_id("message-file")
    expect(card).to_have_attribute("data-name", "travel.csv")
    with page.expect_download() as download:
        card.click()
    assert Path(download.value.path()).read_bytes() == b"day,city\n1,Lyon\n2,Ghent\n"


def test_an_edit_keeps_or_drops_the_files(chat: Page, stack: Stack) -> None:
    page = chat
    _attach(
        page, _file("keep.csv", b"a,b\n1,2\n", "text/csv"), _file("drop.md", b"# x\n", "text/x")
    )
    expect(page.locator('[data-testid="attachment-chip"][data-state="done"]')).to_have_count(2)
    send(page, "Two files (edit)")
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )
    page.get_by_test_id("message-user").hover()
    page.get_by_test_id("edit-message").click()
    kept = page.get_by_test_id("edit-file")
    expect(kept).to_have_count(2)
    kept.filter(has_text="drop.md").locator("input").uncheck()
    page.get_by_test_id("edit-input").fill("One file (edited)")
    page.get_by_test_id("edit-submit").click()
    expect(page.get_by_test_id("message-user").get_by_test_id("message-content")).to_have_text(
        "One file (edited)"
    )
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )
    files = page.get_by_test_id("message-user").get_by_test_id("message-file")
    expect(files).to_have_count(1)
    expect(files).to_have_attribute("data-name", "keep.csv")
    text = _sent_with(stack, "One file (edited)", "keep.csv")
    assert "drop.md" not in text


def _open_edit(page: Page) -> None:
    page.get_by_test_id("message-user").hover()
    page.get_by_test_id("edit-message").click()
    expect(page.get_by_test_id("edit-attach-button")).to_be_visible()


def test_an_edit_adds_new_files_to_the_kept_ones(chat: Page, stack: Stack) -> None:
    page = chat
    _attach(page, _file("old.csv", b"a,b\n1,2\n", "text/csv"), _file("gone.md", b"# x\n", "text/x"))
    expect(page.locator('[data-testid="attachment-chip"][data-state="done"]')).to_have_count(2)
    send(page, "Two files (add)")
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )
    _open_edit(page)
    page.get_by_test_id("edit-file").filter(has_text="gone.md").locator("input").uncheck()
    _attach(page, _file("new.csv", b"town,sea\nBrest,yes\n", "text/csv"), scope="edit-")
    expect(_chip(page, "new.csv")).to_have_attribute("data-state", "done")
    box = page.get_by_test_id("edit-input")
    box.focus()
    _paste(page, _png())  # a picture pasted into the edit box joins the edit, not the composer
    tray = page.get_by_test_id("edit-attach-tray")
    expect(tray.locator('[data-testid="attachment-chip"][data-state="done"]')).to_have_count(2)
    expect(page.get_by_test_id("attach-tray")).to_have_attribute("data-count", "0")
    box.fill("Old and new files (edited)")
    page.get_by_test_id("edit-submit").click()
    expect(page.get_by_test_id("message-user").get_by_test_id("message-content")).to_have_text(
        "Old and new files (edited)"
    )
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )
    files = page.get_by_test_id("message-user").get_by_test_id("message-file")
    expect(files).to_have_count(3)
    names = [f.get_attribute("data-name") or "" for f in files.all()]
    assert names[:2] == ["old.csv", "new.csv"] and re.fullmatch(r"pasted-.*\.png", names[2])
    text = _sent_with(stack, "Old and new files (edited)", "new.csv")
    assert "a,b\n1,2" in text and "Brest,yes" in text and names[2] in text
    assert "gone.md" not in text
    _open_edit(page)  # a new edit starts with no chips of the last one
    expect(page.get_by_test_id("edit-attach-tray")).to_have_attribute("data-count", "0")
    expect(page.get_by_test_id("edit-file")).to_have_count(3)


def test_a_refused_file_in_an_edit_blocks_it_and_loses_nothing(
    chat: Page, stack: Stack, tmp_path: Path
) -> None:
    """Too large is refused on its chip before the upload; the eleventh file of a message
    by the server: both say why and the form keeps its text and files."""
    page = chat
    _attach(page, *(_file(f"f{i}.csv", f"n\n{i}\n".encode(), "text/csv") for i in range(10)))
    expect(page.locator('[data-testid="attachment-chip"][data-state="done"]')).to_have_count(10)
    send(page, "Ten files (limit)")
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )
    _open_edit(page)
    _attach(page, _huge(tmp_path), scope="edit-")
    tray = page.get_by_test_id("edit-attach-tray")
    expect(_chip(page, "huge.txt")).to_have_attribute("data-state", "error")
    expect(_chip(page, "huge.txt")).to_contain_text("Too large (at most 20 MB)")
    box = page.get_by_test_id("edit-input")
    box.fill("Eleven files (edited)")
    page.get_by_test_id("edit-submit").click()
    expect(page.get_by_test_id("edit-attach-blocked")).to_be_visible()
    _chip(page, "huge.txt").get_by_test_id("attachment-remove").click()
    _attach(page, _file("eleven.csv", b"n\n11\n", "text/csv"), scope="edit-")
    expect(_chip(page, "eleven.csv")).to_have_attribute("data-state", "done")
    page.get_by_test_id("edit-submit").click()
    expect(page.get_by_test_id("edit-error")).to_have_text("At most 10 attachments per message.")
    expect(box).to_have_value("Eleven files (edited)")  # nothing lost
    expect(tray.get_by_test_id("attachment-chip")).to_have_count(1)
    expect(page.get_by_test_id("edit-file")).to_have_count(10)
    expect(page.get_by_test_id("version-label")).to_have_count(0)  # no new version
    page.get_by_test_id("edit-file").first.locator("input").uncheck()
    page.get_by_test_id("edit-submit").click()
    expect(page.get_by_test_id("message-user").get_by_test_id("message-content")).to_have_text(
        "Eleven files (edited)"
    )
    files = page.get_by_test_id("message-user").get_by_test_id("message-file")
    expect(files).to_have_count(10)
    expect(files.last).to_have_attribute("data-name", "eleven.csv")
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS", timeout=60_000
    )


def _reads_images(stack: Stack, on: bool) -> None:
    from agent_chat.db import model_configs
    from agent_chat.db.engine import make_engine, open_session

    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            for model in model_configs.list_models(session=session):
                model_configs.update_model(session=session, model_id=model.id, supports_images=on)
    finally:
        engine.dispose()


def test_picked_pasted_and_dropped_files_reach_a_model_that_reads_images(
    chat: Page, stack: Stack
) -> None:
    """The picker's picture and the pasted one go as image parts with their bytes, the
    dropped CSV as text, all in one message."""
    page = chat
    _reads_images(stack, True)
    try:
        picked, pasted = _png(8, 8), _png(12, 6)
        _attach(page, _file("picked.png", picked, "image/png"))
        page.get_by_test_id("composer-input").focus()
        _paste(page, pasted)
        _drop(page, "dropped.csv", CSV, "text/csv")
        done = page.locator('[data-testid="attachment-chip"][data-state="done"]')
        expect(done).to_have_count(3)
        send(page, "Describe all three (images)")
        expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
            "data-status", "SUCCESS", timeout=60_000
        )
        for body in reversed(stack.fake.requests()):
            content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
            if isinstance(content, list) and "Describe all three" in content[0]["text"]:
                break
        else:
            raise AssertionError("the model never got the message with its parts")
        assert "```dropped.csv\n" + CSV.decode() in content[0]["text"]
        urls = [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]
        assert sorted(urls) == sorted(
            "data:image/png;base64," + base64.b64encode(b).decode() for b in (picked, pasted)
        )
    finally:
        _reads_images(stack, False)

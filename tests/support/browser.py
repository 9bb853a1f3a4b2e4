"""Debian's chromium for tests and benchmarks (never `playwright install` here), and the page
steps the browser tests share."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.stack import Stack

CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags chromium keeps trying hosts this machine cannot
# reach.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextlib.contextmanager
def fresh_page(browser: Any, request: Any) -> Iterator[Any]:
    """A page in a new browser context (no cookie, no state); a screenshot in
    test-artifacts/ when the test failed, and uncaught page errors fail the test."""
    from tests.support.stack import ARTIFACTS

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}-failure.png"))
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def send(page: Any, text: str) -> None:
    """Type a message in the composer and press Enter."""
    box = page.get_by_test_id("composer-input")
    box.fill(text)
    box.press("Enter")


def new_chat(page: Any, stack: Stack) -> None:
    """Open a new, empty conversation and wait until its page is ready for typing."""
    from playwright.sync_api import expect

    # Start from a page that does not redirect ("/" jumps to the latest conversation, and a
    # click racing that redirect would land in the wrong one).
    page.goto(f"{stack.url}/settings/models")
    expect(page.get_by_role("heading", name="Models")).to_be_visible()
    page.get_by_test_id("new-session").click()
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f-]{36}$"))
    expect(page.get_by_test_id("composer-input")).to_be_editable()
    expect(page.get_by_test_id("message-user")).to_have_count(0)

"""Debian's chromium for tests and benchmarks (never `playwright install` here), and the page
steps the browser tests share."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.stack import Stack

# Benchmarks measure Debian's full chromium, the browser a user runs, so their CPU figures are
# a user's. The browser tests use Debian's chromium-headless-shell (the same source, built
# headless only, what Playwright itself launches for headless): a page load there costs a third
# of the CPU (0.17 s against 0.55 s here) and the suite's browser files about a quarter less.
# AGENT_CHAT_TEST_CHROMIUM=/usr/bin/chromium runs the browser tests on full chromium instead.
CHROMIUM = "/usr/bin/chromium"
TEST_CHROMIUM = os.environ.get("AGENT_CHAT_TEST_CHROMIUM", "/usr/bin/chromium-headless-shell")
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
def fresh_page(browser: Any, request: Any, stack: Stack | None = None) -> Iterator[Any]:
    """A page in a new browser context (no state; signed in as the stack's administrator
    when given a `stack`, else no cookie); a screenshot in test-artifacts/ when the test
    failed, and uncaught page errors fail the test."""
    from tests.support.stack import ARTIFACTS

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    if stack is not None:
        stack.sign_in(context)
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


NEW_CHAT_URL = re.compile(r"/chat$")
CHAT_URL = re.compile(r"/chat/[0-9a-f-]{36}$")


def send(page: Any, text: str) -> None:
    """Type a message in the composer and press Enter; the first message of a new
    conversation also waits for the conversation's own URL (the row exists from then)."""
    new = NEW_CHAT_URL.search(page.url) is not None
    box = page.get_by_test_id("composer-input")
    box.fill(text)
    box.press("Enter")
    if new:  # the conversation's URL, or the reason it was not sent
        page.wait_for_function(
            "() => /\\/chat\\/[0-9a-f-]{36}$/.test(location.pathname)"
            " || document.querySelector('[data-testid=composer-error]')"
        )


def session_uuid_of(page: Any) -> str:
    """The open conversation's uuid, from the URL."""
    found = CHAT_URL.search(page.url)
    assert found, f"not a conversation's URL: {page.url}"
    return found.group(0).rsplit("/", 1)[-1]


def new_chat(page: Any, stack: Stack) -> None:
    """Open a new, empty conversation (`/chat`: no row until the first message) and wait
    until its page is ready for typing: from a conversation of this stack's app, with the
    sidebar's "New conversation" button, as a person does; from anywhere else, by loading
    `/chat`. A full page load costs the browser about 1.1 CPU-s on the 2-core test machine,
    the button 0.15, and the settings page this used to start from 0.6 more."""
    from playwright.sync_api import expect

    # Only from a settled conversation page ("/" jumps to the latest conversation, and a
    # click racing that redirect would land in the wrong one).
    if page.url.startswith(f"{stack.url}/chat"):
        page.get_by_test_id("new-session").click()
    else:
        page.goto(f"{stack.url}/chat")
    expect(page).to_have_url(NEW_CHAT_URL)
    expect(page.get_by_test_id("composer-input")).to_be_editable()
    expect(page.get_by_test_id("message-user")).to_have_count(0)


def open_stored_chat(page: Any, stack: Any) -> str:
    """An empty conversation that is already stored (made over the HTTP API; the page's
    "New conversation" stores nothing until the first message), open in the page; its uuid.
    For tests that need the conversation's id (its workspace folder) before sending."""
    import httpx
    from playwright.sync_api import expect

    from tests.support.api import new_session

    with httpx.Client(base_url=stack.url, headers=stack.auth_headers, timeout=30) as client:
        session_uuid = new_session(client)
    page.goto(f"{stack.url}/chat/{session_uuid}")
    expect(page.get_by_test_id("composer-input")).to_be_editable()
    return session_uuid


PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


def shot(page: Any, name: str, *, full_page: bool = False) -> None:
    """Screenshots for a person to look at, in test-artifacts/: `name`.png at desktop size
    and `name`-phone.png at phone size (after the phone layout's drawer settles). Only with
    AGENT_CHAT_SCREENSHOTS=1: they assert nothing, and two sizes with the wait cost a second
    each, a minute of every suite run."""
    from tests.support.stack import ARTIFACTS

    if os.environ.get("AGENT_CHAT_SCREENSHOTS") != "1":
        return
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(700)
    page.screenshot(path=str(ARTIFACTS / f"{name}-phone.png"), full_page=full_page)
    page.set_viewport_size(DESKTOP)

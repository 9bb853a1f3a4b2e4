"""Debian's chromium for tests and benchmarks (never `playwright install` here), and the page
steps the browser tests share."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.support.stack import Stack

# Benchmarks measure Debian's full chromium, the browser a user runs, so their CPU figures are
# a user's. The browser tests use Debian's chromium-headless-shell (the same source, built
# headless only, what Playwright itself launches for headless): a page load there costs a third
# of the CPU (0.17 s against 0.55 s here) and the suite's browser files about a quarter less.
# AGENT_CHAT_TEST_CHROMIUM=/usr/bin/chromium runs the browser tests on full chromium instead.
CHROMIUM = "/usr/bin/chromium"
TEST_CHROMIUM = os.environ.get("AGENT_CHAT_TEST_CHROMIUM", "/usr/bin/chromium-headless-shell")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
PAGE_TIMEOUT_MS = 20_000
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
    context = browser.new_context(viewport=DESKTOP)
    try:
        if stack is not None:
            stack.sign_in(context)
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        with _watched(page, request):
            yield page
    finally:
        context.close()


def failed_so_far(request: Any) -> bool:
    """Whether the test of this fixture `request` failed so far (tests/e2e/conftest.py keeps
    each phase's report on the item)."""
    return any(
        getattr(getattr(request.node, f"rep_{when}", None), "failed", False)
        for when in ("setup", "call")
    )


@contextlib.contextmanager
def _watched(page: Any, request: Any) -> Iterator[None]:
    """Uncaught errors in the page fail the test; a failed test leaves a screenshot."""
    from tests.support.stack import ARTIFACTS

    errors: list[str] = []

    def on_error(exc: Any) -> None:
        errors.append(str(exc))

    page.on("pageerror", on_error)
    raised = False
    try:
        yield
    except BaseException as exc:  # the test fails inside a `with fresh_page(...)` block
        raised = not isinstance(exc, pytest.skip.Exception)
        raise
    finally:
        if (raised or failed_so_far(request)) and not page.is_closed():
            ARTIFACTS.mkdir(exist_ok=True)
            # One per page: a test with two tabs leaves both (the second "-failure-2.png").
            shots = request.node.__dict__.get("_failure_shots", 0) + 1
            request.node.__dict__["_failure_shots"] = shots
            suffix = "" if shots == 1 else f"-{shots}"
            with contextlib.suppress(Exception):  # never hide the test's own error
                page.screenshot(path=str(ARTIFACTS / f"{request.node.name}-failure{suffix}.png"))
        if not page.is_closed():
            page.remove_listener("pageerror", on_error)
    assert not errors, f"uncaught errors in the page: {errors}"


def _refuse(what: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"{what} cannot be undone on the page tests share: give this test its own "
            "context (tests.support.browser.fresh_page)"
        )

    return refuse


class KeptPage:
    """The page the browser tests of one test process share, handed from test to test: a
    first load of `/chat` in a new browser context cost the 2-core test machine 1.6 CPU-s
    (browser and app; a renderer process starts, every script is fetched and compiled
    again), in a kept page 0.8. Each test gets it on about:blank, signed in as its stack's
    administrator (or not), as a fresh page would be: between tests everything a test may
    change is put back (cookies, permissions, offline, routes, listeners, other pages,
    viewport, media, the origin's storage); what cannot be (init scripts, exposed functions)
    is refused on it. Its HTTP cache stays, as a person's browser's does (that is how a page
    opened from the cache after a logout showed up: auth/gate.py `REVALIDATE`). After a
    failed test, one that ends on another site, or for another stack, it is closed and a new
    one made."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self._context: Any = None
        self._page: Any = None
        self._stack: Any = None
        self._signed_in = True
        self._own: dict[Any, dict[str, list]] = {}  # Playwright's own listeners, per object

    @contextlib.contextmanager
    def page(self, request: Any, stack: Stack, *, signed_in: bool = True) -> Iterator[Any]:
        """The page for a test on `stack`: signed in as its administrator, or with no cookie
        (`signed_in=False`)."""
        from playwright.sync_api import Error as PlaywrightError

        page = self._take(stack, signed_in)
        kept = False
        try:
            with _watched(page, request):
                yield page
            if not failed_so_far(request) and not page.is_closed():
                try:
                    kept = self._tidy()
                except PlaywrightError:  # could not be put back: the next test gets a new one
                    kept = False
        finally:
            if not kept:
                self.close()

    def close(self) -> None:
        if self._context is not None:
            with contextlib.suppress(Exception):  # already closed with its browser
                self._context.close()
        self._context = self._page = self._stack = None
        self._own = {}

    def _take(self, stack: Stack, signed_in: bool) -> Any:
        if self._page is not None and (self._stack is not stack or self._signed_in != signed_in):
            self.close()
        if self._page is None:
            self._context = self.browser.new_context(viewport=DESKTOP)
            self._page = self._context.new_page()
            self._stack, self._signed_in = stack, signed_in
            for owner in (self._page, self._context):
                impl = owner._impl_obj
                self._own[owner] = {e: impl.listeners(e) for e in impl.event_names()}
                for name in ("add_init_script", "expose_binding", "expose_function"):
                    setattr(owner, name, _refuse(f"{type(owner).__name__}.{name}"))
        if signed_in:
            stack.sign_in(self._context)
        self._page.set_default_timeout(PAGE_TIMEOUT_MS)
        return self._page

    def _tidy(self) -> bool:
        """Put the page back as a new one; False when it cannot be (then it is closed)."""
        page, context, stack = self._page, self._context, self._stack
        for other in context.pages:
            if other != page:
                other.close()
        if page.url.startswith(stack.url):  # the only origin whose storage the app uses
            page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        elif page.url != "about:blank":
            return False
        for owner in (page, context):
            impl, own = owner._impl_obj, self._own[owner]
            for event in list(impl.event_names()):
                for listener in impl.listeners(event):
                    if listener not in own.get(event, ()):
                        impl.remove_listener(event, listener)
            owner.unroute_all(behavior="ignoreErrors")
        page.goto("about:blank")
        context.clear_cookies()
        context.clear_permissions()
        context.set_offline(False)
        context.set_extra_http_headers({})
        page.set_viewport_size(DESKTOP)
        page.emulate_media(
            media="null", color_scheme="null", reduced_motion="null", forced_colors="null"
        )
        return True


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

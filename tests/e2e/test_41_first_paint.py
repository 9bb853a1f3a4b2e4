"""The first HTML of `/chat/<uuid>` shows the owner's newest messages and conversation list
before the app runs, that of `/chat` the list (api/first_paint.py): only to its owner, its
text escaped, never cached; in the browser the layer is there before the app's state, gone
once the app shows what it pictures, and the page works as before (React's hydration of the
document keeps going, a message can be sent)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

from agent_chat import routes
from agent_chat.auth import COOKIE_NAME
from tests.support.accounts import ensure_member, session_cookie
from tests.support.browser import PHONE, fresh_page, new_chat, send, session_uuid_of
from tests.support.stack import ARTIFACTS, Stack, ensure_fake_model

pytestmark = pytest.mark.e2e

CAROL, CAROL_PASSWORD = "carol", "carol's own long password"
WORDS = "ibex meadow <b>plans</b>"


@pytest.fixture(scope="module")
def carol_cookie(stack: Stack) -> str:
    ensure_member(stack.db_url, CAROL, CAROL_PASSWORD)
    return session_cookie(stack.url, CAROL, CAROL_PASSWORD)


@pytest.fixture
def conversation(page: Page, stack: Stack) -> Iterator[str]:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, WORDS)
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("Echo: ibex meadow")
    yield session_uuid_of(page)


def _first_html(stack: Stack, session_uuid: str, **kwargs) -> httpx.Response:
    url = stack.url + routes.chat_url(session_uuid)
    # As a browser asks: compressed if it may, and revalidating what it has.
    headers = {"Accept-Encoding": "gzip, br", "If-Modified-Since": "Sat, 01 Jan 2050 00:00:00 GMT"}
    return httpx.get(url, headers=headers | kwargs.pop("headers", {}), timeout=30, **kwargs)


def test_the_first_html_holds_the_owners_last_messages_and_nobody_elses(
    conversation: str, stack: Stack, carol_cookie: str
) -> None:
    mine = _first_html(stack, conversation, headers=stack.auth_headers)
    assert mine.status_code == 200
    assert 'data-testid="first-paint"' in mine.text or "data-testid='first-paint'" in mine.text
    assert "Echo: ibex meadow &lt;b&gt;plans&lt;/b&gt;" in mine.text
    assert "<b>plans</b>" not in mine.text
    assert mine.headers["cache-control"] == "private, no-store"
    assert "etag" not in mine.headers and "last-modified" not in mine.headers
    # The app's own page around it, whole.
    assert mine.text.rstrip().endswith("</html>") and "entry.client" in mine.text

    theirs = _first_html(stack, conversation, cookies={COOKIE_NAME: carol_cookie})
    assert theirs.status_code in (200, 304)
    assert "ibex" not in theirs.text and "first-paint" not in theirs.text

    unknown = _first_html(stack, "00000000-0000-4000-8000-000000000000", headers=stack.auth_headers)
    assert "first-paint" not in unknown.text
    signed_out = _first_html(stack, conversation, follow_redirects=False)
    assert signed_out.status_code == 303 and "ibex" not in signed_out.text


def test_the_app_takes_over_from_the_first_paint(
    conversation: str, stack: Stack, browser: Browser, request: pytest.FixtureRequest
) -> None:
    url = stack.url + routes.chat_url(conversation)
    with fresh_page(browser, request, stack) as fresh:
        # Without its websocket the app never gets its state: what the first HTML paints.
        fresh.route_web_socket("**/_event/**", lambda ws: None)  # never answered
        fresh.goto(url)
        layer = fresh.get_by_test_id("first-paint")
        expect(layer).to_be_visible()
        expect(layer.get_by_test_id("first-paint-assistant")).to_contain_text("Echo: ibex")
        expect(layer.get_by_test_id("first-paint-user")).to_have_text(WORDS)
        expect(layer.locator(".fp-current")).to_contain_text("ibex meadow")
        fresh.wait_for_timeout(500)  # the bundle has run by now: still only the picture
        expect(layer).to_be_visible()
        expect(fresh.get_by_test_id("message-assistant")).to_have_count(0)
        ARTIFACTS.mkdir(exist_ok=True)
        fresh.screenshot(path=str(ARTIFACTS / "first-paint.png"))
        fresh.set_viewport_size(PHONE)
        expect(layer.get_by_test_id("first-paint-assistant")).to_be_in_viewport()
        fresh.screenshot(path=str(ARTIFACTS / "first-paint-phone.png"))

    with fresh_page(browser, request, stack) as fresh:
        fresh.goto(url)
        expect(fresh.get_by_test_id("message-assistant").last).to_contain_text("Echo: ibex")
        expect(fresh.get_by_test_id("first-paint")).to_have_count(0)
        send(fresh, "second words")
        expect(fresh.get_by_test_id("message-assistant").last).to_contain_text("Echo: second words")
        fresh.screenshot(path=str(ARTIFACTS / "first-paint-after.png"))


def test_a_new_conversation_paints_the_list_first(
    conversation: str, stack: Stack, browser: Browser, request: pytest.FixtureRequest
) -> None:
    url = stack.url + routes.NEW_CHAT
    with fresh_page(browser, request, stack) as fresh:
        fresh.route_web_socket("**/_event/**", lambda ws: None)  # never answered
        fresh.goto(url)
        layer = fresh.get_by_test_id("first-paint")
        expect(layer.get_by_test_id("first-paint-row").first).to_be_visible()
        expect(layer.get_by_test_id("first-paint-row")).to_contain_text(["ibex meadow"])
        expect(layer.locator(".fp-current")).to_have_count(0)
        fresh.wait_for_timeout(500)  # the app has rendered its empty list by now: not enough
        expect(layer).to_be_visible()
        fresh.screenshot(path=str(ARTIFACTS / "first-paint-new.png"))

    with fresh_page(browser, request, stack) as fresh:
        fresh.goto(url)
        expect(fresh.get_by_test_id("session-item").first).to_be_visible()
        expect(fresh.get_by_test_id("first-paint")).to_have_count(0)
        fresh.get_by_test_id("session-item").filter(has_text="ibex meadow").first.click()
        expect(fresh.get_by_test_id("message-assistant").last).to_contain_text("Echo: ibex")


def test_a_page_that_cannot_connect_says_so_over_the_first_paint(
    conversation: str, stack: Stack, browser: Browser, request: pytest.FixtureRequest
) -> None:
    url = stack.url + routes.chat_url(conversation)
    with fresh_page(browser, request, stack) as fresh:
        # As behind a proxy that refuses websockets: every connection attempt fails at once
        # (the app's websocket address pointed at a port where nothing listens).
        def refused(route: Route) -> None:
            body = route.fetch().text()
            body = re.sub(r"ws://[^`'\"]*/_event", "ws://127.0.0.1:9/_event", body)
            route.fulfill(body=body, content_type="text/javascript")

        fresh.route("**/assets/reflex-env-*.js", refused)
        fresh.goto(url)
        layer = fresh.get_by_test_id("first-paint")
        expect(layer.get_by_test_id("first-paint-assistant")).to_contain_text("Echo: ibex")
        toast = fresh.locator("[data-sonner-toast]").filter(has_text="Cannot connect")
        expect(toast).to_be_visible(timeout=20_000)
        # The app's message is on top (what a click there would reach, once it has slid in),
        # the conversation still readable under it.
        toast.click(trial=True, timeout=5_000)
        expect(layer.get_by_test_id("first-paint-assistant")).to_be_visible()
        fresh.screenshot(path=str(ARTIFACTS / "first-paint-cannot-connect.png"))

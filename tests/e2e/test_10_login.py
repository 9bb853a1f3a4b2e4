"""`AGENT_CHAT_PASSWORD` puts the whole app behind a login page (issue 7 §5): pages redirect to
it, wrong passwords show an error and are rate-limited, the right one opens the app, and the
API and the `/_event` websocket refuse a browser without the session cookie.

This module starts a stack of its own with the password set. The tests run in file order and
share the rate limiter (every client here is 127.0.0.1): the rate-limit test comes last.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.browser import fresh_page, new_chat, send
from tests.support.stack import ARTIFACTS, Stack, ensure_fake_model, running_stack

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse battery staple"
WEBSOCKET_PROBE = """url => new Promise(resolve => {
    const socket = new WebSocket(url);
    socket.onopen = () => { socket.close(); resolve("open"); };
    socket.onerror = () => resolve("refused");
    setTimeout(() => resolve("no answer"), 8000);
})"""


@pytest.fixture(scope="module")
def login_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Fake model, bridge and app (its own build folder) with a password."""
    env = {
        "AGENT_CHAT_PASSWORD": PASSWORD,
        "AGENT_CHAT_SECRET": "e2e-login-secret",  # keeps the repository's data/ untouched
    }
    with running_stack(tmp_path_factory.mktemp("e2e-login"), token_delay=0.01, env=env) as stack:
        yield stack


@pytest.fixture
def page(browser: Browser, login_stack: Stack, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh browser context (no cookie) for each test."""
    with fresh_page(browser, request) as page:
        yield page


def log_in(page: Page, password: str) -> None:
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()


def test_the_chat_page_redirects_to_login_and_a_wrong_password_shows_the_error(
    page: Page, login_stack: Stack
) -> None:
    page.goto(f"{login_stack.url}/chat/0b7e3c1e-0000-4000-8000-000000000000")
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fchat%2F0b7e3c1e-"))
    expect(page).to_have_title("Sign in · Agent Chat")
    expect(page.get_by_label("Password")).to_be_focused()
    expect(page.get_by_test_id("login-error")).to_be_hidden()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "login-page.png"))

    log_in(page, "wrong")
    expect(page.get_by_test_id("login-error")).to_have_text("Wrong password.")
    expect(page.get_by_test_id("login-password")).to_have_attribute("aria-invalid", "true")
    page.screenshot(path=str(ARTIFACTS / "login-page-error.png"))


def test_the_right_password_opens_the_app_and_the_chat_works(
    page: Page, login_stack: Stack
) -> None:
    page.goto(f"{login_stack.url}/settings/models")
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fsettings%2Fmodels$"))
    log_in(page, PASSWORD)  # also resets the wrong-password count of the test before
    # (The static server then adds a trailing slash to this prerendered page.)
    expect(page).to_have_url(re.compile(rf"^{login_stack.url}/settings/models/?$"))
    cookie = next(c for c in page.context.cookies() if c["name"] == "agent_chat_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"

    ensure_fake_model(page, login_stack)
    new_chat(page, login_stack)
    send(page, "Hello behind the login")
    # The first answer of a fresh stack waits for hermes to build its first agent: slow under load.
    expect(page.get_by_test_id("message-assistant")).to_contain_text(
        "Echo: Hello behind the login", timeout=60_000
    )
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")
    # With the cookie the websocket opens (the control for the refusal test below).
    ws_url = login_stack.url.replace("http", "ws") + "/_event/?EIO=4&transport=websocket"
    assert page.evaluate(WEBSOCKET_PROBE, ws_url) == "open"

    page.get_by_test_id("logout").click()
    expect(page).to_have_url(f"{login_stack.url}/login")
    page.goto(f"{login_stack.url}/")
    expect(page).to_have_url(f"{login_stack.url}/login")


def test_the_api_and_the_websocket_refuse_a_browser_without_the_cookie(
    page: Page, login_stack: Stack
) -> None:
    response = httpx.get(f"{login_stack.url}/api/chat/sessions/x/export?format=md")
    assert response.status_code == 401
    assert response.json() == {"detail": "Login required"}

    page.goto(f"{login_stack.url}/login")
    ws_url = login_stack.url.replace("http", "ws") + "/_event/?EIO=4&transport=websocket"
    assert page.evaluate(WEBSOCKET_PROBE, ws_url) == "refused"
    assert page.request.get(f"{login_stack.url}/api/chat/sessions/x/export").status == 401


def test_six_wrong_passwords_give_the_rate_limit_message(page: Page, login_stack: Stack) -> None:
    """Last in the file: it blocks 127.0.0.1 for 15 minutes."""
    page.goto(f"{login_stack.url}/login")
    for _ in range(5):
        log_in(page, "guess")
        expect(page.get_by_test_id("login-error")).to_have_text("Wrong password.")
    log_in(page, "guess")
    expect(page.get_by_test_id("login-error")).to_have_text(
        "Too many wrong passwords. Try again in 15 minutes."
    )
    log_in(page, PASSWORD)  # refused too while blocked
    expect(page.get_by_test_id("login-error")).to_contain_text("Too many wrong passwords")
    expect(page).to_have_url(f"{login_stack.url}/login")
    response = httpx.post(f"{login_stack.url}/api/login", json={"password": "guess"})
    assert response.status_code == 429
    assert 0 < int(response.headers["retry-after"]) <= 900

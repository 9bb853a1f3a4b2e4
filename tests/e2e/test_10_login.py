"""Accounts in the browser: the first visit asks for the administrator,
wrong passwords show the error, a disabled user is refused, "Log out everywhere" closes the
other browser's websocket, the account page changes the password, the API and the websocket
refuse a browser without a session, wrong passwords are rate-limited, and an install from
before accounts (AGENT_CHAT_PASSWORD) keeps every conversation and its password.

This module starts a stack of its own with no administrator configured. The tests run in
file order and share it: setup first, the rate limit and the migration last.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from agent_chat.db import users
from agent_chat.db.engine import make_engine, open_session
from tests.support.browser import CHAT_URL, KeptPage, fresh_page, new_chat, send, shot
from tests.support.stack import Stack, ensure_fake_model, running_stack

pytestmark = pytest.mark.e2e

ADMIN, PASSWORD, NEW_PASSWORD = "ada", "correct horse battery staple", "a brand new password"
OLD_SHARED_PASSWORD = "the old shared password"
WEBSOCKET_PROBE = """url => new Promise(resolve => {
    const socket = new WebSocket(url);
    socket.onopen = () => { socket.close(); resolve("open"); };
    socket.onerror = () => resolve("refused");
    setTimeout(() => resolve("no answer"), 8000);
})"""


@pytest.fixture(scope="module")
def login_stack(tmp_path_factory: pytest.TempPathFactory, shared_stack: Stack) -> Iterator[Stack]:
    """Fake model and app (its own database) without an administrator yet, on the shared
    stack's bridge."""
    env = {"AGENT_CHAT_ADMIN_USER": "", "AGENT_CHAT_ADMIN_PASSWORD": ""}
    tmp = tmp_path_factory.mktemp("e2e-login")
    with running_stack(tmp, token_delay=0.01, env=env, bridge_of=shared_stack) as stack:
        yield stack


@pytest.fixture
def page(kept_page: KeptPage, login_stack: Stack, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A page with no cookie for each test (the process's kept page, put back between tests:
    tests/support/browser.py)."""
    with kept_page.page(request, login_stack, signed_in=False) as page:
        yield page


def log_in(page: Page, username: str, password: str) -> None:
    page.get_by_test_id("login-username").fill(username)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()


def add_user(stack: Stack, username: str, password: str, *, disabled: bool = False) -> None:
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            user = users.create_user(session=session, username=username, password=password)
            if disabled:
                users.set_disabled(session=session, user_id=user.id, disabled=True)
    finally:
        engine.dispose()


def test_the_first_visit_creates_the_administrator(page: Page, login_stack: Stack) -> None:
    page.goto(f"{login_stack.url}/chat/0b7e3c1e-0000-4000-8000-000000000000")
    expect(page).to_have_url(f"{login_stack.url}/setup")
    expect(page).to_have_title("Set up · Agent Chat")
    expect(page.get_by_test_id("setup-error")).to_be_hidden()
    shot(page, "setup-page")
    page.get_by_test_id("setup-username").fill("bad name")
    page.get_by_test_id("setup-password").fill(PASSWORD)
    page.get_by_test_id("setup-submit").click()
    expect(page.get_by_test_id("setup-error")).to_contain_text("letters, digits")
    expect(page.get_by_test_id("setup-username")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_test_id("setup-password")).not_to_have_attribute("aria-invalid", "true")
    shot(page, "setup-page-error")
    page.get_by_test_id("setup-username").fill(ADMIN)
    page.get_by_test_id("setup-display-name").fill("Ada Lovelace")
    page.get_by_test_id("setup-password").fill(PASSWORD)
    page.get_by_test_id("setup-submit").click()
    # Signed in straight away; the sidebar says who.
    expect(page.get_by_test_id("signed-in-as")).to_have_text("Ada Lovelace")
    cookie = next(c for c in page.context.cookies() if c["name"] == "agent_chat_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
    assert httpx.get(f"{login_stack.url}/setup").status_code == 404


def test_a_wrong_password_shows_the_error_and_the_right_one_opens_the_app(
    page: Page, login_stack: Stack
) -> None:
    page.goto(f"{login_stack.url}/settings/models")
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fsettings%2Fmodels$"))
    expect(page).to_have_title("Sign in · Agent Chat")
    expect(page.get_by_label("Username")).to_be_focused()
    expect(page.get_by_test_id("login-error")).to_be_hidden()
    shot(page, "login-page")
    log_in(page, ADMIN, "wrong")
    expect(page.get_by_test_id("login-error")).to_have_text("Wrong username or password.")
    expect(page.get_by_test_id("login-password")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_test_id("login-username")).to_have_value(ADMIN)  # kept
    shot(page, "login-page-error")

    log_in(page, ADMIN.upper(), PASSWORD)
    expect(page).to_have_url(re.compile(rf"^{login_stack.url}/settings/models/?$"))
    ensure_fake_model(page, login_stack)
    new_chat(page, login_stack)
    send(page, "Hello behind the login")
    # The first answer of a fresh stack waits for hermes to build its first agent.
    expect(page.get_by_test_id("message-assistant")).to_contain_text(
        "Echo: Hello behind the login", timeout=60_000
    )
    ws_url = login_stack.url.replace("http", "ws") + "/_event/?EIO=4&transport=websocket"
    assert page.evaluate(WEBSOCKET_PROBE, ws_url) == "open"
    # "/" opened while signed in is in the browser's cache now: after the logout it must
    # still ask the server, which sends it to the login page.
    page.goto(f"{login_stack.url}/")
    expect(page).to_have_url(CHAT_URL)

    open_account_menu(page)
    page.get_by_test_id("logout").click()
    expect(page).to_have_url(f"{login_stack.url}/login")
    page.goto(f"{login_stack.url}/")
    expect(page).to_have_url(f"{login_stack.url}/login")


def test_a_disabled_user_cannot_sign_in(page: Page, login_stack: Stack) -> None:
    add_user(login_stack, "dora", "doras-password", disabled=True)
    page.goto(f"{login_stack.url}/login")
    log_in(page, "dora", "doras-password")
    expect(page.get_by_test_id("login-error")).to_have_text(
        "This account is disabled. Ask an administrator."
    )
    expect(page).to_have_url(f"{login_stack.url}/login")


def open_account_menu(page: Page) -> None:
    """The sidebar's account menu, once the page is live: the signed-in name comes with the
    state, so the menu's trigger has its handler (a click on the prerendered button before
    hydration opens nothing: CI at load 9 did exactly that)."""
    expect(page.get_by_test_id("signed-in-as")).not_to_have_text("")
    page.get_by_test_id("account-menu").click()
    expect(page.get_by_test_id("logout-all")).to_be_visible()


def test_logging_out_everywhere_closes_the_other_browsers_websocket(
    page: Page, browser: Browser, login_stack: Stack, request: pytest.FixtureRequest
) -> None:
    with fresh_page(browser, request) as other:
        closed: list[str] = []
        other.on("websocket", lambda ws: ws.on("close", lambda ws: closed.append(ws.url)))
        other.goto(f"{login_stack.url}/login?next=/settings/models")
        log_in(other, ADMIN, PASSWORD)
        expect(other.get_by_role("heading", name="Models")).to_be_visible()
        expect(other.get_by_test_id("signed-in-as")).to_have_text("Ada Lovelace")
        assert closed == []

        page.goto(f"{login_stack.url}/login?next=/settings/models")
        log_in(page, ADMIN, PASSWORD)
        open_account_menu(page)
        page.get_by_test_id("logout-all").click()
        expect(page).to_have_url(f"{login_stack.url}/login")
        # The other browser did nothing, yet its socket is closed (checked every 2 s).
        deadline = time.monotonic() + 10
        while not closed and time.monotonic() < deadline:
            other.wait_for_timeout(200)
        assert closed, "the other browser's websocket stayed open"
        other.reload()
        expect(other).to_have_url(re.compile(r"/login\?next="))


def test_the_account_page_changes_the_password(
    page: Page, browser: Browser, login_stack: Stack, request: pytest.FixtureRequest
) -> None:
    with fresh_page(browser, request) as other:
        other.goto(f"{login_stack.url}/login?next=/settings/models")
        log_in(other, ADMIN, PASSWORD)
        expect(other.get_by_role("heading", name="Models")).to_be_visible()

        page.goto(f"{login_stack.url}/login?next=/settings/account")
        log_in(page, ADMIN, PASSWORD)
        expect(page.get_by_role("heading", name="Account")).to_be_visible()
        name = page.get_by_test_id("account-display-name")
        expect(name).to_have_value("Ada Lovelace")
        expect(name).to_be_editable()
        shot(page, "account-page")
        page.get_by_test_id("account-current-password").fill("not it")
        page.get_by_test_id("account-new-password").fill(NEW_PASSWORD)
        page.get_by_test_id("account-save").click()
        expect(page.get_by_test_id("account-message")).to_have_text(
            "The current password is wrong."
        )
        name.fill("Ada King")
        page.get_by_test_id("account-current-password").fill(PASSWORD)
        page.get_by_test_id("account-new-password").fill(NEW_PASSWORD)
        page.get_by_test_id("account-save").click()
        expect(page.get_by_test_id("account-message")).to_contain_text("new password is set")
        expect(page.get_by_test_id("signed-in-as")).to_have_text("Ada King")
        shot(page, "account-page-saved")
        # This browser stays signed in; the other one is signed out.
        page.reload()
        expect(page.get_by_role("heading", name="Account")).to_be_visible()
        other.reload()
        expect(other).to_have_url(re.compile(r"/login\?next="))
        log_in(other, ADMIN, PASSWORD)
        expect(other.get_by_test_id("login-error")).to_have_text("Wrong username or password.")
        log_in(other, ADMIN, NEW_PASSWORD)
        expect(other.get_by_role("heading", name="Models")).to_be_visible()


def test_the_api_and_the_websocket_refuse_a_browser_without_a_session(
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
    """Near the end: it blocks the account for 15 minutes."""
    add_user(login_stack, "eve", "eves-password")
    page.goto(f"{login_stack.url}/login")
    for _ in range(5):
        log_in(page, "eve", "guess")
        expect(page.get_by_test_id("login-error")).to_have_text("Wrong username or password.")
    log_in(page, "eve", "guess")
    expect(page.get_by_test_id("login-error")).to_have_text(
        "Too many wrong passwords. Try again in 15 minutes."
    )
    log_in(page, "eve", "eves-password")  # refused too while blocked
    expect(page.get_by_test_id("login-error")).to_contain_text("Too many wrong passwords")
    response = httpx.post(
        f"{login_stack.url}/api/login", json={"username": "eve", "password": "guess"}
    )
    assert response.status_code == 429
    assert 0 < int(response.headers["retry-after"]) <= 900


def test_an_install_from_before_accounts_keeps_its_conversations_and_password(
    page: Page, login_stack: Stack
) -> None:
    """Last: the app goes back to a password-only install (the schema before accounts,
    conversations, AGENT_CHAT_PASSWORD) and is started again on it."""
    from tests.support.api import new_session
    from tests.support.databases import BEFORE_ACCOUNTS, alembic_config

    with httpx.Client(base_url=login_stack.url, timeout=30) as client:
        cookie = client.post("/api/login", json={"username": ADMIN, "password": NEW_PASSWORD})
        assert cookie.status_code == 200
        made = {new_session(client, title=f"kept {n}") for n in range(3)}
    login_stack.stop_app()
    from alembic import command

    command.downgrade(alembic_config(login_stack.db_url), BEFORE_ACCOUNTS)  # no user, no session
    login_stack.env["AGENT_CHAT_PASSWORD"] = OLD_SHARED_PASSWORD
    login_stack.start_app()
    assert "created administrator 'admin'" in (login_stack.tmp / "app.log").read_text()

    page.goto(f"{login_stack.url}/")
    expect(page).to_have_url(f"{login_stack.url}/login")
    log_in(page, "admin", OLD_SHARED_PASSWORD)
    for title in ("kept 0", "kept 1", "kept 2"):
        expect(page.get_by_test_id("session-item").filter(has_text=title)).to_be_visible()
    shown = page.get_by_test_id("session-item").evaluate_all(
        "items => items.map(item => item.dataset.sessionId)"
    )
    assert made <= set(shown)

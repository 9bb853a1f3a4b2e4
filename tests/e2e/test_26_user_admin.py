"""Roles in the browser: the administrator creates a member on
/settings/users; the member, signed in in a second browser context, cannot open the users
page nor change models (a read-only list; handlers called by name are refused on the
server); disabling the member closes their open page and keeps them out; a reset password
works at once; the last administrator cannot be demoted or disabled; an administrator
demoted while the users page is open is refused at their next click.

The stack is the shared one (its administrator from tests/support/accounts.py); every test
makes its own users, and none changes the administrator.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from sqlmodel import select

from agent_chat.auth import COOKIE_NAME
from agent_chat.db import model_configs, users
from agent_chat.db.engine import make_engine, open_session
from agent_chat.db.models import AppUser
from agent_chat.state.approvals import AlwaysAllowedState
from agent_chat.state.models import ModelsState
from agent_chat.state.users import UsersState
from tests.support.accounts import ADMIN_USER
from tests.support.browser import fresh_page, shot
from tests.support.handlers import call_handler
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e


def stored_user(stack: Stack, username: str):
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            return users.find_user(session=session, username=username)
    finally:
        engine.dispose()


def stored_admins(stack: Stack) -> list[str]:
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            found = session.exec(select(AppUser).where(AppUser.role == "admin")).all()
            return sorted(u.username for u in found if not u.disabled)
    finally:
        engine.dispose()


def stored_models(stack: Stack) -> list:
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            return model_configs.list_models(session=session)
    finally:
        engine.dispose()


def log_in(page: Page, stack: Stack, username: str, password: str, next_path: str) -> None:
    page.goto(f"{stack.url}/login?next={next_path}")
    page.get_by_test_id("login-username").fill(username)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()


def row(page: Page, username: str):
    return page.locator(f'[data-testid="user-row"][data-username="{username}"]')


def open_users(page: Page, stack: Stack) -> None:
    page.goto(f"{stack.url}/settings/users")
    expect(row(page, ADMIN_USER)).to_be_visible()


def create_user(page: Page, username: str, password: str, role: str = "member") -> None:
    page.get_by_test_id("user-new").click()
    page.get_by_test_id("user-username").fill(username)
    page.get_by_test_id("user-display-name").fill(username.title() + " Person")
    page.get_by_test_id("user-password").fill(password)
    if role == "admin":
        page.get_by_test_id("user-role").click()
        page.get_by_role("option", name="Administrator").click()
    page.get_by_test_id("user-save").click()
    expect(row(page, username)).to_be_visible()
    expect(page.get_by_test_id("users-message")).to_contain_text(f"Added {username}")


def choose_role(page: Page, username: str, label: str) -> None:
    row(page, username).get_by_test_id("user-role-select").click()
    page.get_by_role("option", name=label).click()


@pytest.fixture
def member(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A second browser context, not signed in."""
    with fresh_page(browser, request) as other:
        yield other


def test_the_admin_creates_a_member_who_cannot_manage(
    page: Page, member: Page, stack: Stack
) -> None:
    ensure_fake_model(page, stack)
    open_users(page, stack)
    expect(page.get_by_test_id("settings-nav-users")).to_be_visible()
    expect(row(page, ADMIN_USER).get_by_test_id("user-role-cell")).to_have_text("administrator")
    expect(page.get_by_text("never deleted")).to_be_visible()

    # Refusals in the form: a short password, then a taken username; nothing is made.
    page.get_by_test_id("user-new").click()
    page.get_by_test_id("user-username").fill("mia")
    page.get_by_test_id("user-password").fill("short")
    page.get_by_test_id("user-save").click()
    expect(page.get_by_test_id("user-password-error")).to_have_text("Use at least 8 characters.")
    shot(page, "users-form-error", full_page=True)
    page.get_by_test_id("user-username").fill(ADMIN_USER.upper())
    page.get_by_test_id("user-password").fill("long enough")
    page.get_by_test_id("user-save").click()
    expect(page.get_by_test_id("user-username-error")).to_have_text("That username is taken.")
    assert stored_user(stack, "mia") is None
    page.get_by_test_id("user-cancel").click()

    create_user(page, "mia", "mias-password")
    mia = row(page, "mia")
    expect(mia).to_contain_text("Mia Person")
    expect(mia.get_by_test_id("user-role-cell")).to_have_text("member")
    expect(mia.get_by_test_id("user-status")).to_have_text("active")
    expect(mia).to_contain_text("never")  # no sign-in yet
    shot(page, "users-page", full_page=True)

    # The member signs in in another browser: no Users link, the page says no, no data.
    log_in(member, stack, "mia", "mias-password", "/settings/users")
    expect(member.get_by_test_id("users-admins-only")).to_be_visible()
    expect(member.get_by_test_id("users-admins-only")).to_contain_text("Administrators only")
    expect(member.get_by_test_id("settings-nav-models")).to_be_visible()
    expect(member.get_by_test_id("settings-nav-users")).to_have_count(0)
    expect(member.get_by_test_id("user-row")).to_have_count(0)
    expect(member.get_by_test_id("user-new")).to_have_count(0)
    shot(member, "users-page-member", full_page=True)

    # Models: a read-only list, no key, no edit buttons, no form.
    member.get_by_test_id("settings-nav-models").click()
    expect(member.get_by_test_id("model-card")).to_have_count(len(stored_models(stack)))
    expect(member.get_by_test_id("models-intro")).to_contain_text("Administrators add")
    card = member.get_by_test_id("model-card").first
    expect(card).to_contain_text("Fake model")
    expect(card.get_by_role("button")).to_have_count(0)
    expect(member.get_by_test_id("model-save")).to_have_count(0)
    expect(member.get_by_test_id("model-name")).to_have_count(0)
    shot(member, "models-page-member", full_page=True)

    # Handlers called by name with the member's session: refused on the server.
    cookie = next(c["value"] for c in member.context.cookies() if c["name"] == COOKIE_NAME)
    model = stored_models(stack)[0]
    refused = call_handler(
        stack.url,
        cookie,
        f"{ModelsState.get_full_name()}.delete",
        {"model_id": model.id},
        until="Only an administrator",
    )
    assert "Only an administrator can add, change, test or delete models." in refused
    for handler, payload in (("make_default", {"model_id": model.id}), ("save", {}), ("test", {})):
        call_handler(
            stack.url,
            cookie,
            f"{ModelsState.get_full_name()}.{handler}",
            payload,
            until="Only an administrator can add, change, test or delete models.",
        )
    call_handler(
        stack.url,
        cookie,
        f"{AlwaysAllowedState.get_full_name()}.revoke",
        {"pattern": "recursive delete"},
        until="Only an administrator can revoke a rule.",
    )
    assert [m.id for m in stored_models(stack)] == [model.id]
    mia_row = stored_user(stack, "mia")
    answer = call_handler(
        stack.url,
        cookie,
        f"{UsersState.get_full_name()}.set_role",
        {"user_id": mia_row.id, "role": "admin"},
        path="/settings/users/",
        until="Administrators only",
    )
    assert "mia is now" not in answer and '"last_login"' not in answer  # no user row sent
    assert stored_user(stack, "mia").role == "member"
    call_handler(
        stack.url,
        cookie,
        f"{UsersState.get_full_name()}.load",
        {},
        path="/settings/users/",
        until="Administrators only",
    )

    # The member still chooses among the models in the composer.
    member.goto(f"{stack.url}/chat")
    member.get_by_test_id("model-select").click()
    expect(member.get_by_role("option", name="Fake model")).to_be_visible()


def test_disabling_signs_the_member_out_and_a_reset_password_works(
    page: Page, member: Page, stack: Stack
) -> None:
    open_users(page, stack)
    create_user(page, "noah", "noahs-password")

    closed: list[str] = []
    member.on("websocket", lambda ws: ws.on("close", lambda ws: closed.append(ws.url)))
    log_in(member, stack, "noah", "noahs-password", "/settings/models")
    expect(member.get_by_role("heading", name="Models")).to_be_visible()
    expect(member.get_by_test_id("signed-in-as")).to_have_text("Noah Person")
    assert closed == []

    row(page, "noah").get_by_test_id("user-disable").click()
    expect(row(page, "noah").get_by_test_id("user-status")).to_have_text("disabled")
    expect(page.get_by_test_id("users-message")).to_contain_text("Disabled noah")
    # The member's open page did nothing, yet its socket is closed (checked every 2 s).
    deadline = time.monotonic() + 10
    while not closed and time.monotonic() < deadline:
        member.wait_for_timeout(200)
    assert closed, "the disabled member's websocket stayed open"
    member.reload()
    expect(member).to_have_url(re.compile(r"/login\?next="))
    log_in(member, stack, "noah", "noahs-password", "/")
    expect(member.get_by_test_id("login-error")).to_have_text(
        "This account is disabled. Ask an administrator."
    )

    # Enabled again, with a new password: the old one no longer works, the new one does.
    row(page, "noah").get_by_test_id("user-enable").click()
    expect(row(page, "noah").get_by_test_id("user-status")).to_have_text("active")
    row(page, "noah").get_by_test_id("user-reset").click()
    page.get_by_test_id("user-reset-password").fill("1234567")
    page.get_by_test_id("user-reset-save").click()
    expect(page.get_by_test_id("user-reset-error")).to_have_text("Use at least 8 characters.")
    shot(page, "users-reset-error", full_page=True)
    page.get_by_test_id("user-reset-password").fill("noahs-new-password")
    page.get_by_test_id("user-reset-save").click()
    expect(page.get_by_test_id("users-message")).to_contain_text("New password set for noah")
    expect(page.get_by_test_id("user-reset-password")).to_have_count(0)

    log_in(member, stack, "noah", "noahs-password", "/")
    expect(member.get_by_test_id("login-error")).to_have_text("Wrong username or password.")
    log_in(member, stack, "noah", "noahs-new-password", "/settings/account")
    expect(member.get_by_role("heading", name="Account")).to_be_visible()
    expect(member.get_by_test_id("signed-in-as")).to_have_text("Noah Person")
    page.reload()
    expect(row(page, "noah")).not_to_contain_text("never")  # the sign-in is listed


def test_the_last_administrator_stays_one(page: Page, stack: Stack) -> None:
    open_users(page, stack)
    assert stored_admins(stack) == [ADMIN_USER]  # the only one (the other tests make members)
    choose_role(page, ADMIN_USER, "Member")
    message = page.get_by_test_id("users-message")
    expect(message).to_contain_text("last active administrator")
    expect(row(page, ADMIN_USER).get_by_test_id("user-role-cell")).to_have_text("administrator")
    shot(page, "users-last-admin", full_page=True)
    row(page, ADMIN_USER).get_by_test_id("user-disable").click()
    expect(message).to_contain_text("cannot be disabled")
    admin = stored_user(stack, ADMIN_USER)
    assert admin.role == "admin" and not admin.disabled
    expect(row(page, ADMIN_USER).get_by_test_id("user-status")).to_have_text("active")


def test_an_admin_demoted_while_the_page_is_open_is_refused(
    page: Page, member: Page, stack: Stack
) -> None:
    open_users(page, stack)
    create_user(page, "olga", "olgas-password", role="admin")
    expect(row(page, "olga").get_by_test_id("user-role-cell")).to_have_text("administrator")
    log_in(member, stack, "olga", "olgas-password", "/settings/users")
    expect(row(member, ADMIN_USER)).to_be_visible()
    expect(member.get_by_test_id("settings-nav-users")).to_be_visible()

    choose_role(page, "olga", "Member")
    expect(row(page, "olga").get_by_test_id("user-role-cell")).to_have_text("member")
    # Olga's page still shows the table; her next click is checked and refused.
    expect(member.get_by_test_id("user-row")).not_to_have_count(0)
    member.get_by_test_id("user-new").click()
    expect(member.get_by_test_id("users-admins-only")).to_be_visible()
    expect(member.get_by_test_id("user-row")).to_have_count(0)
    expect(member.get_by_test_id("user-form")).to_have_count(0)
    assert stored_user(stack, "olga").role == "member"

"""Single sign-on in the browser: the login page's "Sign in with …" button
goes to a real OpenID provider (oidc-provider-mock, tests/support/oidc_provider.py), whose form
signs the person in and sends them back signed in to the app; signing in again finds the same
account; the admin claim makes an administrator; cancelling at the provider shows why on the
login page.

This module starts a provider and a stack of its own configured for it (AGENT_CHAT_OIDC_*).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from agent_chat.db import oidc, users
from agent_chat.db.engine import make_engine, open_session
from tests.support.browser import fresh_page, shot
from tests.support.oidc_provider import Provider, running_provider
from tests.support.stack import Stack, running_stack

pytestmark = pytest.mark.e2e

ADMIN_GROUP = "agent-chat-admins"


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    with running_provider(tmp_path_factory.mktemp("e2e-oidc-provider")) as provider:
        yield provider


@pytest.fixture(scope="module")
def sso_stack(
    tmp_path_factory: pytest.TempPathFactory, provider: Provider, shared_stack: Stack
) -> Iterator[Stack]:
    env = {
        "AGENT_CHAT_OIDC_ISSUER": provider.issuer,
        "AGENT_CHAT_OIDC_CLIENT_ID": "agent-chat",
        "AGENT_CHAT_OIDC_CLIENT_SECRET": "the client secret",
        "AGENT_CHAT_OIDC_NAME": "Example ID",
        "AGENT_CHAT_OIDC_ADMIN_CLAIM": "groups",
        "AGENT_CHAT_OIDC_ADMIN_VALUE": ADMIN_GROUP,
    }
    tmp = tmp_path_factory.mktemp("e2e-oidc")
    with running_stack(tmp, token_delay=0.01, env=env, bridge_of=shared_stack) as stack:
        yield stack


@pytest.fixture
def page(browser: Browser, sso_stack: Stack, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh browser context (no cookie); the provider's page loads no CDN stylesheet."""
    with fresh_page(browser, request) as page:
        page.route(re.compile(r"^https://"), lambda route: route.abort())
        yield page


def sign_in_at_the_provider(page: Page, stack: Stack, provider: Provider, sub: str) -> None:
    """From the app's login page: the button, then the provider's form as `sub`."""
    page.get_by_test_id("login-oidc").click()
    expect(page).to_have_url(re.compile(rf"^{re.escape(provider.issuer)}/oauth2/authorize\?"))
    page.locator("input[name=sub]").fill(sub)
    page.get_by_role("button", name="Authorize").click()


def open_account_menu(page: Page) -> None:
    expect(page.get_by_test_id("signed-in-as")).not_to_have_text("")
    page.get_by_test_id("account-menu").click()
    expect(page.get_by_test_id("logout")).to_be_visible()


def account(stack: Stack, username: str):
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            user = users.find_user(session=session, username=username)
            if user is None:
                return None, 0, users.count_users(session=session)
            identities = oidc.list_identities(session=session, user_id=user.id)
            return user, len(identities), users.count_users(session=session)
    finally:
        engine.dispose()


def test_sign_in_out_and_in_again_with_the_provider(
    page: Page, sso_stack: Stack, provider: Provider
) -> None:
    provider.set_claims(
        "grace-sub", preferred_username="Grace", name="Grace Hopper", email="grace@example.com"
    )
    page.goto(f"{sso_stack.url}/settings/models")
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fsettings%2Fmodels$"))
    button = page.get_by_test_id("login-oidc")
    expect(button).to_have_text("Sign in with Example ID")
    shot(page, "login-page-sso")

    sign_in_at_the_provider(page, sso_stack, provider, "grace-sub")
    expect(page).to_have_url(re.compile(rf"^{sso_stack.url}/settings/models/?$"))
    expect(page.get_by_test_id("signed-in-as")).to_have_text("Grace Hopper")
    grace, identities, count = account(sso_stack, "grace")
    assert grace is not None and grace.role == "member" and grace.password_hash is None
    assert identities == 1

    open_account_menu(page)
    page.get_by_test_id("logout").click()
    expect(page).to_have_url(f"{sso_stack.url}/login")
    page.goto(f"{sso_stack.url}/")
    expect(page).to_have_url(f"{sso_stack.url}/login")

    sign_in_at_the_provider(page, sso_stack, provider, "grace-sub")
    expect(page).to_have_url(re.compile(rf"^{sso_stack.url}/?$"))
    expect(page.get_by_test_id("signed-in-as")).to_have_text("Grace Hopper")
    again, identities, count_again = account(sso_stack, "grace")
    assert again is not None and again.id == grace.id and identities == 1
    assert count_again == count  # no second account


def test_the_admin_claim_makes_an_administrator(
    page: Page, sso_stack: Stack, provider: Provider
) -> None:
    provider.set_claims(
        "boss-sub", preferred_username="boss", name="The Boss", groups=[ADMIN_GROUP]
    )
    page.goto(f"{sso_stack.url}/settings/account")
    sign_in_at_the_provider(page, sso_stack, provider, "boss-sub")
    expect(page).to_have_url(re.compile(rf"^{sso_stack.url}/settings/account/?$"))
    expect(page.get_by_test_id("signed-in-as")).to_have_text("The Boss")
    expect(page.get_by_test_id("account-username")).to_have_text(
        "Signed in as boss (administrator)."
    )
    # No password to change for a single sign-on account: the page says so.
    expect(page.get_by_test_id("account-no-password")).to_be_visible()
    expect(page.get_by_test_id("account-current-password")).to_have_count(0)
    expect(page.get_by_test_id("account-display-name")).to_be_visible()
    shot(page, "account-page-sso")
    boss, _, _ = account(sso_stack, "boss")
    assert boss is not None and boss.role == "admin"


def test_cancelling_at_the_provider_shows_why(
    page: Page, sso_stack: Stack, provider: Provider
) -> None:
    page.goto(f"{sso_stack.url}/login")
    page.get_by_test_id("login-oidc").click()
    page.get_by_role("button", name="Deny").click()
    expect(page).to_have_url(re.compile(rf"^{sso_stack.url}/login\?sso_error=denied"))
    expect(page.get_by_test_id("login-error")).to_have_text(
        "Sign-in with Example ID was cancelled."
    )
    expect(page.get_by_test_id("login-oidc")).to_be_visible()  # try again from here
    shot(page, "login-page-sso-error")

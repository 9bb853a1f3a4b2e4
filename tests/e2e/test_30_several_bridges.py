"""Several bridges in the browser: the app on two bridge processes; the
settings page's "Agent services" lists both for an administrator, a bridge killed with
kill -9 shows unreachable with its error, a member sees nothing of it, and a conversation
still gets its answer from the other bridge."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from agent_chat.db import users
from agent_chat.db.engine import make_engine, open_session
from tests.support.bridge import bridge_process
from tests.support.browser import fresh_page, new_chat, send, shot
from tests.support.stack import Stack, ensure_fake_model, running_stack

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def second_bridge(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[subprocess.Popen, str]]:
    tmp = tmp_path_factory.mktemp("second-bridge")
    with bridge_process(tmp) as bridge:
        yield bridge


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, second_bridge: tuple[subprocess.Popen, str]
) -> Iterator[Stack]:
    """A stack of its own whose app uses its bridge and the second one."""
    tmp = tmp_path_factory.mktemp("two-bridges-stack")
    with running_stack(
        tmp,
        token_delay=0.02,
        env={"AGENT_CHAT_BRIDGE_DOWN_AFTER_S": "3"},
        bridges_also=[second_bridge[1]],
    ) as stack:
        yield stack


def row_of(page: Page, url: str):
    return page.get_by_test_id("bridge-row").filter(has_text=url)


def test_the_admin_sees_both_bridges_and_a_killed_one_unreachable(
    page: Page, stack: Stack, second_bridge: tuple[subprocess.Popen, str]
) -> None:
    process, second = second_bridge
    ensure_fake_model(page, stack)
    page.goto(f"{stack.url}/settings/models")
    expect(page.get_by_test_id("bridge-row")).to_have_count(2)
    page.get_by_test_id("bridges-refresh").click()
    for url in (stack.bridge_url, second):
        expect(row_of(page, url).get_by_test_id("bridge-state")).to_have_text("healthy")
        expect(row_of(page, url).get_by_test_id("bridge-runs")).to_contain_text("0 active")
    # How each isolates Workspace commands: the stack's has the profile, the second not.
    sandbox = row_of(page, stack.bridge_url).get_by_test_id("bridge-sandbox")
    expect(sandbox).to_have_text("Workspace commands: bubblewrap, no network")
    expect(row_of(page, second).get_by_test_id("bridge-sandbox")).to_have_count(0)
    page.get_by_test_id("bridges-section").scroll_into_view_if_needed()
    shot(page, "agent-services-healthy", full_page=True)

    process.send_signal(signal.SIGKILL)
    process.wait(10)
    page.get_by_test_id("bridges-refresh").click()
    dead = row_of(page, second)
    expect(dead.get_by_test_id("bridge-state")).to_have_text("unreachable")
    expect(dead.get_by_test_id("bridge-error")).to_contain_text("not reachable")
    expect(dead).to_contain_text("since")
    expect(row_of(page, stack.bridge_url).get_by_test_id("bridge-state")).to_have_text("healthy")
    page.get_by_test_id("bridges-section").scroll_into_view_if_needed()
    shot(page, "agent-services-one-down", full_page=True)

    # Chat goes on through the bridge that is left; no "not reachable" banner.
    new_chat(page, stack)
    send(page, "hello from the survivor")
    answer = page.get_by_test_id("message-assistant").last
    expect(answer.get_by_test_id("message-content")).to_contain_text(
        "Echo: hello from the survivor", timeout=30_000
    )
    expect(page.get_by_test_id("error-banner")).to_have_count(0)


def test_a_member_sees_no_agent_services(browser: Browser, stack: Stack, request) -> None:
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            if users.find_user(session=session, username="nina") is None:
                users.create_user(session=session, username="nina", password="ninas-password")
                session.commit()
    finally:
        engine.dispose()
    with fresh_page(browser, request) as member:
        member.goto(f"{stack.url}/login?next=/settings/models")
        member.get_by_test_id("login-username").fill("nina")
        member.get_by_test_id("login-password").fill("ninas-password")
        member.get_by_test_id("login-submit").click()
        expect(member.get_by_test_id("models-intro")).to_be_visible()
        expect(member.get_by_test_id("bridges-section")).to_have_count(0)
        expect(member.get_by_test_id("bridge-row")).to_have_count(0)

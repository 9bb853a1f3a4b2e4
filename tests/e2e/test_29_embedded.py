"""One-service hosting (AGENT_CHAT_BRIDGE=embedded) in a real browser: the
app alone, no bridge process and no second port; chat with the thinking panel, AskFor and a
reload mid-stream work as with a bridge of its own; a web restart ends a running answer
FAILED with the reason, and the settings page says that this is what a restart costs."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import fresh_page, send
from tests.support.processes import descendants, listening_ports
from tests.support.stack import ARTIFACTS, Stack, running_stack

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A stack of its own: the app with the bridge inside (the session's shared stack has a
    bridge process)."""
    tmp = tmp_path_factory.mktemp("embedded")
    with running_stack(tmp, token_delay=0.02, embedded=True) as stack:
        yield stack


def words_in(page: Page) -> list[str]:
    content = page.get_by_test_id("message-assistant").last.get_by_test_id("message-content")
    return re.findall(r"word\d+", content.inner_text())


def test_only_the_app_runs_and_its_port_serves_no_bridge(stack: Stack) -> None:
    assert stack.bridge is None and stack.app is not None
    assert descendants(stack.app.pid) == []
    # hermes' warm-up turn serves a throwaway endpoint on 127.0.0.1 for a moment; after it,
    # the app's port is the only one.
    deadline = time.monotonic() + 60
    while (ports := listening_ports(stack.app.pid)) != {stack.app_port}:
        assert time.monotonic() < deadline, f"the app listens on {ports}"
        time.sleep(0.5)
    # Signed in, the bridge's routes on the public port are the app's pages or 404s.
    with httpx.Client(base_url=stack.url, headers=stack.auth_headers, timeout=10) as client:
        for method, path in [("GET", "/health"), ("GET", "/memory"), ("POST", "/runs")]:
            reply = client.request(method, path, json={})
            assert reply.status_code not in (201, 401, 422), (path, reply.status_code)
            if reply.headers.get("content-type", "").startswith("application/json"):
                body = reply.json()
                assert not {"hermes_version", "memory", "run_id"} & set(body), (path, body)


def test_chat_streams_with_the_thinking_panel(chat: Page) -> None:
    page = chat
    send(page, "Please write a long answer long 120")
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant.get_by_test_id("message-content")).to_contain_text("word10")
    expect(page.get_by_test_id("stop-button")).to_be_visible()
    expect(assistant).to_have_attribute("data-status", "SUCCESS", timeout=30_000)
    expect(assistant.get_by_test_id("message-content")).to_contain_text("word120")

    send(page, "Make a todo plan delay=1")
    second = page.get_by_test_id("message-assistant").nth(1)
    todos = second.get_by_test_id("todo-item")
    expect(todos).to_have_count(3, timeout=15_000)
    expect(todos.nth(1)).to_have_attribute("data-status", "in_progress")
    expect(second.get_by_test_id("thinking-stream")).to_contain_text("Let me make a plan.")
    expect(second).to_have_attribute("data-status", "SUCCESS", timeout=20_000)
    expect(second.get_by_test_id("message-content")).to_have_text("Plan made.")
    expect(second.get_by_test_id("thinking-toggle")).to_contain_text("1/3 tasks")


def test_askfor_takes_a_choice(chat: Page) -> None:
    page = chat
    send(page, "Please ask me a question")
    expect(page.get_by_test_id("askfor-question")).to_have_text("Which color do you prefer?")
    expect(page.get_by_test_id("askfor-choice")).to_have_text(["red", "green", "blue"])
    expect(page.get_by_test_id("session-waiting")).to_be_visible()
    page.get_by_test_id("askfor-choice").filter(has_text="green").click()
    expect(page.get_by_test_id("askfor-panel")).to_have_count(0)
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    expect(assistant.get_by_test_id("message-content")).to_have_text("You chose green.")


def test_reload_mid_stream_and_the_answer_completes(chat: Page) -> None:
    page = chat
    send(page, "long 150 delay=0.03")
    expect(page.get_by_test_id("message-content").last).to_contain_text("word30")
    page.reload()
    expect(page.get_by_test_id("message-content").last).to_contain_text("word60")
    assert page.get_by_test_id("message-assistant").last.get_attribute("data-status") == "RUNNING"
    expect(page.get_by_test_id("message-assistant").last).to_have_attribute(
        "data-status", "SUCCESS"
    )
    assert words_in(page) == [f"word{i}" for i in range(1, 151)]


def test_a_web_restart_fails_the_running_answer_and_settings_say_so(
    chat: Page, stack: Stack, browser, request: pytest.FixtureRequest
) -> None:
    page = chat
    send(page, "ask me before the restart")
    expect(page.get_by_test_id("askfor-panel")).to_be_visible()
    chat_url = page.url

    stack.stop_app()
    stack.start_app()

    page.goto(chat_url)
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "FAILED")
    expect(assistant.get_by_test_id("message-error")).to_contain_text("agent service was restarted")
    expect(page.get_by_test_id("askfor-panel")).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "embedded-restart-failed.png"))
    send(page, "Still there?")
    second = page.get_by_test_id("message-assistant").nth(1)
    expect(second).to_have_attribute("data-status", "SUCCESS", timeout=40_000)
    expect(second.get_by_test_id("message-content")).to_have_text("Echo: Still there?")

    page.goto(f"{stack.url}/settings/models")
    note = page.get_by_test_id("hosting-note")
    expect(note).to_contain_text("Agents run inside this web app")
    expect(note).to_contain_text("ends as failed")
    note.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "embedded-settings-note.png"))
    with fresh_page(browser, request, stack) as phone:
        phone.set_viewport_size({"width": 390, "height": 844})
        phone.goto(f"{stack.url}/settings/models")
        phone.get_by_test_id("hosting-note").scroll_into_view_if_needed()
        expect(phone.get_by_test_id("hosting-note")).to_be_visible()
        phone.screenshot(path=str(ARTIFACTS / "embedded-settings-note-phone.png"))


def test_reset_stops_what_runs_through_the_app(chat: Page, stack: Stack) -> None:
    """The launcher's reset (between test files) has no bridge port to call here."""
    send(chat, "slow long 2000")
    expect(chat.get_by_test_id("message-content").last).to_contain_text("word5")
    stack.reset()
    chat.goto(f"{stack.url}/settings/models")
    expect(chat.get_by_test_id("session-item")).to_have_count(0)
    expect(chat.get_by_test_id("model-card")).to_have_count(0)


def test_a_workspace_command_sees_nothing_of_the_app_it_runs_in(stack: Stack) -> None:
    """Embedded, hermes spawns commands from the web process itself, whose environment
    holds the administrator's password: a Workspace command, in its sandbox,
    reads neither that process's environ nor the app's database file."""
    import json

    from tests.support.accounts import ADMIN_PASSWORD
    from tests.support.api import new_session, read_stream, start_run
    from tests.support.secrets import reveals
    from tests.support.stack import ensure_fake_model

    ensure_fake_model(None, stack)
    database = stack.db_url.removeprefix("sqlite:///")
    commands = [
        f"base64 -w0 /proc/{stack.app.pid}/environ",
        "for p in /proc/[0-9]*; do cat $p/environ; done | base64 -w0",
        f"base64 -w0 {database} | head -c 4000",
        "echo still works > made.txt && cat made.txt",
    ]
    calls = "\n".join(f"CALL terminal {json.dumps({'command': c})}" for c in commands)
    with httpx.Client(base_url=stack.url, headers=stack.auth_headers, timeout=120) as client:
        session = new_session(client)
        run = start_run(client, session, f"look around\n{calls}", tool_profile="workspace")
        read = read_stream(client, run["runId"])
    assert read.last().type == "run_completed", read.last()
    outputs = [e.data["result"] for e in read.events if e.type == "tool_end"]
    assert len(outputs) == 4 and "still works" in outputs[-1], outputs
    shown = "\n".join(outputs)
    assert not reveals(shown, ADMIN_PASSWORD) and not reveals(shown, b"SQLite format 3")
    assert "No such file" in outputs[0], outputs[0]

"""The app in Reflex's own several-worker mode: one port served by two
backend worker processes, as `reflex run --env prod` runs them with REFLEX_REDIS_URL
(granian, GRANIAN_WORKERS=2: tests/support/reflex_workers.py), all started at once on a
fresh PostgreSQL database, sharing one Redis (tests/support/workers.py).

Both workers start (one migrates, the other waits: db/engine.py:startup_lock) and serve
sockets; a chat works through it; a tab whose socket is on the other worker follows the run
live, every word once, and shows the running badge."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.browser import fresh_page, new_chat, send, session_uuid_of, shot
from tests.support.redis import restart_redis
from tests.support.stack import Stack, ensure_fake_model
from tests.support.workers import reflex_workers, socket_instance, worker_pids

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reflex-workers")


@pytest.fixture(scope="module")
def stack(folder: Path) -> Iterator[Stack]:
    with reflex_workers(folder, token_delay=0.02, workers=2) as stack:
        yield stack


def _token(page: Page) -> str:
    return page.evaluate("() => window.sessionStorage.getItem('token')")


def _instance(page: Page, stack: Stack) -> str:
    """The worker (Reflex's instance id) holding the tab's socket."""
    expect(page.get_by_test_id("new-session")).to_be_visible()
    for _ in range(50):  # the record is written as the socket connects
        found = socket_instance(stack.env["REFLEX_REDIS_URL"], _token(page) or "")
        if found:
            return found
        page.wait_for_timeout(100)
    raise AssertionError("the tab's socket is in no worker's record")


def test_two_workers_start_and_a_chat_goes_through(page: Page, stack: Stack) -> None:
    assert len(worker_pids(stack)) >= 2, "granian did not start two workers"
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "hello through Reflex's workers")
    answer = page.get_by_test_id("message-assistant").last
    expect(answer.get_by_test_id("message-content")).to_have_text(
        "Echo: hello through Reflex's workers", timeout=30_000
    )
    expect(answer).to_have_attribute("data-status", "SUCCESS")


def test_granian_serves_the_pages_as_the_tests_other_servers_do(page: Page, stack: Stack) -> None:
    """The other browser files run the app under uvicorn; production runs granian, whose
    static files go out as `http.response.pathsend` (a path, no bytes): every `/chat/<uuid>`
    once answered 500 under it while the suite passed."""
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "hello from granian")
    answer = page.get_by_test_id("message-assistant").last
    expect(answer.get_by_test_id("message-content")).to_have_text("Echo: hello from granian")
    conversation = session_uuid_of(page)
    with httpx.Client(base_url=stack.url, headers=stack.auth_headers, timeout=30) as client:
        html = client.get(f"/chat/{conversation}", headers={"Accept-Encoding": "gzip, br"})
        assert html.status_code == 200
        assert "data-testid='first-paint'" in html.text
        assert "Echo: hello from granian" in html.text
        assert html.text.rstrip().endswith("</html>")
        script = re.search(r'"(/assets/[^"]+\.js)"', html.text)
        assert script is not None, "no module script in the page"
        asset = client.get(script.group(1), headers={"Accept-Encoding": "br"})
        assert asset.status_code == 200 and asset.headers["content-encoding"] == "br"
        assert "immutable" in asset.headers["cache-control"]
        assert len(asset.content) > 0
        unknown = client.get("/chat/00000000-0000-4000-8000-000000000000")
        assert unknown.status_code == 200 and "first-paint" not in unknown.text


def test_a_tab_on_the_other_worker_follows_the_run(
    browser: Browser, page: Page, stack: Stack, request
) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    first = _instance(page, stack)
    # New tabs until one's socket lands on the other worker (the kernel hands out the
    # connections; each new tab is another draw).
    with fresh_page(browser, request, stack) as other:
        for _ in range(12):
            other.goto(f"{stack.url}/chat")  # a page with the live sidebar (its watcher)
            if _instance(other, stack) != first:
                break
            other.evaluate("() => window.sessionStorage.clear()")  # a new tab's token
        assert _instance(other, stack) != first, "every tab landed on one worker"
        send(page, "long 120 delay=0.03")
        chat = session_uuid_of(page)
        item = other.locator(f'[data-testid="session-item"][data-session-id="{chat}"]')
        expect(item.get_by_test_id("session-running")).to_be_visible()
        item.get_by_test_id("session-title").click()
        expect(other).to_have_url(re.compile(chat))
        assert _instance(other, stack) != first  # still the other worker
        answer = other.get_by_test_id("message-assistant").last
        expect(answer.get_by_test_id("message-content")).to_contain_text("word10")
        shot(page, "reflex-workers-first")
        shot(other, "reflex-workers-other")
        expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=40_000)
        words = re.findall(r"word\d+", answer.inner_text())
        assert words == [f"word{i}" for i in range(1, 121)]
        mine = page.get_by_test_id("message-assistant").last
        assert re.findall(r"word\d+", mine.inner_text()) == words


def test_a_redis_restart_mid_run_loses_nothing_the_tab_shows(
    page: Page, stack: Stack, folder: Path
) -> None:
    """Redis comes back empty while a tab follows a run: Reflex's states and socket records
    and the run's stream are gone. The tab goes on following (it reconnects and reloads what
    it shows), the answer arrives whole, every word once, and the next message works."""
    sockets: list[str] = []

    def opened(ws) -> None:  # noqa: ANN001
        sockets.append(ws.url)

    page.on("websocket", opened)  # the kept page goes on to other tests: removed below
    try:
        ensure_fake_model(page, stack)
        new_chat(page, stack)
        send(page, "long 150 delay=0.03")
        answer = page.get_by_test_id("message-assistant").last
        expect(answer.get_by_test_id("message-content")).to_contain_text("word10")
        restart_redis(stack.env["REFLEX_REDIS_URL"], folder / "redis")
        expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=60_000)
        words = re.findall(r"word\d+", answer.inner_text())
        assert words == [f"word{i}" for i in range(1, 151)]
        assert len(sockets) >= 2  # the tab reconnected (its worker closed its socket)
        send(page, "after the restart")
        expect(
            page.get_by_test_id("message-assistant").last.get_by_test_id("message-content")
        ).to_have_text("Echo: after the restart", timeout=30_000)
    finally:
        page.remove_listener("websocket", opened)

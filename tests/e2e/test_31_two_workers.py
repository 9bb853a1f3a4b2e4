"""Two web workers in the browser: two app processes on one PostgreSQL
database and one Redis (Reflex's state and token managers, the run bus and leases), two
bridges, a browser tab on each worker (tests/support/workers.py).

A tab on worker B follows a run a tab on worker A started (consumed by A): the same text,
status and end, nothing missing or doubled, B's sidebar badge says running, and B queues
behind it; a question is answered from the other worker's tab; `kill -9` of the consuming
worker mid-run: B takes the run over, its tab sees the answer complete, the log holds every
seq once, and A's tab after A's restart (a new token: Reflex's reassignment) shows it too;
`kill -9` of a bridge: its run FAILED with the reason on both workers, the next run lands on
the other bridge (test_30 covers that on one worker)."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from redis import Redis

from agent_chat.db.engine import make_engine
from tests.support.bridge import bridge_process
from tests.support.browser import fresh_page, new_chat, send, session_uuid_of, shot
from tests.support.stack import ARTIFACTS, Stack, ensure_fake_model
from tests.support.workers import TwoWorkers, two_workers

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def second_bridge(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[subprocess.Popen, str]]:
    tmp = tmp_path_factory.mktemp("workers-second-bridge")
    with bridge_process(tmp) as bridge:
        yield bridge


@pytest.fixture(scope="module")
def workers(
    tmp_path_factory: pytest.TempPathFactory, second_bridge: tuple[subprocess.Popen, str]
) -> Iterator[TwoWorkers]:
    with two_workers(
        tmp_path_factory.mktemp("two-workers"),
        token_delay=0.02,
        env={"AGENT_CHAT_BRIDGE_DOWN_AFTER_S": "3"},
        bridges_also=[second_bridge[1]],
    ) as both:
        yield both


@pytest.fixture
def tabs(browser: Browser, workers: TwoWorkers, request) -> Iterator[tuple[Page, Page]]:
    """A signed-in tab on worker A and one on worker B (contexts of their own)."""
    workers.restart(workers.a)  # a test before may have killed it
    with (
        fresh_page(browser, request, workers.a) as on_a,
        fresh_page(browser, request, workers.b) as on_b,
    ):
        ensure_fake_model(on_a, workers.a)
        yield on_a, on_b


def _words(text: str) -> list[str]:
    return re.findall(r"word\d+", text)


def _item(page: Page, session_uuid: str):
    return page.locator(f'[data-testid="session-item"][data-session-id="{session_uuid}"]')


def _open(page: Page, stack: Stack, session_uuid: str) -> None:
    page.goto(f"{stack.url}/chat/{session_uuid}")
    expect(page.get_by_test_id("composer-input")).to_be_editable()


def _run_row(stack: Stack, session_uuid: str) -> tuple[int, str, str | None]:
    """The conversation's newest answer: (id, run id, bridge url)."""
    engine = make_engine(stack.db_url)
    try:
        with engine.connect() as connection:
            row = connection.exec_driver_sql(
                "SELECT m.id, m.run_id, m.bridge_url FROM chat_message m "
                "JOIN chat_session s ON s.id = m.session_id "
                "WHERE s.session_uuid = %(u)s AND m.role = 'ASSISTANT' "
                "ORDER BY m.id DESC LIMIT 1",
                {"u": session_uuid},
            ).one()
    finally:
        engine.dispose()
    return row[0], row[1], row[2]


def _seqs(stack: Stack, message_id: int) -> list[int]:
    """Every seq stored for the answer (merged rows count each seq they hold)."""
    import json

    engine = make_engine(stack.db_url)
    try:
        with engine.connect() as connection:
            rows = connection.exec_driver_sql(
                "SELECT seq, meta_json FROM chat_message_log WHERE message_id = %(m)s ORDER BY seq",
                {"m": message_id},
            ).all()
    finally:
        engine.dispose()
    seqs: list[int] = []
    for seq, meta in rows:
        last = json.loads(meta or "{}").get("seq_to", seq)
        seqs.extend(range(seq, last + 1))
    return seqs


class _TabLog:
    """What a tab's websocket and console carried, for a failure message: a live answer that
    stays empty tells whether its text chunks (`acs(stream, offset, text)` scripts) reached
    the page, from offset 0, on which socket, and whether the socket reconnected or the tab
    got a new token."""

    CHUNK = re.compile(r'acs\(\\?"([a-z]\d+(?:-\d+)?)\\?",(\d+),')

    def __init__(self, page: Page) -> None:
        self.page = page
        self.t0 = time.monotonic()
        self.lines: list[str] = []
        page.on("websocket", self._socket)
        page.on("console", lambda msg: self._add(f"console {msg.type}: {msg.text[:200]}"))

    def _add(self, line: str) -> None:
        self.lines.append(f"{time.monotonic() - self.t0:6.2f} s {line}")

    def _socket(self, ws) -> None:
        self._add(f"socket open {ws.url.split('?')[0]}")
        ws.on("close", lambda _ws: self._add("socket closed"))
        ws.on("framereceived", self._frame)

    def _frame(self, payload) -> None:
        text = str(payload)
        chunks = self.CHUNK.findall(text)
        if chunks:
            self._add("chunks " + ", ".join(f"{sid}@{offset}" for sid, offset in chunks[:4]))
        elif "new_token" in text:
            self._add("new token")
        elif "run_id_rx_state_" in text:  # LiveState's vars: the follower's values
            found = re.search(r'"message_id_rx_state_":(\d+)', text)
            self._add(f"live vars (message_id {found.group(1) if found else '?'})")

    def report(self, stream_id: str) -> str:
        page = self.page.evaluate(
            """id => ({
                acs: typeof window.acs,
                held: window.agentChatStream ? agentChatStream.text(id) : null,
                token: sessionStorage.getItem("token"),
            })""",
            stream_id,
        )
        lines = self.lines if len(self.lines) <= 60 else [*self.lines[:40], "…", *self.lines[-20:]]
        return "\n".join(
            [
                f"the page: window.acs is {page['acs']}, token {page['token']}",
                f"the page's store holds for {stream_id}: {page['held']!r:.200}",
                *lines,
            ]
        )


def _consumer_pid(workers: TwoWorkers, run_id: str) -> int | None:
    """The pid of the worker holding the run's lease (runs/leases.py: host:pid:id)."""
    with Redis.from_url(workers.redis_url, decode_responses=True) as client:
        holder = client.get(f"agent_chat:run:{run_id}:lease")
    return int(holder.split(":")[1]) if holder else None


def test_a_tab_on_b_follows_a_run_a_consumes(tabs: tuple[Page, Page], workers: TwoWorkers) -> None:
    on_a, on_b = tabs
    new_chat(on_a, workers.a)
    send(on_a, "long 400 delay=0.03")  # 12 s
    chat = session_uuid_of(on_a)
    _open(on_b, workers.b, chat)
    message_id, run_id, _ = _run_row(workers.a, chat)
    assert workers.a.app is not None
    assert _consumer_pid(workers, run_id) == workers.a.app.pid  # A reads the bridge
    answer_b = on_b.get_by_test_id("message-assistant").last
    expect(answer_b.get_by_test_id("message-content")).to_contain_text("word20")
    expect(on_b.get_by_test_id("stop-button")).to_be_visible()  # running, on B
    expect(_item(on_b, chat).get_by_test_id("session-running")).to_be_visible()
    # B cannot start a second run there: Enter queues behind A's run.
    box = on_b.get_by_test_id("composer-input")
    box.fill("after that")
    box.press("Enter")
    expect(on_b.get_by_test_id("queued-message")).to_contain_text("after that")
    expect(on_b.get_by_test_id("composer-error")).to_have_count(0)
    shot(on_a, "two-workers-a-consumes")
    shot(on_b, "two-workers-b-follows")
    first = on_b.get_by_test_id("message-assistant").first
    expect(first).to_have_attribute("data-status", "SUCCESS", timeout=40_000)
    expected = [f"word{i}" for i in range(1, 401)]
    assert _words(first.inner_text()) == expected  # nothing missing or doubled on B
    assert _words(on_a.get_by_test_id("message-assistant").first.inner_text()) == expected
    seqs = _seqs(workers.a, message_id)
    assert seqs == list(range(1, seqs[-1] + 1))
    # The queued message went when A's run ended (A sent it), on both tabs.
    for tab in (on_a, on_b):
        expect(tab.get_by_test_id("message-assistant")).to_have_count(2, timeout=30_000)
        last = tab.get_by_test_id("message-assistant").last
        expect(last).to_contain_text("Echo: after that")
        expect(last).to_have_attribute("data-status", "SUCCESS")
    expect(on_b.get_by_test_id("queued-message")).to_have_count(0)
    expect(_item(on_b, chat).get_by_test_id("session-running")).to_have_count(0)
    shot(on_b, "two-workers-b-done")


def test_a_question_is_answered_from_the_other_worker(
    tabs: tuple[Page, Page], workers: TwoWorkers
) -> None:
    on_a, on_b = tabs
    new_chat(on_a, workers.a)
    send(on_a, "ask me")
    chat = session_uuid_of(on_a)
    expect(on_a.get_by_test_id("askfor-panel")).to_be_visible()
    _open(on_b, workers.b, chat)
    panel = on_b.get_by_test_id("askfor-panel")
    expect(panel).to_be_visible()
    expect(panel.get_by_test_id("askfor-question")).to_contain_text("Which color")
    expect(_item(on_b, chat).get_by_test_id("session-waiting")).to_be_visible()
    shot(on_b, "two-workers-b-question")
    panel.get_by_test_id("askfor-choice").filter(has_text="green").click()
    for tab in (on_a, on_b):
        answer = tab.get_by_test_id("message-assistant").last
        expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=30_000)
        expect(answer.get_by_test_id("message-content")).to_have_text("You chose green.")
        expect(tab.get_by_test_id("askfor-panel")).to_have_count(0)


def test_kill_9_of_the_consuming_worker_the_other_finishes_the_run(
    tabs: tuple[Page, Page], workers: TwoWorkers
) -> None:
    on_a, on_b = tabs
    new_chat(on_a, workers.a)
    send(on_a, "long 300 delay=0.03")  # 9 s of tokens
    chat = session_uuid_of(on_a)
    tab_log = _TabLog(on_b)
    _open(on_b, workers.b, chat)
    message_id, run_id, _ = _run_row(workers.a, chat)
    answer_b = on_b.get_by_test_id("message-assistant").last
    try:
        expect(answer_b.get_by_test_id("message-content")).to_contain_text("word40")
    except AssertionError as exc:
        # The fixture's failure screenshot is A's (both tabs write one name, A's last).
        ARTIFACTS.mkdir(exist_ok=True)
        on_b.screenshot(path=str(ARTIFACTS / "two-workers-kill-tab-b-failure.png"))
        status = answer_b.get_attribute("data-status")
        raise AssertionError(
            f"{exc}\nthe answer's status: {status}\n{tab_log.report(f'a{message_id}-0')}"
        ) from None
    assert workers.a.app is not None and _consumer_pid(workers, run_id) == workers.a.app.pid
    workers.kill(workers.a)
    killed = time.monotonic()
    # B takes the run over (its lease expired) and its tab sees every word, once.
    expect(answer_b).to_have_attribute("data-status", "SUCCESS", timeout=60_000)
    took_s = time.monotonic() - killed
    assert workers.b.app is not None
    assert _words(answer_b.inner_text()) == [f"word{i}" for i in range(1, 301)]
    seqs = _seqs(workers.b, message_id)
    assert seqs == list(range(1, seqs[-1] + 1))  # every seq once: no gap, no duplicate
    shot(on_b, "two-workers-b-after-a-died")
    assert took_s < 30, f"the run ended {took_s:.1f} s after the kill"
    # A comes back; its tab reconnects (Reflex gives it a new token: the dead worker's
    # socket record is still in Redis) and loads the conversation afresh.
    workers.restart(workers.a)
    answer_a = on_a.get_by_test_id("message-assistant").last
    expect(answer_a).to_have_attribute("data-status", "SUCCESS", timeout=60_000)
    assert _words(answer_a.inner_text()) == [f"word{i}" for i in range(1, 301)]
    expect(on_a.get_by_test_id("signed-in-as")).to_have_text("Administrator")
    shot(on_a, "two-workers-a-after-restart")


def test_kill_9_of_a_bridge_fails_its_run_and_the_next_goes_to_the_other(
    tabs: tuple[Page, Page], workers: TwoWorkers, second_bridge: tuple[subprocess.Popen, str]
) -> None:
    on_a, on_b = tabs
    new_chat(on_a, workers.a)
    send(on_a, "long 400 delay=0.05")
    chat = session_uuid_of(on_a)
    _open(on_b, workers.b, chat)
    expect(on_b.get_by_test_id("message-content").last).to_contain_text("word5")
    _, _, bridge_url = _run_row(workers.a, chat)
    process, second_url = second_bridge
    victim = process if bridge_url == second_url else workers.a.bridge
    assert victim is not None
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    try:
        answer = on_b.get_by_test_id("message-assistant").last
        expect(answer).to_have_attribute("data-status", "FAILED", timeout=40_000)
        expect(answer).to_contain_text("stopped answering")
        shot(on_b, "two-workers-bridge-lost")
        # The next run, from B's tab, goes to the bridge that is left.
        send(on_b, "hello again")
        last = on_b.get_by_test_id("message-assistant").last
        expect(last.get_by_test_id("message-content")).to_have_text(
            "Echo: hello again", timeout=30_000
        )
        _, _, next_bridge = _run_row(workers.a, chat)
        assert next_bridge != bridge_url
        expect(on_a.get_by_test_id("message-assistant").last).to_contain_text("Echo: hello again")
    finally:
        if victim is workers.a.bridge:
            workers.a.start_bridge()

"""A web worker killed mid-run in Reflex's own several-worker mode: two
granian workers on one port (tests/support/reflex_workers.py, as `--scaled` runs them); a
tab follows a long answer; the worker that consumes the run (the holder of its Redis lease)
is killed with SIGKILL. Granian starts a new worker (supervisor.py:respawn_failed_web_workers),
the other worker takes the run over when the lease expires, the tab shows the whole answer,
every event is stored once, and the port answers throughout."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import sqlalchemy as sa
from playwright.sync_api import Page, expect

from tests.support.browser import new_chat, send, session_uuid_of
from tests.support.stack import Stack, ensure_fake_model
from tests.support.workers import reflex_workers, worker_pids

pytestmark = pytest.mark.e2e

WORDS = 300


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with reflex_workers(
        tmp_path_factory.mktemp("worker-crash"), token_delay=0.02, workers=2
    ) as stack:
        yield stack


def _consumer_pid(redis_url: str, timeout: float = 20) -> int:
    """The pid in the only run lease (`agent_chat:run:<id>:lease` = host:pid:nonce)."""
    from redis import Redis

    deadline = time.monotonic() + timeout
    with Redis.from_url(redis_url) as client:
        while time.monotonic() < deadline:
            keys = client.keys("agent_chat:run:*:lease")
            if keys:
                owner = client.get(keys[0]).decode()
                return int(owner.split(":")[1])
            time.sleep(0.1)
    raise AssertionError("no run lease in Redis")


class _Pings:
    """`GET /ping` every 0.2 s on a new connection, counting the answers that were not 200."""

    def __init__(self, url: str) -> None:
        self.url, self.ok, self.failed = url, 0, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                status = httpx.get(f"{self.url}/ping", timeout=5).status_code
            except httpx.HTTPError as exc:
                self.failed.append(repr(exc))
                continue
            if status == 200:
                self.ok += 1
            else:
                self.failed.append(status)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def test_a_killed_worker_is_replaced_and_its_run_completes(page: Page, stack: Stack) -> None:
    before = worker_pids(stack)
    assert len(before) >= 2, "granian did not start two workers"
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, f"long {WORDS} delay=0.03")
    answer = page.get_by_test_id("message-assistant").last
    expect(answer.get_by_test_id("message-content")).to_contain_text("word20")
    victim = _consumer_pid(stack.env["AGENT_CHAT_REDIS_URL"])
    assert victim in before, (victim, before)

    pings = _Pings(stack.url)
    try:
        os.kill(victim, signal.SIGKILL)
        expect(answer).to_have_attribute("data-status", "SUCCESS", timeout=60_000)
        # Granian put a new worker in its place.
        deadline = time.monotonic() + 30
        while (now := worker_pids(stack)) and (victim in now or len(now) < len(before)):
            assert time.monotonic() < deadline, f"workers {now} after killing {victim}"
            time.sleep(0.2)
    finally:
        pings.stop()
    words = re.findall(r"word\d+", answer.inner_text())
    assert words == [f"word{i}" for i in range(1, WORDS + 1)]
    # The port answered throughout (a request the dying worker held may be cut once).
    assert pings.ok >= 10 and len(pings.failed) <= 1, (pings.ok, pings.failed)

    # Every event stored once: distinct sequence numbers covering 1..N, text whole.
    session_uuid = session_uuid_of(page)
    engine = sa.create_engine(stack.db_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as connection:
            message_id, content = connection.execute(
                sa.text(
                    "SELECT m.id, m.content FROM chat_message m JOIN chat_session s "
                    "ON s.id = m.session_id WHERE s.session_uuid = :uuid "
                    "AND m.role = 'ASSISTANT'"
                ),
                {"uuid": session_uuid},
            ).one()
            rows = connection.execute(
                sa.text("SELECT seq, meta_json FROM chat_message_log WHERE message_id = :m"),
                {"m": message_id},
            ).all()
    finally:
        engine.dispose()
    covered: list[int] = []
    for seq, meta in rows:
        match = re.search(r'"seq_to":\s*(\d+)', meta or "")
        last = int(match.group(1)) if match else seq
        covered.extend(range(seq, last + 1))
    assert sorted(covered) == list(range(1, len(covered) + 1)), "an event stored twice or lost"
    assert re.findall(r"word\d+", content) == words

"""Several bridges (AGENT_CHAT_BRIDGE_URLS, runs/bridges.py): two real bridge processes
(`python -m agent_chat.bridge`, the scripted model behind them). Runs spread over both, a
conversation stays on its bridge, each run is pinned to its bridge in the database (stop,
answer and a re-attach after a restart use it), and a bridge killed with kill -9 fails its
runs with the reason while the next run goes to the other one."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_chat.db import pauses
from agent_chat.runs.bridge_watch import BridgeWatch
from agent_chat.runs.consumer import BRIDGE_LOST
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import free_port
from tests.support.bridge import hermes_home, start_bridge_process
from tests.support.runs import (
    MakeManager,
    assert_every_seq_once,
    finished,
    message,
    new_chat,
    stored_seqs,
    wait_for,
)


class TwoBridges:
    """Two bridge processes on fixed ports; a killed one is started again for the next test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ports = [free_port(), free_port()]
        self.urls = [f"http://127.0.0.1:{port}" for port in self.ports]
        self.processes: list[subprocess.Popen | None] = [None, None]

    def ensure_running(self) -> None:
        for i, process in enumerate(self.processes):
            if process is None or process.poll() is not None:
                home = hermes_home(self.root / f"home-{i}")
                log = self.root / f"bridge-{i}-{len(list(self.root.glob(f'bridge-{i}-*')))}.log"
                self.processes[i], _ = start_bridge_process(home, log, port=self.ports[i])

    def kill(self, i: int) -> None:
        process = self.processes[i]
        assert process is not None
        process.send_signal(signal.SIGKILL)
        process.wait(10)

    def close(self) -> None:
        for process in self.processes:
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()


@pytest.fixture(scope="module")
def two_bridge_processes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoBridges]:
    both = TwoBridges(tmp_path_factory.mktemp("two-bridges"))
    try:
        yield both
    finally:
        both.close()


@pytest.fixture
def two(two_bridge_processes: TwoBridges) -> TwoBridges:
    two_bridge_processes.ensure_running()
    return two_bridge_processes


def active_runs(url: str) -> int:
    return httpx.get(f"{url}/health", timeout=5).json()["active_runs"]


def mcp_status(url: str) -> list[dict]:
    return httpx.get(f"{url}/mcp/status", timeout=10).json()["servers"]


def knows_run(url: str, run_id: str) -> bool:
    """Whether the bridge at `url` has the run (it really went there)."""
    return httpx.get(f"{url}/runs/{run_id}", timeout=5).status_code == 200


async def test_runs_spread_over_both_bridges(
    two: TwoBridges, make_manager: MakeManager, storage: Storage, fake_model_row: int, user: int
) -> None:
    manager = await make_manager(two.urls)
    started = [
        await manager.send(session_uuid=new_chat(storage), text="long 30 delay=0.05", user_id=user)
        for _ in range(2)
    ]
    pinned = [message(storage, s.assistant_message_id).bridge_url for s in started]
    assert sorted(pinned) == sorted(two.urls)  # one each
    assert all(knows_run(url, s.run_id) for url, s in zip(pinned, started, strict=True))
    await wait_for(lambda: all(active_runs(url) == 1 for url in two.urls), timeout=10)
    for s in started:
        answer = await finished(storage, s.assistant_message_id)
        assert answer.status == "SUCCESS"
        assert answer.content.startswith("word1 word2")


async def test_a_conversation_stays_on_the_bridge_of_its_last_run(
    two: TwoBridges, make_manager: MakeManager, storage: Storage, fake_model_row: int, user: int
) -> None:
    manager = await make_manager(two.urls)
    watch = BridgeWatch(manager.bridges, manager.bus)
    chat = new_chat(storage)
    first = await manager.send(session_uuid=chat, text="hello there", user_id=user)
    assert (await finished(storage, first.assistant_message_id)).status == "SUCCESS"
    home = message(storage, first.assistant_message_id).bridge_url
    other = next(url for url in two.urls if url != home)
    # Make its bridge the busier one (as the watch polls it): a slow run elsewhere on it.
    await watch.check()
    busy = await manager.send(
        session_uuid=new_chat(storage), text="long 200 delay=0.05", user_id=user
    )
    if message(storage, busy.assistant_message_id).bridge_url != home:
        pytest.fail("the tie between two idle bridges should go to the first: the home one")
    await wait_for(lambda: active_runs(home) == 1, timeout=10)
    await watch.check()
    assert manager.bridges.health[home].load == 1 and manager.bridges.health[other].load == 0

    second = await manager.send(session_uuid=chat, text="recall", user_id=user)
    assert message(storage, second.assistant_message_id).bridge_url == home  # sticky
    answer = await finished(storage, second.assistant_message_id)
    assert (answer.status, answer.content) == ("SUCCESS", "Earlier you said: hello there")
    fresh = await manager.send(session_uuid=new_chat(storage), text="hi", user_id=user)
    assert message(storage, fresh.assistant_message_id).bridge_url == other  # least busy
    await manager.stop(busy.run_id, user_id=user)
    assert (await finished(storage, busy.assistant_message_id)).status == "STOPPED"


async def test_answer_and_stop_go_to_the_runs_pinned_bridge(
    two: TwoBridges, make_manager: MakeManager, storage: Storage, fake_model_row: int, user: int
) -> None:
    manager = await make_manager(two.urls)
    # Both runs land on the second bridge: the first bridge would answer 404 to each call.
    manager.bridges.note_started(two.urls[0], "elsewhere")
    asking = await manager.send(session_uuid=new_chat(storage), text="ask", user_id=user)
    assert message(storage, asking.assistant_message_id).bridge_url == two.urls[1]
    manager.bridges.note_started(two.urls[0], "elsewhere")
    slow = await manager.send(
        session_uuid=new_chat(storage), text="long 400 delay=0.05", user_id=user
    )
    assert message(storage, slow.assistant_message_id).bridge_url == two.urls[1]
    for run_id in (asking.run_id, slow.run_id):
        assert knows_run(two.urls[1], run_id) and not knows_run(two.urls[0], run_id)

    def open_pause() -> pauses.RunPause | None:
        return storage.call_sync(pauses.open_pause, message_id=asking.assistant_message_id)

    await wait_for(lambda: open_pause() is not None)
    pause = open_pause()
    await manager.answer(asking.run_id, pause.clarify_id, "blue", user_id=user)
    answer = await finished(storage, asking.assistant_message_id)
    assert (answer.status, answer.content) == ("SUCCESS", "You chose blue.")

    await wait_for(lambda: "word5" in (manager.consumed.get(slow.run_id).view.answer or ""))
    await manager.stop(slow.run_id, user_id=user)
    stopped = await finished(storage, slow.assistant_message_id)
    assert stopped.status == "STOPPED" and stopped.content.startswith("word1")


async def test_re_attach_after_a_restart_finds_the_run_on_its_pinned_bridge(
    two: TwoBridges, make_manager: MakeManager, storage: Storage, fake_model_row: int, user: int
) -> None:
    manager = await make_manager(two.urls)
    manager.bridges.note_started(two.urls[0], "elsewhere")
    started = await manager.send(
        session_uuid=new_chat(storage), text="long 60 delay=0.05", user_id=user
    )
    assert message(storage, started.assistant_message_id).bridge_url == two.urls[1]
    assert knows_run(two.urls[1], started.run_id) and not knows_run(two.urls[0], started.run_id)
    await wait_for(lambda: "word3" in (manager.consumed.get(started.run_id).view.answer or ""))
    await manager.close()  # the run goes on in its bridge; this manager remembers nothing

    again = await make_manager(two.urls)  # a new process: the run's bridge is in the database
    assert again.consumed.get(started.run_id) is not None
    assert again.consumed.get(started.run_id).bridge_url == two.urls[1]
    answer = await finished(storage, started.assistant_message_id)
    assert answer.status == "SUCCESS", answer.error
    assert answer.content.strip().endswith("word60")
    assert_every_seq_once(storage, answer.id, again_last_seq(storage, answer.id))


def again_last_seq(storage: Storage, message_id: int) -> int:
    return max(stored_seqs(storage, message_id))


async def test_kill_9_of_a_bridge_fails_its_run_with_the_reason_and_the_next_run_goes_elsewhere(
    two: TwoBridges, make_manager: MakeManager, storage: Storage, fake_model_row: int, user: int
) -> None:
    manager = await make_manager(two.urls)  # event streams give up after 2 s without a bridge
    watch = BridgeWatch(manager.bridges, manager.bus)
    await watch.check()
    chat = new_chat(storage)
    doomed = await manager.send(session_uuid=chat, text="long 400 delay=0.03", user_id=user)
    victim = message(storage, doomed.assistant_message_id).bridge_url
    survivor = next(url for url in two.urls if url != victim)
    other = await manager.send(
        session_uuid=new_chat(storage), text="long 150 delay=0.03", user_id=user
    )
    assert message(storage, other.assistant_message_id).bridge_url == survivor

    live = manager.consumed.get(doomed.run_id)
    await wait_for(lambda: live.view.answer.count("word") >= 20)
    two.kill(two.urls.index(victim))

    answer = await finished(storage, doomed.assistant_message_id, timeout=30)
    assert answer.status == "FAILED"
    assert answer.error == BRIDGE_LOST.format(url=victim, seconds=2.0)
    assert "stopped answering" in answer.error
    assert answer.content.startswith("word1 word2 ")  # what arrived is kept
    seqs = stored_seqs(storage, answer.id)
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 20  # no gap, the end ours
    # The run on the other bridge is not disturbed.
    assert (await finished(storage, other.assistant_message_id)).status == "SUCCESS"

    # The conversation's next run cannot stay on its dead bridge: it goes to the other one,
    # before the watch noticed (the refused connection) and after.
    await wait_for(lambda: manager.consumed.for_session(chat) is None)
    retry = await manager.send(session_uuid=chat, text="hello again", user_id=user)
    assert message(storage, retry.assistant_message_id).bridge_url == survivor
    retried = await finished(storage, retry.assistant_message_id)
    assert (retried.status, retried.content) == ("SUCCESS", "Echo: hello again")
    assert await watch.check() is True  # one bridge still answers: no banner
    health = manager.bridges.health[victim]
    assert not health.reachable and victim in health.last_error
    fresh = await manager.send(session_uuid=new_chat(storage), text="hi", user_id=user)
    assert message(storage, fresh.assistant_message_id).bridge_url == survivor


async def test_no_reachable_bridge_refuses_the_run_and_keeps_the_question(
    make_manager: MakeManager, storage: Storage, fake_model_row: int, user: int
) -> None:
    dead = [f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"]
    manager = await make_manager(dead)
    started = await manager.send(session_uuid=new_chat(storage), text="anyone?", user_id=user)
    answer = await finished(storage, started.assistant_message_id)
    assert answer.status == "FAILED"
    assert answer.error.startswith("No agent service is reachable right now")
    assert all(url in answer.error for url in dead)
    question = message(storage, started.user_message_id)
    assert (question.content, question.status) == ("anyone?", "SENT")
    # With the watch's view (both down) the refusal needs no connection attempt at all.
    watch = BridgeWatch(manager.bridges, manager.bus)
    assert await watch.check() is False and watch.banner()
    manager.recheck_bridges = watch.check
    again = await manager.send(session_uuid=new_chat(storage), text="still?", user_id=user)
    refused = await finished(storage, again.assistant_message_id)
    assert refused.error.startswith("No agent service is reachable right now")


async def test_every_bridge_gets_the_same_mcp_servers(
    two: TwoBridges, make_manager: MakeManager, storage: Storage, fake_model_row: int, user: int
) -> None:
    """The servers live in the database and go with each run: a run on either bridge calls
    the reference time server, and each bridge then reports it connected."""
    import sys

    from agent_chat.db import mcp_servers

    server = mcp_servers.McpValues(
        name="time", transport="stdio", command=sys.executable, args=["-m", "mcp_server_time"],
        ask=False,
    )  # fmt: skip
    storage.call_sync(mcp_servers.save_server, server_id=None, values=server)
    manager = await make_manager(two.urls)
    text = 'time?\nCALL mcp__time__get_current_time {"timezone": "America/Lima"}'
    started = [
        await manager.send(session_uuid=new_chat(storage), text=text, user_id=user)
        for _ in range(2)
    ]
    pinned = [message(storage, s.assistant_message_id).bridge_url for s in started]
    assert sorted(pinned) == sorted(two.urls)  # one run on each bridge
    for s in started:
        answer = await finished(storage, s.assistant_message_id, timeout=60)
        assert answer.status == "SUCCESS" and "America/Lima" in answer.content, answer.content
    for url in two.urls:
        rows = mcp_status(url)
        assert {"name": "time", "connected": True, "tools": 2, "error": None} in rows

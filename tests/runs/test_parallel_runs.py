"""Several runs at once, and a bridge that dies mid-run (the run engine, no browser)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from agent_chat.db import logs
from agent_chat.protocol.log_codec import row_to_event
from agent_chat.protocol.reducer import replay
from agent_chat.runs.storage import Storage
from tests.support.bridge import RunningBridge, hermes_home, start_bridge_process
from tests.support.runs import (
    MakeManager,
    assert_every_seq_once,
    finished,
    new_chat,
    stored_seqs,
    wait_for,
)


async def test_two_runs_in_different_sessions_interleave_without_crossing(
    make_manager: MakeManager,
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    texts = {
        new_chat(storage): "alpha one two three four five six seven eight delay=0.03",
        new_chat(storage): "omega nine ten eleven twelve thirteen fourteen delay=0.03",
    }
    started = await asyncio.gather(
        *(manager.send(session_uuid=uuid, text=text, user_id=user) for uuid, text in texts.items())
    )
    assert len({s.run_id for s in started}) == 2
    both_live = [manager.consumed.get(s.run_id) for s in started]
    assert all(live is not None for live in both_live)
    answers = [await finished(storage, s.assistant_message_id) for s in started]
    for answer, text, run in zip(answers, texts.values(), both_live, strict=True):
        assert answer.status == "SUCCESS"
        assert answer.content == f"Echo: {text}"
        assert_every_seq_once(storage, answer.id, run.view.last_seq)
        rows = storage.call_sync(logs.list_logs, message_id=answer.id)
        streamed = replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows])
        assert streamed.answer.strip() == f"Echo: {text}"  # no word of the other run


async def test_bridge_killed_mid_run_fails_the_answer_keeps_its_logs_and_the_session_works(
    make_manager: MakeManager, storage: Storage, fake_model_row: int, tmp_path: Path, user: int
) -> None:
    home = hermes_home(tmp_path / "hermes-killed")
    process, url = start_bridge_process(home, tmp_path / "bridge.log")
    try:
        manager = await make_manager(url)  # reconnects for 2 s, then gives up
        session_uuid = new_chat(storage)
        started = await manager.send(
            session_uuid=session_uuid, text="long 400 delay=0.02", user_id=user
        )
        live = manager.consumed.get(started.run_id)
        deadline = asyncio.get_running_loop().time() + 30
        while live.view.answer.count("word") < 20:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(10)

        answer = await finished(storage, started.assistant_message_id, timeout=30)
        assert answer.status == "FAILED"
        assert "stopped answering for more than 2 s" in answer.error and url in answer.error
        assert answer.content.startswith("word1 word2 ")  # the partial answer is kept
        seqs = stored_seqs(storage, answer.id)
        assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 20  # kept, no gaps
        # The session can be used again.
        await wait_for(lambda: manager.consumed.for_session(session_uuid) is None)
    finally:
        if process.poll() is None:
            process.kill()

"""A database that is briefly unwritable loses nothing: log batches and the final answer
are retried until it is back."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, text

from agent_chat.db.engine import is_sqlite
from agent_chat.runs.storage import Storage
from tests.support.bridge import RunningBridge
from tests.support.runs import (
    MakeManager,
    assert_every_seq_once,
    finished,
    new_chat,
    stored_seqs,
    wait_for,
)


@contextmanager
def database_locked(engine: Engine, seconds: float) -> Iterator[threading.Event]:
    """Hold an exclusive lock on the database from another connection for `seconds`."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with engine.connect() as conn:
            if is_sqlite(str(engine.url)):
                conn.exec_driver_sql("BEGIN EXCLUSIVE")
            else:
                conn.execute(text("BEGIN"))
                conn.execute(
                    text(
                        "LOCK TABLE chat_message_log, chat_message, run_pause IN ACCESS EXCLUSIVE MODE"
                    )
                )
            locked.set()
            release.wait(seconds)
            conn.exec_driver_sql("ROLLBACK")

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert locked.wait(10)
    try:
        yield release
    finally:
        thread.join(seconds + 10)


async def test_a_locked_database_delays_but_loses_no_event_and_no_answer(
    make_manager: MakeManager,
    bridge: RunningBridge,
    storage: Storage,
    engine: Engine,
    fake_model_row: int,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    session_uuid = new_chat(storage)
    started = await manager.send(
        session_uuid=session_uuid, text="long 150 delay=0.02", user_id=user
    )
    live = manager.consumed.get(started.run_id)
    await wait_for(lambda: live.view.answer.count("word") >= 10)
    # Longer than SQLite's busy timeout (5 s): writes fail, then must be retried.
    with database_locked(engine, seconds=7):
        await asyncio.sleep(7.5)
    answer = await finished(storage, started.assistant_message_id, timeout=60)
    assert answer.status == "SUCCESS"
    assert answer.content.split() == [f"word{i}" for i in range(1, 151)]
    # Every event written exactly once once the database took writes again.
    last = live.view.last_seq
    await wait_for(lambda: max(stored_seqs(storage, answer.id), default=0) >= last, timeout=30)
    assert_every_seq_once(storage, answer.id, live.view.last_seq)

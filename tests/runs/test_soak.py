"""Soak: many conversations in sequence and in parallel lose nothing, and threads and memory
come back near where they started (issue 7 §7).

The default is a short version (CI). `AGENT_CHAT_SOAK_FULL=1` runs the full one: 200
conversations in sequence and 20 in parallel. Figures are printed (`-s`).
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time

import psutil
import pytest

from agent_chat.db.models import MessageStatus
from agent_chat.runs.storage import Storage
from tests.support.runs import MakeManager, assert_every_seq_once, finished, new_chat

FULL = os.environ.get("AGENT_CHAT_SOAK_FULL") == "1"
SEQUENTIAL, PARALLEL = (200, 20) if FULL else (20, 8)


def rss_mb() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


async def run_one(manager, storage: Storage, text: str) -> None:
    session_uuid = new_chat(storage)
    started = await manager.send(session_uuid=session_uuid, text=text)
    live = manager.live(started.run_id)
    answer = await finished(storage, started.assistant_message_id, timeout=120)
    assert answer.status == MessageStatus.SUCCESS.value, answer.error
    assert answer.content == f"Echo: {text}"
    await asyncio.wait_for(manager.writer.flush(), 30)
    assert_every_seq_once(storage, answer.id, live.view.last_seq)


@pytest.mark.soak
async def test_soak_sequential_then_parallel_conversations_lose_nothing(
    make_manager: MakeManager, start_bridge, storage: Storage, fake_model_row: int
) -> None:
    bridge = start_bridge(max_active_runs=PARALLEL)
    manager = await make_manager(bridge.base_url, max_active_runs=PARALLEL)
    await run_one(manager, storage, "warm up")  # the first agent build and imports
    names_before = {t.name for t in threading.enumerate()}
    threads_before, rss_before = threading.active_count(), rss_mb()
    started = time.monotonic()

    for i in range(SEQUENTIAL):
        await run_one(manager, storage, f"sequential conversation {i}")
    sequential_s = time.monotonic() - started

    started = time.monotonic()
    await asyncio.gather(
        *(run_one(manager, storage, f"parallel conversation {i}") for i in range(PARALLEL))
    )
    parallel_s = time.monotonic() - started

    await asyncio.sleep(1.0)  # let finished run threads exit
    threads_after, rss_after = threading.active_count(), rss_mb()
    print(
        f"\nsoak: {SEQUENTIAL} sequential in {sequential_s:.1f} s, {PARALLEL} parallel in "
        f"{parallel_s:.1f} s; threads {threads_before} -> {threads_after}; "
        f"RSS {rss_before:.0f} -> {rss_after:.0f} MiB (app, bridge and fake model in one process)"
    )
    new = sorted({t.name for t in threading.enumerate()} - names_before)
    # Idle worker threads of asyncio's default executor (used for database calls) stay, up
    # to its max_workers: bounded, not growing with the number of conversations.
    workers = min(32, (os.cpu_count() or 1) + 4)
    assert threads_after <= threads_before + workers, new
    assert all(name.startswith("asyncio_") for name in new), new
    # Agent instances are pooled (8 by default), so some growth is expected; a leak per
    # conversation would show as far more than this over 200 conversations.
    assert rss_after - rss_before < 250

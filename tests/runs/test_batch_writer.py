"""LogBatchWriter: batches by size, time and on demand; a failed write loses nothing."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from agent_chat.db.logs import LogRow
from agent_chat.protocol.log_codec import event_to_row, seqs_covered
from agent_chat.runs.batch_writer import LogBatchWriter


class Sink:
    """A write function recording batches; it can be told to fail the next N calls."""

    def __init__(self, failures: int = 0) -> None:
        self.batches: list[dict[int, list[LogRow]]] = []
        self.calls = 0
        self.failures = failures
        self._lock = threading.Lock()

    def __call__(self, batch: dict[int, list[LogRow]]) -> None:
        with self._lock:
            self.calls += 1
            if self.failures > 0:
                self.failures -= 1
                raise OSError("database is locked")
            self.batches.append({k: list(v) for k, v in batch.items()})

    def rows(self, message_id: int = 1) -> list[LogRow]:
        with self._lock:
            return [row for batch in self.batches for row in batch.get(message_id, [])]

    def seqs(self, message_id: int = 1) -> list[int]:
        return [s for r in self.rows(message_id) for s in seqs_covered(r.seq, r.meta_json)]


def status_row(seq: int) -> LogRow:
    return event_to_row("status", seq, {"category": "lifecycle", "message": f"m{seq}"})


def delta_row(seq: int, text: str) -> LogRow:
    return event_to_row("text_delta", seq, {"text": text})


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_flushes_when_max_rows_are_pending() -> None:
    sink = Sink()
    writer = LogBatchWriter(sink, max_rows=3, max_delay=60)
    writer.start()
    for seq in (1, 2):
        writer.add(1, status_row(seq))
    await asyncio.sleep(0.1)
    assert sink.batches == []  # below the size and long before the delay
    writer.add(1, status_row(3))
    await until(lambda: len(sink.rows()) == 3)
    assert len(sink.batches) == 1
    await writer.close()


async def test_flushes_after_max_delay() -> None:
    sink = Sink()
    writer = LogBatchWriter(sink, max_rows=50, max_delay=0.05)
    writer.start()
    writer.add(1, status_row(1))
    assert sink.batches == []
    await until(lambda: sink.seqs() == [1])
    writer.add(1, status_row(2))
    # The sink sees the rows inside the worker thread, a moment before the loop counts the
    # flush: wait for the count, not for the rows.
    await until(lambda: writer.flushes == 2)
    assert sink.seqs() == [1, 2] and len(sink.batches) == 2
    await writer.close()


async def test_forced_flush_writes_at_once() -> None:
    sink = Sink()
    writer = LogBatchWriter(sink, max_rows=50, max_delay=60)
    writer.start()
    writer.add(1, status_row(1))
    writer.add(2, status_row(1))
    await writer.flush()
    assert sink.seqs(1) == [1] and sink.seqs(2) == [1]
    assert len(sink.batches) == 1  # every message's rows in one write
    await writer.flush()  # nothing pending: no empty write
    assert sink.calls == 1
    await writer.close()


async def test_consecutive_deltas_merge_into_one_row() -> None:
    sink = Sink()
    writer = LogBatchWriter(sink, max_rows=50, max_delay=60)
    writer.add(1, delta_row(1, "Hel"))
    writer.add(1, delta_row(2, "lo 🌍"))
    writer.add(1, status_row(3))
    writer.add(1, delta_row(4, "a"))
    writer.add(1, event_to_row("reasoning_delta", 5, {"text": "b"}))
    writer.add(2, delta_row(6, "other message"))
    await writer.flush()
    rows = sink.rows(1)
    assert [(r.seq, r.kind, r.content) for r in rows] == [
        (1, "text_delta", "Hello 🌍"),
        (3, "status", ""),
        (4, "text_delta", "a"),
        (5, "reasoning_delta", "b"),
    ]
    assert sink.seqs(1) == [1, 2, 3, 4, 5]
    assert sink.seqs(2) == [6]


async def test_a_merged_row_counts_once_toward_max_rows() -> None:
    sink = Sink()
    writer = LogBatchWriter(sink, max_rows=2, max_delay=60)
    writer.start()
    for seq in range(1, 11):
        writer.add(1, delta_row(seq, "x"))
    await asyncio.sleep(0.1)
    assert sink.batches == []  # ten deltas are one pending row
    writer.add(1, status_row(11))
    await until(lambda: sink.seqs() == list(range(1, 12)))
    await writer.close()


async def test_failing_twice_then_succeeding_loses_and_duplicates_nothing() -> None:
    sink = Sink(failures=2)
    writer = LogBatchWriter(sink, max_rows=50, max_delay=0.02)
    writer.start()
    seq = 0
    for _ in range(30):  # rows keep arriving while writes fail and are retried
        seq += 1
        writer.add(1, delta_row(seq, str(seq)) if seq % 3 else status_row(seq))
        await asyncio.sleep(0.02)
    await until(lambda: sink.calls >= 3)
    await writer.close()
    assert sink.failures == 0
    assert sink.seqs() == list(range(1, seq + 1))  # every seq once, in order
    texts = "".join(r.content for r in sink.rows() if r.kind == "text_delta")
    assert texts == "".join(str(s) for s in range(1, seq + 1) if s % 3)


async def test_failed_forced_flush_raises_and_keeps_rows_in_order() -> None:
    sink = Sink(failures=1)
    writer = LogBatchWriter(sink, max_rows=50, max_delay=60)
    writer.add(1, status_row(1))
    writer.add(1, status_row(2))
    with pytest.raises(OSError):
        await writer.flush()
    writer.add(1, status_row(3))
    await writer.flush()
    assert sink.seqs() == [1, 2, 3]


async def test_rows_of_a_failed_forced_flush_are_retried_in_the_background() -> None:
    # The background loop may see the batch taken by the forced flush, find nothing
    # pending and go back to sleep; the re-queued rows must still get their timer.
    release = threading.Event()
    calls: list[int] = []

    def write(batch: dict[int, list[LogRow]]) -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            release.wait(5)
            raise OSError("database is locked")
        sink(batch)

    sink = Sink()
    writer = LogBatchWriter(write, max_rows=50, max_delay=0.05)
    writer.start()
    await asyncio.sleep(0)  # the loop waits for work
    writer.add(1, status_row(1))
    flushing = asyncio.create_task(writer.flush())
    await asyncio.sleep(0.1)  # the loop wakes, sees nothing pending (the flush took it)
    release.set()
    with pytest.raises(OSError):
        await flushing
    writer.add(1, status_row(2))  # more rows, fewer than max_rows
    await until(lambda: sink.seqs() == [1, 2], timeout=3)
    await writer.close()


async def test_close_flushes_what_is_pending() -> None:
    sink = Sink()
    writer = LogBatchWriter(sink, max_rows=50, max_delay=60)
    writer.start()
    writer.add(1, delta_row(1, "a"))
    writer.add(1, status_row(2))
    await writer.close()
    assert sink.seqs() == [1, 2]
    await writer.close()  # closing twice is harmless
    assert sink.calls == 1


class SlowSink(Sink):
    """A sink whose writes take a while, like a busy database; `started` is set in each."""

    def __init__(self, seconds: float, failures: int = 0) -> None:
        super().__init__(failures)
        self.seconds = seconds
        self.started = threading.Event()

    def __call__(self, batch: dict[int, list[LogRow]]) -> None:
        self.started.set()
        threading.Event().wait(self.seconds)
        super().__call__(batch)


async def test_close_during_a_background_write_returns_after_it_is_stored() -> None:
    # The app shuts down while the writer's own loop is writing a batch: close() must not
    # return (and the app must not read the log) before that write is done.
    sink = SlowSink(0.5)
    writer = LogBatchWriter(sink, max_rows=50, max_delay=0.01)
    writer.start()
    writer.add(1, status_row(1))
    writer.add(1, delta_row(2, "a"))
    await asyncio.to_thread(sink.started.wait, 5)
    await writer.close()
    assert sink.seqs() == [1, 2]


async def test_a_cancelled_forced_flush_waits_for_its_write_and_keeps_failed_rows() -> None:
    sink = SlowSink(0.3, failures=1)
    writer = LogBatchWriter(sink, max_rows=50, max_delay=60)
    writer.add(1, status_row(1))
    flushing = asyncio.create_task(writer.flush())
    await asyncio.to_thread(sink.started.wait, 5)
    flushing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await flushing
    assert sink.calls == 1  # the write ended before the cancelled flush gave up the lock
    await writer.flush()  # the failed write's row was kept
    assert sink.seqs() == [1]

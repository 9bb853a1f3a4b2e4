"""Writes run events to `chat_message_log` in batches, not a transaction per token.

Rows are flushed when 50 are pending, 200 ms after the first pending row, and on demand
(terminal and clarify events). A failed write keeps the rows and is retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from agent_chat.db.logs import LogRow
from agent_chat.protocol.log_codec import merge_rows

log = logging.getLogger(__name__)

# Writes every message's rows in one transaction; runs in a worker thread.
WriteFn = Callable[[dict[int, list[LogRow]]], None]


class LogBatchWriter:
    def __init__(self, write: WriteFn, *, max_rows: int = 50, max_delay: float = 0.2) -> None:
        self._write = write
        self._max_rows = max_rows
        self._max_delay = max_delay
        self._pending: dict[int, list[LogRow]] = {}
        self._count = 0
        self._first_at: float | None = None
        self._wake = asyncio.Event()
        self._flush_lock = asyncio.Lock()
        self._task: asyncio.Task | None = None
        self.rows_written = 0
        self.flushes = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="log-batch-writer")

    def add(self, message_id: int, row: LogRow) -> None:
        rows = self._pending.setdefault(message_id, [])
        merged = merge_rows(rows[-1], row) if rows else None
        if merged is not None:
            rows[-1] = merged
        else:
            rows.append(row)
            self._count += 1
        if self._first_at is None:
            self._first_at = asyncio.get_running_loop().time()
            self._wake.set()
        if self._count >= self._max_rows:
            self._wake.set()

    def discard(self, message_id: int) -> None:
        """Drop a message's pending rows (its run is consumed elsewhere now: the new
        consumer stores them, and rows from here could overlap its merged rows)."""
        rows = self._pending.pop(message_id, None)
        if rows:
            self._count -= len(rows)
            if not self._pending:
                self._first_at = None

    async def flush(self) -> None:
        """Write everything pending now; on failure the rows stay pending and it raises."""
        async with self._flush_lock:
            if not self._pending:
                return
            batch, self._pending = self._pending, {}
            self._count, self._first_at = 0, None
            write = asyncio.ensure_future(asyncio.to_thread(self._write, batch))
            try:
                await asyncio.shield(write)
            except asyncio.CancelledError:
                # A thread cannot be stopped: let the write end under the lock, so nothing
                # reads or writes around it, and keep its rows if it failed.
                await asyncio.wait([write])
                if write.exception() is not None:
                    self._put_back(batch)
                raise
            except Exception:
                self._put_back(batch)
                raise
            self.flushes += 1
            self.rows_written += sum(len(r) for r in batch.values())

    def _put_back(self, batch: dict[int, list[LogRow]]) -> None:
        """Put unwritten rows back in front of anything added meanwhile, in seq order."""
        for message_id, rows in batch.items():
            newer = self._pending.get(message_id, [])
            self._pending[message_id] = rows + newer
        self._count = sum(len(r) for r in self._pending.values())
        self._first_at = asyncio.get_running_loop().time()
        self._wake.set()  # the loop may be idle: give the rows their timer again

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        backoff = 0.2
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._first_at is not None:
                wait = self._first_at + self._max_delay - loop.time()
                if wait > 0 and self._count < self._max_rows:
                    try:
                        async with asyncio.timeout(wait):  # not wait_for: runs/awaiting.py
                            await self._wake.wait()
                        self._wake.clear()
                    except TimeoutError:
                        pass
                    continue
                try:
                    await self.flush()
                    backoff = 0.2
                except Exception:
                    log.exception("writing run logs failed; retrying in %.1f s", backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 5.0)

    async def close(self) -> None:
        """Flush what is left and stop the loop."""
        if self._task is not None:
            async with self._flush_lock:  # never cancel the loop in the middle of a write
                self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.flush()

"""runs/periodic.py: the watchers' loop keeps going through a failing check and stops on close."""

from __future__ import annotations

import asyncio

from agent_chat.runs.periodic import Periodic


class Counting(Periodic):
    task_name = "counting"

    def __init__(self, *, fail_first: int = 0, sleep_first: bool = False) -> None:
        super().__init__(interval_s=0.01)
        self.sleep_first = sleep_first
        self.calls = 0
        self.fail_first = fail_first
        self.failures: list[Exception] = []
        self._seen: asyncio.Queue[int] = asyncio.Queue()

    async def check(self) -> None:
        self.calls += 1
        self._seen.put_nowait(self.calls)
        if self.calls <= self.fail_first:
            raise RuntimeError(f"check {self.calls} failed")

    def check_failed(self, exc: Exception) -> None:
        self.failures.append(exc)

    async def calls_reach(self, n: int, timeout_s: float = 5.0) -> None:
        async with asyncio.timeout(timeout_s):
            while await self._seen.get() < n:
                pass


async def test_a_failing_check_is_reported_and_the_next_one_runs() -> None:
    watch = Counting(fail_first=2)
    watch.start()
    try:
        await watch.calls_reach(4)
    finally:
        await watch.close()
    assert [str(e) for e in watch.failures] == ["check 1 failed", "check 2 failed"]


async def test_close_stops_the_checks_and_start_twice_runs_one_loop() -> None:
    watch = Counting()
    watch.start()
    watch.start()
    await watch.calls_reach(2)
    await watch.close()
    stopped_at = watch.calls
    await asyncio.sleep(0.05)
    assert watch.calls == stopped_at
    await watch.close()  # closing again is harmless


async def test_sleep_first_waits_one_interval_before_the_first_check() -> None:
    watch = Counting(sleep_first=True)
    watch.interval_s = 1.0
    watch.start()
    try:
        await asyncio.sleep(0.3)
        assert watch.calls == 0
        await watch.calls_reach(1)
    finally:
        await watch.close()
    eager = Counting()
    eager.interval_s = 1.0
    eager.start()
    try:
        await eager.calls_reach(1, timeout_s=0.5)
    finally:
        await eager.close()

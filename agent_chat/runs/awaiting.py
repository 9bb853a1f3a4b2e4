"""Where a suspended asyncio task waits: its whole await chain, innermost last.

`Task.print_stack` shows only the task's own coroutine frame when it is suspended; what a
stuck task waits on (a lock, a thread, a socket) is further down `cr_await`.

Found with it: on Python 3.11 `asyncio.wait_for(x, timeout)` returns x's result when a
cancel comes in the same loop step as x completes, and the cancel is lost (fixed in 3.12).
A run's consumer cancelled at shutdown while a chunk arrived then read on forever, and the
shutdown waited for it (CI's hang). The app waits with `async with asyncio.timeout(...)`,
which keeps the cancel, never with `wait_for`.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

_ASYNC_GEN_STEPS = {"async_generator_asend", "async_generator_athrow"}


def awaiting(task: asyncio.Task) -> list[str]:
    """`file:line function` for each coroutine, async generator or generator it awaits."""
    chain: list[str] = []
    step: Any = task.get_coro()
    while step is not None:
        frame = getattr(step, "cr_frame", None) or getattr(step, "ag_frame", None)
        frame = frame or getattr(step, "gi_frame", None)
        if frame is not None:
            chain.append(f"{frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}")
        nxt = getattr(step, "cr_await", None) or getattr(step, "ag_await", None)
        nxt = nxt or getattr(step, "gi_yieldfrom", None)
        if nxt is not None and type(nxt).__name__ in _ASYNC_GEN_STEPS:
            # `async for` awaits the generator's __anext__ object, which hides the generator.
            nxt = next((r for r in gc.get_referents(nxt) if hasattr(r, "ag_frame")), None)
        step = nxt
    return chain

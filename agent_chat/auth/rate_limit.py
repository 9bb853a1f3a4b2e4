"""The wrong-password limit, per client IP, in memory (one app process).

After `MAX_FAILURES` wrong passwords within `FAILURE_WINDOW_SECONDS`, further attempts wait
until the oldest of them leaves the window; a right password resets the count. Behind a
reverse proxy every client has the proxy's address, so the limit is shared.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable

MAX_FAILURES = 5
FAILURE_WINDOW_SECONDS = 15 * 60


class LoginRateLimiter:
    """Wrong passwords per client: `max_failures` within `window` seconds block the client
    until the oldest of them leaves the window. In memory, for one app process."""

    def __init__(
        self,
        *,
        max_failures: int = MAX_FAILURES,
        window: float = FAILURE_WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = 10_000,
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        # Monotonic by default: moving the wall clock must not lift a block.
        self.clock = clock
        self.max_clients = max_clients
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, client: str, now: float) -> deque[float]:
        failures = self._failures.get(client)
        if failures is None:
            return deque()
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        if not failures:
            del self._failures[client]
        return failures

    def retry_after(self, client: str) -> float | None:
        """Seconds until `client` may try again, or None when it may try now."""
        now = self.clock()
        failures = self._recent(client, now)
        if len(failures) < self.max_failures:
            return None
        return max(failures[-self.max_failures] + self.window - now, 0.001)

    def failure(self, client: str) -> None:
        now = self.clock()
        # Bounded memory: many addresses (spoofed or not) must not grow the table forever.
        if client not in self._failures and len(self._failures) >= self.max_clients:
            self._sweep(now)
        self._recent(client, now)
        self._failures.setdefault(client, deque()).append(now)

    def success(self, client: str) -> None:
        self._failures.pop(client, None)

    def _sweep(self, now: float) -> None:
        for client in list(self._failures):
            self._recent(client, now)
        while len(self._failures) >= self.max_clients:  # still full: forget the oldest client
            del self._failures[next(iter(self._failures))]


def rate_limit_message(retry_after: float) -> str:
    minutes = max(1, math.ceil(retry_after / 60))
    unit = "minute" if minutes == 1 else "minutes"
    return f"Too many wrong passwords. Try again in {minutes} {unit}."

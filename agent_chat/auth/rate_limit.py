"""The wrong-password limit, counted in the database (`login_failure`, db/auth_sessions.py),
so that every app process on one database shares it.

A sign-in is refused while `per_address` wrong passwords from the client's address, or
`per_account` for the username tried, fall within `window` seconds: until the oldest of them
leaves the window. A right password resets the account's count. Behind a reverse proxy every
client has the proxy's address, so the per-address limit is shared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_FAILURES_PER_ADDRESS = 10
MAX_FAILURES_PER_ACCOUNT = 5
FAILURE_WINDOW_SECONDS = 15 * 60


@dataclass(frozen=True)
class RateLimits:
    per_address: int = MAX_FAILURES_PER_ADDRESS
    per_account: int = MAX_FAILURES_PER_ACCOUNT
    window: float = FAILURE_WINDOW_SECONDS


def rate_limit_message(retry_after: float) -> str:
    minutes = max(1, math.ceil(retry_after / 60))
    unit = "minute" if minutes == 1 else "minutes"
    return f"Too many wrong passwords. Try again in {minutes} {unit}."

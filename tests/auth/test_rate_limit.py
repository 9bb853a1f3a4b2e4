"""The wrong-password limit (agent_chat/auth/rate_limit.py)."""

from __future__ import annotations

import pytest

from agent_chat.auth import (
    LoginRateLimiter,
)
from tests.auth.conftest import Clock


def test_five_wrong_passwords_block_until_the_window_passes() -> None:
    clock = Clock(0)
    limiter = LoginRateLimiter(max_failures=5, window=900, clock=clock)
    for second in range(5):
        assert limiter.retry_after("1.2.3.4") is None
        clock.now = second * 10
        limiter.failure("1.2.3.4")
    assert limiter.retry_after("1.2.3.4") == pytest.approx(900 - 40)
    assert limiter.retry_after("5.6.7.8") is None  # per client
    clock.now = 899
    assert limiter.retry_after("1.2.3.4") == pytest.approx(1)
    clock.now = 900.5  # the first failure left the window: one more try
    assert limiter.retry_after("1.2.3.4") is None
    limiter.failure("1.2.3.4")
    assert limiter.retry_after("1.2.3.4") == pytest.approx(10 + 900 - 900.5)


def test_a_right_password_resets_the_count() -> None:
    limiter = LoginRateLimiter(max_failures=5, window=900, clock=Clock(0))
    for _ in range(4):
        limiter.failure("ip")
    limiter.success("ip")
    for _ in range(4):
        limiter.failure("ip")
    assert limiter.retry_after("ip") is None


def test_the_limiter_forgets_old_clients_and_stays_bounded() -> None:
    clock = Clock(0)
    limiter = LoginRateLimiter(max_failures=5, window=900, clock=clock, max_clients=3)
    for client in ("a", "b", "c"):
        limiter.failure(client)
    clock.now = 1000
    limiter.failure("d")  # the full table is swept: a, b, c have nothing recent
    assert list(limiter._failures) == ["d"]
    for client in ("e", "f", "g"):
        limiter.failure(client)
    assert len(limiter._failures) <= 3

"""The wrong-password limit at the gate (agent_chat/auth/rate_limit.py, counted in the
database by db/auth_sessions.py): per account, per address, the right password refused while
blocked, the window, and one count for two gate processes on one database."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_chat.auth import GateConfig, RateLimits
from agent_chat.runs.storage import Storage
from tests.support.gate import HOUR, PASSWORD, Clock, add_user, client_for, gated, log_in
from tests.support.processes import free_port, start_process, stop_process


async def _wrong(client: httpx.AsyncClient, username: str = "alice") -> httpx.Response:
    return await client.post("/api/login", data={"username": username, "password": "x"})


async def test_the_sixth_wrong_password_for_an_account_is_refused_even_if_right(
    storage: Storage, clock: Clock, alice
) -> None:
    gate = gated(storage, clock)
    async with client_for(gate) as client:
        for _ in range(5):
            assert (await _wrong(client)).status_code == 401
        response = await _wrong(client)
        assert response.status_code == 429
        assert response.headers["retry-after"] == "900"
        assert "Too many wrong passwords. Try again in 15 minutes." in response.text
        # While blocked even the right password is refused (no guessing through the block),
        # from another address too: the count is the account's.
        assert (await log_in(client)).status_code == 429
        async with client_for(gate, "10.9.9.9") as elsewhere:
            assert (await log_in(elsewhere)).status_code == 429
        clock.now += 14 * 60
        response = await _wrong(client)
        assert "Try again in 1 minute." in response.text and response.headers["retry-after"] == "60"
        clock.now += 60
        assert (await log_in(client)).status_code == 303
        # The right password reset the account's count: five more wrong ones before a block.
        for _ in range(5):
            assert (await _wrong(client)).status_code == 401


async def test_one_address_guessing_many_accounts_is_blocked_at_ten(
    storage: Storage, clock: Clock, alice
) -> None:
    add_user(storage, "bob", "bobs-password-1")
    async with client_for(gated(storage, clock)) as client:
        for n in range(10):
            assert (await _wrong(client, f"user{n}")).status_code == 401
        assert (await log_in(client, username="bob", password="bobs-password-1")).status_code == 429
    async with client_for(gated(storage, clock), "10.0.0.99") as other:
        assert (await log_in(other, username="bob", password="bobs-password-1")).status_code == 303


async def test_json_callers_get_429_with_retry_after(storage: Storage, clock: Clock, alice) -> None:
    limits = RateLimits(per_address=2, per_account=2, window=60)
    gate = gated(storage, clock, config=GateConfig(session_seconds=HOUR, limits=limits))
    async with client_for(gate) as client:
        for _ in range(2):
            await client.post("/api/login", json={"username": "alice", "password": "x"})
        response = await client.post("/api/login", json={"username": "alice", "password": PASSWORD})
        assert response.status_code == 429
        assert response.json() == {"detail": "Too many wrong passwords. Try again in 1 minute."}
        assert 0 < int(response.headers["retry-after"]) <= 60


@pytest.fixture
def two_gate_processes(db_url: str, storage: Storage, tmp_path: Path) -> Iterator[list[str]]:
    """Two app processes (the real gate, each with its own engine) on the test's database."""
    add_user(storage)
    env = {**os.environ, "GATE_TEST_DB_URL": db_url}
    urls, processes = [], []
    try:
        for n in range(2):
            port = free_port()
            command = [sys.executable, "-m", "uvicorn", "--factory", "tests.auth.gate_server:app"]
            command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
            url = f"http://127.0.0.1:{port}"
            processes.append(
                start_process(
                    command,
                    env=env,
                    log=tmp_path / f"gate{n}.log",
                    health=f"{url}/ping",
                    timeout=60,
                )
            )
            urls.append(url)
        yield urls
    finally:
        for process in processes:
            stop_process(process)


def test_the_limit_holds_across_two_app_processes_on_one_database(
    two_gate_processes: list[str],
) -> None:
    first, second = two_gate_processes
    wrong = {"username": "alice", "password": "wrong"}
    for n in range(5):  # alternating: neither process alone saw five
        url = first if n % 2 == 0 else second
        assert httpx.post(f"{url}/api/login", json=wrong, timeout=30).status_code == 401
    for url in (first, second):
        response = httpx.post(f"{url}/api/login", json={"username": "alice", "password": PASSWORD})
        assert response.status_code == 429, url
        assert int(response.headers["retry-after"]) > 0

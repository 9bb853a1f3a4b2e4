"""Exactly one consumer per run: a lease per run, held by the worker that reads the bridge.

In one process (`LocalLeases`) a lease is always granted and never lost: the RunManager's
registry already says who consumes. With several workers (`RedisLeases`) the lease is a
Redis key `SET key worker NX PX ttl`, renewed every third of its ttl by a script that
first checks the key still names this worker, and deleted the same way at the end. A worker
that dies stops renewing; the key expires and another worker's `TakeoverWatch`
(`runs/takeover.py`) takes the run over from the last stored seq.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

# Renew or delete only a lease this worker still holds (another may have taken it over).
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class LeaseUnavailable(Exception):
    """No lease could be taken (Redis does not answer); the message says so for a person."""


class Lease(Protocol):
    run_id: str
    # Called once if the lease is lost while held (the worker must stop consuming).
    on_lost: Callable[[], None] | None

    async def release(self) -> None: ...


class RunLeases(Protocol):
    # True when several workers share the runs: the manager then watches for runs to take over.
    several_workers: bool

    async def acquire(self, run_id: str) -> Lease | None: ...


class LocalLease:
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.on_lost: Callable[[], None] | None = None

    async def release(self) -> None:
        """Nothing is held outside this process."""


class LocalLeases:
    several_workers = False

    async def acquire(self, run_id: str) -> LocalLease:
        return LocalLease(run_id)


class RedisLease:
    """A held lease, renewed in the background until released or lost."""

    def __init__(self, leases: RedisLeases, run_id: str) -> None:
        self.run_id = run_id
        self.on_lost: Callable[[], None] | None = None
        self.lost = False
        self._leases = leases
        self._task = asyncio.create_task(self._renew(), name=f"lease-{run_id}")

    async def _renew(self) -> None:
        leases = self._leases
        loop = asyncio.get_running_loop()
        renewed_at = loop.time()
        while True:
            await asyncio.sleep(leases.ttl_s / 3)
            try:
                held = await leases.renew_script(
                    keys=[leases.key(self.run_id)], args=[leases.owner, int(leases.ttl_s * 1000)]
                )
            except RedisError as exc:
                # Redis unreachable: keep trying while the lease may still be ours.
                if loop.time() - renewed_at < leases.ttl_s:
                    log.warning("renewing the lease of run %s failed: %s", self.run_id, exc)
                    continue
                held = 0
            if not held:
                log.warning("lost the lease of run %s: another worker consumes it", self.run_id)
                self.lost = True
                if self.on_lost is not None:
                    self.on_lost()
                return
            renewed_at = loop.time()

    async def release(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        if self.lost:
            return
        leases = self._leases
        try:
            await leases.release_script(keys=[leases.key(self.run_id)], args=[leases.owner])
        except RedisError as exc:  # it expires by itself
            log.warning("releasing the lease of run %s failed: %s", self.run_id, exc)


class RedisLeases:
    several_workers = True

    def __init__(self, client: Redis, *, owner: str, prefix: str, ttl_s: float) -> None:
        self.client = client
        self.owner = owner  # this worker's id, the value of every lease it holds
        self.prefix = prefix
        self.ttl_s = ttl_s
        self.renew_script = client.register_script(_RENEW)
        self.release_script = client.register_script(_RELEASE)

    def key(self, run_id: str) -> str:
        return f"{self.prefix}:run:{run_id}:lease"

    async def acquire(self, run_id: str) -> RedisLease | None:
        """The run's lease if no worker holds it."""
        try:
            got = await self.client.set(
                self.key(run_id), self.owner, nx=True, px=int(self.ttl_s * 1000)
            )
        except RedisError as exc:
            raise LeaseUnavailable(f"Redis does not answer ({exc}). Try again shortly.") from exc
        return RedisLease(self, run_id) if got else None

    async def holder(self, run_id: str) -> str | None:
        """The worker holding the run's lease, if any."""
        return await self.client.get(self.key(run_id))


class HeldLeases:
    """The leases of the runs one RunManager consumes."""

    def __init__(self, leases: RunLeases) -> None:
        self.leases = leases
        self._held: dict[str, Lease] = {}
        self._releasing: set[asyncio.Task] = set()

    async def acquire_new(self, run_id: str) -> Lease:
        """The lease of a run about to start (a fresh id: nobody else can hold it)."""
        lease = await self.leases.acquire(run_id)
        if lease is None:
            raise LeaseUnavailable("The run's lease is held elsewhere. Try again.")
        return lease

    def hold(self, lease: Lease, on_lost: Callable[[], None]) -> None:
        self._held[lease.run_id] = lease
        lease.on_lost = on_lost

    def give_back(self, run_id: str) -> None:
        """The run ended here: release its lease (in the background)."""
        lease = self._held.pop(run_id, None)
        if lease is not None:
            task = asyncio.create_task(lease.release(), name=f"release-{run_id}")
            self._releasing.add(task)
            task.add_done_callback(self._releasing.discard)

    def drop(self, run_id: str) -> None:
        """The lease was lost: nothing to release."""
        self._held.pop(run_id, None)

    async def release_all(self) -> None:
        leases, self._held = list(self._held.values()), {}
        await asyncio.gather(
            *(lease.release() for lease in leases), *self._releasing, return_exceptions=True
        )

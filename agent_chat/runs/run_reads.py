"""The read side of the RunManager: what runs are going on, for the page, the API and the
manager's own checks, and following one run (`subscribe`) or a person's run states
(`session_changes`).

One worker (no Redis) knows every run in its memory: the reads cost nothing. With several
workers (`several_workers`) a run may be consumed by any of them, so the reads ask the database
(db/running.py: RUNNING answers, waiting with an unanswered pause), the one truth they all
share; a run consumed here is known from memory first.
"""

from __future__ import annotations

from agent_chat.db import messages, running
from agent_chat.db.running import RunningRun
from agent_chat.runs.bus import RunBus, SessionChanges
from agent_chat.runs.consumed import ConsumedRuns
from agent_chat.runs.consumer import ConsumedRun
from agent_chat.runs.replay import StoredReplay
from agent_chat.runs.storage import Storage


class UnknownRun(LookupError):
    """No such run, or another person's: the same answer for both (no existence oracle)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"There is no run {run_id!r}.")


def going(live: ConsumedRun) -> RunningRun:
    """A run consumed here, as the database would describe it."""
    return RunningRun(
        live.run_id,
        live.message_id,
        live.chat_session_id,
        live.session_uuid,
        live.owner_id,
        live.session_state == "waiting",
    )


class RunReads:
    def __init__(
        self, *, storage: Storage, bus: RunBus, consumed: ConsumedRuns, several_workers: bool
    ) -> None:
        self._storage = storage
        self._bus = bus
        self._consumed = consumed
        # Several workers: runs may be consumed by another process (leases in Redis).
        self.several_workers = several_workers

    # ---- runs going on, on any worker ----------------------------------------------------

    async def running_in(self, session_uuid: str, *, user_id: int) -> RunningRun | None:
        """The run going on in `user_id`'s conversation, whichever worker consumes it; None
        when there is none (or the conversation is not theirs)."""
        live = self._consumed.for_session(session_uuid)
        if live is not None:
            return going(live) if live.owner_id == user_id else None
        if not self.several_workers:
            return None
        found = await self._storage.call(
            running.running_runs, user_id=user_id, session_uuid=session_uuid
        )
        return found[0] if found else None

    async def session_states(self, *, user_id: int) -> dict[str, str]:
        """session_uuid -> "running" | "waiting" for `user_id`'s runs going on."""
        if not self.several_workers:
            return {
                r.session_uuid: r.session_state for r in self._consumed if r.owner_id == user_id
            }
        found = await self._storage.call(running.running_runs, user_id=user_id)
        return {r.session_uuid: r.state for r in found}

    async def run_state(self, run_id: str, *, user_id: int) -> str:
        """ "running", "waiting" or "" (over, unknown, or another person's) for one run."""
        live = self._consumed.get(run_id)
        if live is not None:
            return live.session_state if live.owner_id == user_id else ""
        if not self.several_workers:
            return ""
        found = await self._storage.call(running.running_runs, user_id=user_id, run_id=run_id)
        return found[0].state if found else ""

    async def working_runs(self, *, user_id: int) -> int:
        """How many of `user_id`'s runs work now (waiting ones do not count)."""
        states = await self.session_states(user_id=user_id)
        return sum(1 for state in states.values() if state == "running")

    # ---- following runs --------------------------------------------------------------

    async def subscribe(self, run_id: str, after_seq: int = 0, *, user_id: int) -> StoredReplay:
        """The run's events after `after_seq`: what happened so far, then live events as
        they come, ending after the last one. A run that is over (or not live here) is
        replayed from the stored log. `UnknownRun` for another person's run."""
        await self.owned(run_id, user_id)
        live = self._bus.subscribe(run_id, after_seq)
        return live if live is not None else StoredReplay(self._storage, run_id, after_seq)

    def session_changes(self, *, user_id: int) -> SessionChanges:
        """The run-state changes of `user_id`'s conversations from now on (close it when
        done); other people's never reach it, on any bus."""
        return self._bus.session_changes(user_id)

    async def owned(self, run_id: str, user_id: int) -> ConsumedRun | None:
        """The run consumed here if it is `user_id`'s; None when it is theirs but not
        consumed here (finished, or another worker's); `UnknownRun` when unknown or another's."""
        live = self._consumed.get(run_id)
        if live is not None:
            if live.owner_id != user_id:
                raise UnknownRun(run_id)
            return live
        if await self._storage.call(messages.run_owner, run_id=run_id) != user_id:
            raise UnknownRun(run_id)
        return None

"""The runs this process consumes (one `Consumer` task each), by run id: the RunManager adds
a run when it starts or takes one over and forgets it when it ends or its lease is lost;
the read side and the commands look runs up here before they ask the database."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any

from agent_chat.db import turns
from agent_chat.runs.consumer import ConsumedRun
from agent_chat.runs.rules import RunRefused


class ConsumedRuns:
    def __init__(self) -> None:
        self._runs: dict[str, ConsumedRun] = {}

    def add(self, live: ConsumedRun) -> None:
        self._runs[live.run_id] = live

    def forget(self, run_id: str) -> None:
        self._runs.pop(run_id, None)

    def get(self, run_id: str | None) -> ConsumedRun | None:
        return self._runs.get(run_id) if run_id else None

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._runs

    def __iter__(self) -> Iterator[ConsumedRun]:
        return iter(list(self._runs.values()))

    def for_session(self, session_uuid: str) -> ConsumedRun | None:
        return next((r for r in self._runs.values() if r.session_uuid == session_uuid), None)

    def in_conversation(self, session_uuid: str, user_id: int) -> ConsumedRun | None:
        """The conversation's run consumed here; another person's conversation is refused
        as missing (before "it is running" could tell that it exists)."""
        live = self.for_session(session_uuid)
        if live is not None and live.owner_id != user_id:
            raise RunRefused(turns.NO_CONVERSATION)
        return live

    def working(self, owner_id: int) -> int:
        """How many of the person's runs consumed here work now (waiting ones do not)."""
        return sum(
            1
            for r in self._runs.values()
            if r.session_state == "running" and r.owner_id == owner_id
        )

    def tasks(self) -> list[asyncio.Task]:
        return [r.task for r in self._runs.values() if r.task]


class BackgroundTasks:
    """Work the manager starts and does not await (sending the queue on, preparing an
    agent): kept until done, because asyncio holds tasks only weakly, and cancelled by
    `RunManager.close`."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task] = set()

    def spawn(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def tasks(self) -> list[asyncio.Task]:
        return list(self._tasks)

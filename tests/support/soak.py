"""For the soak (tests/runs/test_soak.py): the runs it mixes (answers, questions answered,
stops, model faults), each checked for its end and its stored log, and what it samples
between rounds: memory and threads of the app (this process) and of the bridge process, and
the database connections in use."""

from __future__ import annotations

import asyncio
import gc
import re
import threading
from dataclasses import dataclass, field
from typing import Any

import psutil
from sqlalchemy import text

from agent_chat.db import pauses
from agent_chat.db.models import MessageStatus
from agent_chat.runs.manager import RunManager
from agent_chat.runs.storage import Storage
from tests.support.runs import assert_every_seq_once, finished, message, wait_for
from tests.support.users import default_owner

# One round in ten of each conversation: which kind of run, in order.
KINDS = ("answer", "question", "answer", "stop", "answer", "fault", "answer", "question")
EXPECTED = {
    "answer": MessageStatus.SUCCESS.value,
    "question": MessageStatus.SUCCESS.value,
    "stop": MessageStatus.STOPPED.value,
    "fault": MessageStatus.FAILED.value,
}
# The scripted model's words (tests/fakes/model_server.py): "ask" makes it call clarify,
# "long N delay=S" streams N words slowly, "error500" / "error401" fail the request (hermes retries neither to success).
FAULTS = ("error500", "error401")


def kind_of(round_no: int, conversation: int) -> str:
    return KINDS[(round_no + conversation) % len(KINDS)]


def prompt(kind: str, round_no: int, conversation: int) -> str:
    tag = f"soak round {round_no} of conversation {conversation}"
    if kind == "question":
        return f"{tag}: ask me"
    if kind == "stop":
        return f"{tag}: long 400 delay=0.02"
    if kind == "fault":
        return f"{tag}: {FAULTS[(round_no + conversation) % len(FAULTS)]}"
    return tag


@dataclass
class Outcome:
    kind: str
    message_id: int
    status: str
    last_seq: int


async def one_run(
    manager: RunManager, storage: Storage, session_uuid: str, kind: str, text_: str
) -> Outcome:
    """Send `text_` in the conversation, drive it as its kind wants (answer the question,
    stop it once it streams), and wait for its end: its stored status and last seq."""
    started = await manager.send(
        session_uuid=session_uuid, text=text_, user_id=storage.call_sync(default_owner)
    )
    live = manager.consumed.get(started.run_id)
    assert live is not None
    answer_id = started.assistant_message_id
    if kind == "question":

        def open_pause() -> Any:
            return storage.call_sync(pauses.open_pause, message_id=answer_id)

        await wait_for(lambda: open_pause() is not None, timeout=60)
        await manager.answer(
            started.run_id,
            open_pause().clarify_id,
            "green",
            user_id=storage.call_sync(default_owner),
        )
    elif kind == "stop":
        await wait_for(lambda: re.search(r"word5\b", live.view.answer), timeout=60)
        await manager.stop(started.run_id, user_id=storage.call_sync(default_owner))
    done = await finished(storage, answer_id, timeout=120)
    if live.task is not None:  # the consumer's end: the log flushed, the outcome stored
        await asyncio.wait_for(asyncio.shield(live.task), 60)
    return Outcome(kind, answer_id, done.status, live.view.last_seq)


def check(storage: Storage, outcome: Outcome) -> None:
    """The run ended as its kind expects and its log holds every seq once."""
    assert outcome.status == EXPECTED[outcome.kind], (outcome, message(storage, outcome.message_id))
    if outcome.kind == "question":
        assert message(storage, outcome.message_id).content == "You chose green."
    assert_every_seq_once(storage, outcome.message_id, outcome.last_seq)


# ---- samples -------------------------------------------------------------------------------


@dataclass
class Sample:
    runs: int
    app_rss_mib: float
    app_threads: int  # OS threads of this process (Python's and the libraries')
    py_threads: int  # threading.active_count()
    bridge_rss_mib: float
    bridge_threads: int
    pool_checked_out: int  # SQLAlchemy pool connections in use
    db_backends: int | None  # PostgreSQL: this database's rows in pg_stat_activity


@dataclass
class Sampler:
    storage: Storage
    bridge_pid: int
    samples: list[Sample] = field(default_factory=list)

    def take(self, runs: int) -> Sample:
        gc.collect()
        app = psutil.Process()
        bridge = psutil.Process(self.bridge_pid)
        engine = self.storage.engine
        backends = None
        if engine.dialect.name == "postgresql":
            with engine.connect() as conn:  # counts itself: subtracted
                backends = (
                    conn.execute(
                        text(
                            "select count(*) from pg_stat_activity "
                            "where datname = current_database()"
                        )
                    ).scalar_one()
                    - 1
                )
        sample = Sample(
            runs=runs,
            app_rss_mib=app.memory_info().rss / 2**20,
            app_threads=app.num_threads(),
            py_threads=threading.active_count(),
            bridge_rss_mib=bridge.memory_info().rss / 2**20,
            bridge_threads=bridge.num_threads(),
            pool_checked_out=engine.pool.checkedout(),
            db_backends=backends,
        )
        self.samples.append(sample)
        return sample

    HEADER = (
        "runs | app RSS MiB | app threads (py) | bridge RSS MiB | bridge threads | pool in use"
        " | PG backends"
    )

    @staticmethod
    def row(s: Sample) -> str:
        return (
            f"{s.runs:>4} | {s.app_rss_mib:>11.1f} | {s.app_threads:>11} ({s.py_threads:>2}) | "
            f"{s.bridge_rss_mib:>14.1f} | {s.bridge_threads:>14} | {s.pool_checked_out:>11} | "
            f"{'—' if s.db_backends is None else s.db_backends:>11}"
        )

    def table(self) -> str:
        lines = [self.HEADER, "-" * len(self.HEADER)]
        return "\n".join(lines + [self.row(s) for s in self.samples])

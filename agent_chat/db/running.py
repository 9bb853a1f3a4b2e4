"""The runs going on as the database says: what every web worker shares (several workers,
`AGENT_CHAT_REDIS_URL`; one worker reads its own memory instead, runs/run_reads.py).

An answer RUNNING in `chat_message` is a run going on, whichever worker consumes it (if its
consumer died, another takes it over within seconds: runs/takeover.py); with an unanswered
`run_pause` it waits for the person. The reads go through the partial index on RUNNING
answers (migration a7c1e3f5b9d2): their cost follows the runs going on, not the table.

`refuse_new_run` is a start's check inside the turn's transaction (db/turns.py:prepare_turn)
after `lock_person`: the person's row locked (PostgreSQL `FOR NO KEY UPDATE`; SQLite's one write
lock), so two workers starting runs of one person at once see each other's RUNNING answer
and the conversation gets one run, the person at most `limit` working ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import exists, text
from sqlmodel import Session, col, select

from agent_chat.db.errors import StoreError
from agent_chat.db.models import AppUser, ChatMessage, ChatSession, MessageRole, RunPause

STILL_RUNNING = "This conversation is still running. Wait for the answer or stop it first."
# Why a start is refused, for a client to tell apart (the HTTP API: 409 and 429).
RUN_ACTIVE = "run_active"
TOO_MANY_RUNS = "too_many_runs"
# The partial index's own predicate, as a literal (a bound parameter could not use it).
_RUNNING = text("chat_message.status = 'RUNNING'")


class Refused(StoreError):
    """No new run: the sentence says why, `code` which limit (db/turns.py re-raises it as its
    own Refused)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def too_many_runs(working: int, limit: int) -> str:
    return (
        f"{working} conversation{'s are' if working != 1 else ' is'} already "
        f"running, the limit is {limit}. Wait for one to finish or stop one."
    )


@dataclass(frozen=True)
class RunningRun:
    run_id: str
    message_id: int
    chat_session_id: int
    session_uuid: str
    owner_id: int | None
    waiting: bool  # an unanswered question or approval

    @property
    def state(self) -> str:
        """The conversation's state for the sidebar: "waiting" or "running"."""
        return "waiting" if self.waiting else "running"


def running_runs(
    *,
    session: Session,
    user_id: int | None = None,
    session_uuid: str | None = None,
    chat_session_id: int | None = None,
    run_id: str | None = None,
) -> list[RunningRun]:
    """The runs going on, oldest first: of `user_id`'s conversations, of one conversation,
    or one run (each filter optional)."""
    waiting = (
        exists()
        .where(col(RunPause.run_id) == col(ChatMessage.run_id))
        .where(col(RunPause.status) == "UNANSWERED")
    )
    query = (
        select(
            ChatMessage.run_id,
            ChatMessage.id,
            ChatMessage.session_id,
            ChatSession.session_uuid,
            ChatSession.owner_id,
            waiting.label("waiting"),
        )
        .join(ChatSession, col(ChatSession.id) == col(ChatMessage.session_id))
        .where(_RUNNING, ChatMessage.role == MessageRole.ASSISTANT.value)
        .where(col(ChatMessage.run_id).is_not(None))
        .order_by(col(ChatMessage.id))
    )
    if user_id is not None:
        query = query.where(ChatSession.owner_id == user_id)
    if session_uuid is not None:
        query = query.where(ChatSession.session_uuid == session_uuid)
    if chat_session_id is not None:
        query = query.where(col(ChatMessage.session_id) == chat_session_id)
    if run_id is not None:
        query = query.where(ChatMessage.run_id == run_id)
    return [RunningRun(*row[:5], bool(row[5])) for row in session.exec(query).all()]


def lock_person(session: Session, user_id: int) -> None:
    """Hold `user_id`'s run starts until this transaction ends: a second start of theirs,
    on any worker, waits here and then sees this one's RUNNING answer. The first statement
    of its transaction (SQLite: a later write lock could not be had over an older read)."""
    if session.get_bind().dialect.name == "postgresql":
        # NO KEY UPDATE: starts wait for each other, foreign-key checks (a new conversation
        # of theirs) do not.
        mine = select(AppUser.id).where(AppUser.id == user_id)
        session.exec(mine.with_for_update(key_share=True))
    else:  # SQLite: a write statement takes the database's one write lock
        session.exec(text("UPDATE app_user SET id = id WHERE id = :id").bindparams(id=user_id))  # type: ignore[call-overload]


def refuse_new_run(
    *, session: Session, owner_id: int, chat_session_id: int, limit: int | None
) -> None:
    """Refused while the conversation has a run going on, or (with `limit`) when its
    person has `limit` working runs (waiting ones do not count). After `lock_person`."""
    going = running_runs(session=session, user_id=owner_id)
    if any(r.chat_session_id == chat_session_id for r in going):
        raise Refused(STILL_RUNNING, RUN_ACTIVE)
    working = sum(1 for r in going if not r.waiting)
    if limit is not None and working >= limit:
        raise Refused(too_many_runs(working, limit), TOO_MANY_RUNS)

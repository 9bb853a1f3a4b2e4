"""The schedules' tables: a prompt a person wants run at set times, and each time it fired.
Imported by `db/models.py`, so they are on `SQLModel.metadata` with the others; they import
nothing of it (tables are named by string).

- `schedule`: its owner, what to run (prompt, model, skill, tool profile: the model is a
  plain id, not a foreign key, so a model deleted later makes that firing FAILED with the
  reason instead of silently using another), when (a 5-field cron expression in an IANA
  time zone: `services/schedule_times.py`), where (`mode` "new": a new conversation each
  time, titled with the date; "append": the conversation `session_id`, NULL once it is
  deleted, which the next firing says), `paused`, and `next_run_at` (naive UTC, NULL while
  paused): the one value the workers race on. A worker claims a firing by moving
  `next_run_at` on with a conditional UPDATE (`db/schedules.py:claim_due`), so with several
  workers each occurrence runs once.
- `schedule_run`: one per firing: the occurrence it stands for (`due_at`, unique per
  schedule: a second claim of it fails), when it started, the conversation and answer it
  made, or why it could not start (`error`); `late` when it ran after an occurrence the app
  was down for (missed ones run once, at the next start), `manual` for "Run now".
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime, ForeignKey, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

MODES = ("new", "append")


def made_by_fk() -> ForeignKey:
    """`chat_session.schedule_id`'s key: the schedule a conversation was made by or is added
    to by (the sidebar marks it). `use_alter`: `schedule.session_id` points the other way, and
    without it the tables' order (for creating or emptying them) would have a cycle."""
    return ForeignKey(
        "schedule.id", name="fk_chat_session_schedule_id", ondelete="SET NULL", use_alter=True
    )


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)  # naive UTC, as models.utcnow


class Schedule(SQLModel, table=True):
    __tablename__ = "schedule"
    __table_args__ = (
        Index("ix_schedule_due", "paused", "next_run_at"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    owner_id: int = Field(foreign_key="app_user.id", ondelete="CASCADE", index=True)
    title: str = Field(max_length=120)
    prompt: str = Field(sa_type=Text)
    model_id: int | None = None  # None: the default model when it fires
    skill_folder: str | None = Field(default=None, max_length=255)
    tool_profile: str | None = Field(default=None, max_length=40)
    cron: str = Field(max_length=100)
    timezone: str = Field(max_length=64)
    mode: str = Field(default="new", max_length=10)
    session_id: int | None = Field(
        default=None, foreign_key="chat_session.id", ondelete="SET NULL", index=True
    )
    paused: bool = False
    next_run_at: datetime | None = Field(default=None, sa_type=DateTime)
    created_at: datetime = Field(default_factory=_now, sa_type=DateTime)
    updated_at: datetime = Field(default_factory=_now, sa_type=DateTime)


class ScheduleRun(SQLModel, table=True):
    __tablename__ = "schedule_run"
    __table_args__ = (
        UniqueConstraint("schedule_id", "due_at", name="uq_schedule_run_schedule_id_due_at"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    schedule_id: int = Field(foreign_key="schedule.id", ondelete="CASCADE")
    due_at: datetime = Field(sa_type=DateTime)
    started_at: datetime = Field(default_factory=_now, sa_type=DateTime)
    session_id: int | None = Field(
        default=None, foreign_key="chat_session.id", ondelete="SET NULL", index=True
    )
    message_id: int | None = Field(default=None, foreign_key="chat_message.id", ondelete="SET NULL")
    error: str | None = Field(default=None, max_length=500)
    late: bool = False
    manual: bool = False

"""What a run command answers and refuses: `StartedRun`, `RunRefused`, the message rule
every command that sends text applies (`check_text`) and the store's refusals as the
person's message (`store_or_refuse`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_chat.db import turns
from agent_chat.runs.storage import Storage


class RunRefused(Exception):
    """A run could not be started; the message says why, for the person; `code` which rule
    (db/running.py's RUN_ACTIVE, TOO_MANY_RUNS; "refused" for the others)."""

    def __init__(self, message: str, code: str = "refused") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class StartedRun:
    run_id: str
    user_message_id: int
    assistant_message_id: int


def check_text(text: str, *, limit: int) -> str:
    """The text of a message or a steer: not empty, at most `limit` characters."""
    if not text or not text.strip():
        raise RunRefused("Type a message first: an empty message is not sent.")
    if len(text) > limit:
        raise RunRefused(
            f"The message has {len(text):,} characters; the limit is {limit:,}. "
            "Shorten it or split it into several messages."
        )
    return text


async def store_or_refuse(storage: Storage, fn: Callable[..., Any], /, **kwargs: Any) -> Any:
    """A store call whose refusal (`turns.Refused`) is the person's message."""
    try:
        return await storage.call(fn, **kwargs)
    except turns.Refused as exc:
        raise RunRefused(str(exc), exc.code) from exc

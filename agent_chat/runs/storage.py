"""Runs store functions in a worker thread, so database work never blocks the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Engine

from agent_chat.db.engine import open_session

T = TypeVar("T")


class Storage:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def call_sync(self, fn: Callable[..., T], /, **kwargs: Any) -> T:
        """`fn(session=..., **kwargs)` in one transaction, on this thread."""
        with open_session(self.engine) as session:
            return fn(session=session, **kwargs)

    async def call(self, fn: Callable[..., T], /, **kwargs: Any) -> T:
        """`fn(session=..., **kwargs)` in one transaction, on a worker thread."""
        return await asyncio.to_thread(self.call_sync, fn, **kwargs)

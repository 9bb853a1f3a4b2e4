"""For RunManager tests: a new chat, what is stored of it, waiting for a run's end, and
managers over a test database (closed with their clients at the end)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_chat.config import Settings, load_settings
from agent_chat.db import logs, messages, model_configs, sessions
from agent_chat.db.models import ChatMessage
from agent_chat.protocol.log_codec import row_to_event, seqs_covered
from agent_chat.protocol.reducer import RunView, replay
from agent_chat.runs.bridges import BridgeSet
from agent_chat.runs.manager import ConsumedRun, RunManager
from agent_chat.runs.redis_bus import redis_run_bus
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import RunningFakeModel
from tests.support.users import default_owner

# `await make_manager(bridge_url, start=True, **settings_overrides)`: a started RunManager.
MakeManager = Callable[..., Any]


def new_chat(storage: Storage, user_id: int | None = None) -> str:
    """A new, empty conversation of `user_id` (default: the default owner); its uuid."""
    owner = user_id if user_id is not None else storage.call_sync(default_owner)
    return storage.call_sync(sessions.create_session, user_id=owner).session_uuid


def fake_model_row(storage: Storage, fake: RunningFakeModel) -> int:
    """The scripted fake model server stored as the default model; its id."""
    model = storage.call_sync(
        model_configs.create_model,
        name="Fake",
        base_url=fake.base_url,
        model_name="fake-model",
        is_default=True,
    )
    return model.id


def chat_messages(storage: Storage, session_uuid: str) -> list[ChatMessage]:
    """The conversation's active branch."""

    def branch(*, session: Any) -> list[ChatMessage]:
        chat = sessions.get_session(
            user_id=default_owner(session=session), session=session, session_uuid=session_uuid
        )
        return messages.active_branch(session=session, chat_session_id=chat.id)

    return storage.call_sync(branch)


def message(storage: Storage, message_id: int) -> ChatMessage:
    return storage.call_sync(messages.get_message, message_id=message_id)


def stored_seqs(storage: Storage, message_id: int) -> list[int]:
    """The event numbers the message's stored log covers, in stored order."""
    rows = storage.call_sync(logs.list_logs, message_id=message_id)
    return [seq for row in rows for seq in seqs_covered(row.seq, row.meta_json)]


def stored_view(storage: Storage, message_id: int) -> RunView:
    """The message's stored log replayed."""
    rows = storage.call_sync(logs.list_logs, message_id=message_id)
    return replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows])


def assert_every_seq_once(storage: Storage, message_id: int, last_seq: int) -> None:
    assert stored_seqs(storage, message_id) == list(range(1, last_seq + 1))


async def wait_for(condition: Callable[[], Any], timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def finished(storage: Storage, message_id: int, timeout: float = 30.0) -> ChatMessage:
    """The assistant message once it is no longer RUNNING."""
    await wait_for(lambda: message(storage, message_id).status != "RUNNING", timeout)
    return message(storage, message_id)


async def run_to_end(manager: RunManager, run_id: str, timeout: float = 30.0) -> ConsumedRun:
    """The manager's live run, once its task ended."""
    live = manager.consumed.get(run_id)
    assert live is not None and live.task is not None
    await asyncio.wait_for(asyncio.shield(live.task), timeout)
    return live


@contextlib.asynccontextmanager
async def managers(
    db_url: str, storage: Storage, *, redis_url: str | None = None, prefix: str = "agent_chat"
) -> AsyncIterator[MakeManager]:
    """`await make(bridge_url, start=True, **settings_overrides)` makes a RunManager over
    `storage`; every one made is closed (runs go on in the bridge), its client too.

    With `redis_url` each manager is a worker of its own: its own Redis client, bus and
    leases (`runs/redis_bus.py`), all under `prefix`; `takeover_s` sets how often it looks
    for runs to take over. `bridge_url` may be a list: several bridges (runs/bridges.py),
    the first one first. Each manager's event streams give up after 2 s without a bridge."""
    made: list[tuple[RunManager, BridgeSet]] = []

    async def make(
        bridge_url: str | list[str],
        *,
        start: bool = True,
        takeover_s: float = 0.5,
        **overrides: Any,
    ) -> RunManager:
        urls = [bridge_url] if isinstance(bridge_url, str) else list(bridge_url)
        several = tuple(urls) if len(urls) > 1 else ()
        settings: Settings = dataclasses.replace(
            load_settings(), db_url=db_url, bridge_url=urls[0], bridge_urls=several, **overrides
        )
        bridges = BridgeSet.of(urls, reconnect_for=2.0)
        bus, leases = None, None
        if redis_url:
            bus, leases = redis_run_bus(
                redis_url,
                storage=storage,
                stream_ttl_s=settings.redis_stream_ttl_s,
                lease_s=settings.redis_lease_s,
                prefix=prefix,
            )
        manager = RunManager(
            settings=settings, storage=storage, bridges=bridges, bus=bus, leases=leases
        )
        manager.takeover.interval_s = takeover_s
        made.append((manager, bridges))
        if start:
            await manager.start()
        return manager

    try:
        yield make
    finally:
        for manager, bridges in made:
            await manager.close()
            await bridges.aclose()

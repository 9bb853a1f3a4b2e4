"""Sending a new run to a bridge (several bridges: runs/bridges.py): choose one, pin the
run to it in the database (`chat_message.bridge_url`, before it is sent, so any worker
finds it), send it; a bridge that refuses the connection is marked down and the next
healthy one is tried (nothing reached it, so the run cannot be on two bridges)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from agent_chat.db import run_bridges
from agent_chat.runs.bridges import BridgeSet, NoHealthyBridge
from agent_chat.runs.client import BridgeClient, BridgeUnavailable

log = logging.getLogger(__name__)


async def start_on_a_bridge(
    bridges: BridgeSet,
    *,
    store: Callable[..., Awaitable[Any]],
    message_id: int,
    last_bridge: str | None,
    hermes_session: str,
    send: Callable[[BridgeClient], Awaitable[Any]],
    recheck: Callable[[], Awaitable[Any]] | None = None,
    pinned: Callable[[str], None] = lambda url: None,
) -> str:
    """The URL the run was sent to. Raises `NoHealthyBridge` (none answers) or the
    `BridgeError` of the bridge that refused it. `store(fn, **kwargs)` runs a store call,
    `recheck()` polls every bridge once (when none is known healthy), `pinned(url)` is told
    each bridge the run is pinned to."""
    tried: list[str] = []
    while True:
        try:
            url = bridges.choose(
                last_bridge=last_bridge, hermes_session=hermes_session, exclude=tried
            )
        except NoHealthyBridge:
            if recheck is None or tried:
                raise
            await recheck()
            url = bridges.choose(last_bridge=last_bridge, hermes_session=hermes_session)
        await store(run_bridges.pin_run, message_id=message_id, bridge_url=url)
        pinned(url)
        try:
            await send(bridges.client(url))
        except BridgeUnavailable as exc:
            refused = isinstance(exc.__cause__, httpx.ConnectError)
            if not (refused and bridges.several):
                raise
            log.warning("the bridge %s refused the connection; trying another", url)
            bridges.record_down(url, exc.message)
            tried.append(url)
            continue
        bridges.note_started(url, hermes_session)
        return url

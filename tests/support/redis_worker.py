"""A worker for takeover tests: a RunManager in a process of its own, over Redis, that
starts one run and consumes it until it is killed (`kill -9`: no cleanup at all).

    python -m tests.support.redis_worker DB_URL BRIDGE_URL REDIS_URL PREFIX SESSION TEXT

Prints one JSON line once the run started: {"run_id", "message_id", "owner"}.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys

from agent_chat.config import load_settings
from agent_chat.db.engine import make_engine
from agent_chat.runs.client import BridgeClient
from agent_chat.runs.manager import RunManager
from agent_chat.runs.redis_bus import redis_run_bus
from agent_chat.runs.storage import Storage

LEASE_S = 1.5


async def main(db_url: str, bridge_url: str, redis_url: str, prefix: str, chat: str, text: str):
    settings = dataclasses.replace(load_settings(), db_url=db_url, bridge_url=bridge_url)
    storage = Storage(make_engine(db_url))
    bus, leases = redis_run_bus(
        redis_url, storage=storage, stream_ttl_s=600, lease_s=LEASE_S, prefix=prefix
    )
    client = BridgeClient(bridge_url, reconnect_for=2.0)
    manager = RunManager(settings=settings, storage=storage, client=client, bus=bus, leases=leases)
    await manager.start()
    started = await manager.send(user_id=1, session_uuid=chat, text=text)
    line = {"run_id": started.run_id, "message_id": started.assistant_message_id}
    print(json.dumps({**line, "owner": leases.owner}), flush=True)
    await asyncio.Event().wait()  # consume until killed


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    asyncio.run(main(*sys.argv[1:7]))

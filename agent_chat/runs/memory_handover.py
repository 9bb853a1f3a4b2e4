"""The one shared hermes memory of an install from before accounts goes to the first
administrator, at first use, once (docs/architecture.md §4b).

Before the app's first bridge call that carries a person (a run, a prepared agent, the memory
drawer), `ensure()` asks the bridge to hand the shared `memories/` to the first administrator
(`POST /memory/claim-shared`). The bridge does it once for good (a marker file), so a second
process or a restart only hears "already given"; here a done flag saves the call after the
first success. A bridge that is down is asked again at the next use.
"""

from __future__ import annotations

import asyncio
import logging

from agent_chat.db import users
from agent_chat.runs.client import BridgeClient, BridgeError
from agent_chat.runs.storage import Storage

log = logging.getLogger(__name__)


class MemoryHandover:
    def __init__(self, *, storage: Storage, client: BridgeClient) -> None:
        self.storage = storage
        self.client = client
        self.done = False
        self._lock = asyncio.Lock()

    async def ensure(self) -> None:
        """Best effort: never raises (the run or the drawer goes on either way)."""
        if self.done:
            return
        async with self._lock:
            if self.done:
                return
            try:
                admin = await self.storage.call(users.first_admin_id)
                if admin is None:
                    return  # no account yet: nobody to give it to
                result = await self.client.claim_shared_memory(user_id=admin)
            except BridgeError as exc:
                if exc.status_code == 422:  # it would not fit: left where it is, said once
                    log.error("the shared memory stays shared: %s", exc.message)
                    self.done = True
                else:
                    log.warning("the shared memory was not handed over yet: %s", exc.message)
                return
            except Exception:
                log.exception("handing the shared memory over failed")
                return
            self.done = True
            if result.get("claimed"):
                log.info(
                    "hermes' shared memory (%s) now belongs to the first administrator (user %s)",
                    ", ".join(result.get("moved") or []),
                    admin,
                )

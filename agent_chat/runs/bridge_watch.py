"""Whether the bridges answer, watched once per app process for every tab.

Polls every bridge's /health every few seconds and records each one's health in the
`BridgeSet` (reachable or not since when, the last error, active and waiting runs: what a
new run's choice and the administrators' "Agent services" list read). When the app's
answer changes (no bridge answers any more, or one came back after the launcher restarted
it), every tab's watcher is woken through the bus with a `SessionChange` for no
conversation (`BRIDGE_CHANGE`), so the banner appears and clears by itself.
"""

from __future__ import annotations

import asyncio
import logging

from agent_chat.runs.bridges import BridgeSet
from agent_chat.runs.bus import EVERYONE, RunBus, SessionChange
from agent_chat.runs.client import BridgeClient, BridgeError
from agent_chat.runs.periodic import Periodic

log = logging.getLogger(__name__)

# No conversation has this id: tab watchers read it as "the bridge's state changed".
BRIDGE_CHANGE = SessionChange(session_uuid="", state="bridge", owner_id=EVERYONE)
UNREACHABLE_HINT = (
    "Answers cannot be generated until it is running (./run.sh restarts it by itself; a "
    "bridge started by hand must be started again)."
)

EMBEDDED_HINT = (
    "The agent service runs inside this web app (AGENT_CHAT_BRIDGE=embedded): restart the web app."
)


class BridgeWatch(Periodic):
    task_name = "bridge-watch"

    def __init__(
        self,
        bridges: BridgeSet | BridgeClient,
        bus: RunBus,
        interval_s: float = 2.0,
        *,
        hint: str = UNREACHABLE_HINT,
    ) -> None:
        super().__init__(interval_s)
        self.bridges = bridges if isinstance(bridges, BridgeSet) else BridgeSet([bridges])
        self._bus = bus
        self.hint = hint  # what to do about it (the embedded bridge: restart the web app)
        self.up = True  # until told otherwise: the page load checks for itself too
        self.problem = ""  # the client's sentence for the last failure

    def banner(self) -> str:
        """The banner sentence while no bridge answers, else ""."""
        return "" if self.up else f"{self.problem} {self.hint}"

    async def _check_one(self, url: str) -> bool:
        try:
            counts = await self.bridges.client(url).health()
        except BridgeError as exc:
            was = self.bridges.healthy(url)
            self.bridges.record_down(url, exc.message)
            if was and self.bridges.several:
                log.warning("the bridge %s is unreachable: %s", url, exc.message)
            return False
        if not self.bridges.healthy(url) and self.bridges.several:
            log.warning("the bridge %s is back", url)
        self.bridges.record_up(url, counts)
        return True

    async def check(self) -> bool:
        """Poll every bridge; True if at least one answers (new runs can be answered)."""
        urls = self.bridges.configured
        results = await asyncio.gather(*(self._check_one(u) for u in urls))
        up = any(results)
        if not up:
            errors = [self.bridges.health[u].last_error for u in urls]
            self.problem = errors[0] if len(errors) == 1 else " ".join(errors)
        if up != self.up:
            self.up = up
            log.warning("the bridge is %s", "back" if up else f"unreachable: {self.problem}")
            self._bus.publish_session(BRIDGE_CHANGE)
        return up

    def check_failed(self, exc: Exception) -> None:
        log.error("checking the bridge failed", exc_info=exc)  # the banner keeps its state

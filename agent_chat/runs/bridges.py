"""Several bridges (AGENT_CHAT_BRIDGE_URLS): one client per bridge, each one's health, and
which bridge a new run goes to.

Plain Python. `runs/bridge_watch.py` polls every bridge's `/health` and records it here;
the RunManager asks `choose` for a new run's bridge and `client(url)` for the bridge a run
is pinned to (`chat_message.bridge_url`; None is the first bridge, for rows from before).

The choice: a conversation stays on the bridge that ran its last run while that bridge is
healthy (it most likely still holds the conversation's agent in its pool, `bridge/pool.py`:
8 agents, LRU; the app does not ask the pool, the sticky choice is the cheap proxy),
otherwise the least busy healthy bridge (active + waiting runs as last polled, plus the runs
started here since); none healthy is `NoHealthyBridge`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from agent_chat.runs.client import BridgeClient

NO_BRIDGE = (
    "No agent service is reachable right now ({detail}), so the question could not be "
    "answered. It is kept: send it again once an agent service is back."
)


class NoHealthyBridge(Exception):
    """Every bridge is unreachable; the message says so, for the person."""


@dataclass
class BridgeHealth:
    """What the watch last learnt of one bridge."""

    url: str
    reachable: bool = True  # until a poll says otherwise (a new bridge is tried)
    checked: bool = False  # polled at least once
    active_runs: int = 0
    waiting_runs: int = 0
    started_since_poll: int = 0  # runs this process sent it since the last poll
    last_error: str = ""
    sandbox: str = ""  # how it isolates Workspace commands (its /health; "" without them)
    since: float = field(default_factory=time.time)  # when `reachable` became what it is

    @property
    def load(self) -> int:
        return self.active_runs + self.waiting_runs + self.started_since_poll


class BridgeSet:
    """The app's bridges, the first one first; create once per process, close with aclose()."""

    def __init__(
        self, clients: Iterable[BridgeClient], *, reconnect_for: float | None = None
    ) -> None:
        self._clients: dict[str, BridgeClient] = {c.base_url: c for c in clients}
        if not self._clients:
            raise ValueError("a bridge set needs at least one bridge")
        self.configured = tuple(self._clients)
        # How long a run's event stream waits for its bridge to come back before the run
        # fails (each client's `reconnect_for`, the first one's unless told).
        first = self._clients[self.configured[0]]
        wait = reconnect_for if reconnect_for is not None else first._reconnect_for
        self.down_after_s = float(wait)
        self.health = {url: BridgeHealth(url) for url in self.configured}
        self._prepared_on: dict[str, str] = {}  # hermes session -> bridge that built its agent

    @classmethod
    def of(
        cls, urls: Iterable[str], *, token: str | None = None, reconnect_for: float = 15.0
    ) -> BridgeSet:
        clients = [BridgeClient(u, token=token, reconnect_for=reconnect_for) for u in urls]
        return cls(clients, reconnect_for=reconnect_for)

    @property
    def first(self) -> BridgeClient:
        return self._clients[self.configured[0]]

    @property
    def several(self) -> bool:
        return len(self.configured) > 1

    def client(self, url: str | None) -> BridgeClient:
        """The client of the bridge a run is pinned to. None (a row from before the column)
        and a URL no longer configured (the operator moved or removed that bridge) are the
        first bridge: the app only talks to the bridges it is given, and a bridge that does
        not know the run ends it with the restart sentence."""
        return self._clients.get((url or "").rstrip("/")) or self.first

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()

    # ---- health (told by runs/bridge_watch.py) ----------------------------------------

    def healthy(self, url: str) -> bool:
        health = self.health.get(url)
        return health is not None and health.reachable

    def record_up(self, url: str, counts: dict) -> None:
        health = self.health[url]
        if not health.reachable:
            health.since = time.time()
        health.reachable, health.checked, health.last_error = True, True, ""
        health.active_runs = int(counts.get("active_runs") or 0)
        health.waiting_runs = int(counts.get("waiting_runs") or 0)
        health.sandbox = str(counts.get("sandbox") or "")
        health.started_since_poll = 0

    def record_down(self, url: str, error: str) -> None:
        health = self.health[url]
        if health.reachable or not health.checked:
            health.since = time.time()
        health.reachable, health.checked, health.last_error = False, True, error
        health.active_runs = health.waiting_runs = health.started_since_poll = 0

    # ---- choosing --------------------------------------------------------------------

    def choose(
        self,
        *,
        last_bridge: str | None = None,
        hermes_session: str | None = None,
        exclude: Iterable[str] = (),
    ) -> str:
        """The bridge for a conversation's next run: its last run's bridge (None: the first
        bridge), else the one that prepared its agent, while healthy; else the least busy
        healthy one (the first configured on a tie). `NoHealthyBridge` if none is. One
        bridge is always chosen (its own error then says what is wrong)."""
        skip = set(exclude)
        if not self.several and not skip:
            return self.configured[0]  # one bridge: tried whatever the watch says, as ever
        sticky = last_bridge.rstrip("/") if last_bridge else None
        if sticky is None and hermes_session:
            sticky = self._prepared_on.get(hermes_session)
        if sticky and sticky not in skip and self.healthy(sticky):
            return sticky
        candidates = [u for u in self.configured if u not in skip and self.healthy(u)]
        if not candidates:
            raise NoHealthyBridge(NO_BRIDGE.format(detail=self._problems(skip)))
        return min(candidates, key=lambda u: self.health[u].load)  # min keeps the first tie

    def holder(self, *, last_bridge: str | None, hermes_session: str | None) -> str:
        """The bridge most likely holding the conversation's agent (for a reset)."""
        if last_bridge:
            return last_bridge.rstrip("/")
        prepared = self._prepared_on.get(hermes_session or "")
        return prepared or self.configured[0]

    def note_started(self, url: str, hermes_session: str) -> None:
        """A run was sent to `url`: count it until the next poll, remember the agent."""
        if url in self.health:
            self.health[url].started_since_poll += 1
        self.note_prepared(url, hermes_session)

    def note_prepared(self, url: str, hermes_session: str) -> None:
        self._prepared_on[hermes_session] = url
        while len(self._prepared_on) > 1000:  # only a hint: the oldest go first
            self._prepared_on.pop(next(iter(self._prepared_on)))

    def _problems(self, skip: set[str]) -> str:
        parts = []
        for url in self.configured:
            health = self.health[url]
            why = health.last_error or ("refused the run" if url in skip else "unreachable")
            parts.append(f"{url}: {why}")
        return "; ".join(parts)

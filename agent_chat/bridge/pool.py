"""An LRU pool of hermes AIAgent instances, one per (person, session).

An agent is built for one person: its system prompt holds that person's memory, frozen when
it is built, and its tools write into that person's hermes home (bridge/homes.py). So the key
is (user id, session id), and an agent built for A never serves B, even for the same session.

Building an agent costs ~0.02-0.1 s once hermes and the endpoint are known
(bridge/hermes_caches.py), still a session's agent is kept between runs. An evicted or dropped one is simply rebuilt on the next run: the agent
keeps no conversation history of its own (the caller passes it every run). An agent leaving
the pool gives back its model client (hermes' `release_clients`, what hermes' own gateway
does on eviction): dropped without it, each rebuilt agent left its HTTP client's memory
behind (the soak saw the bridge grow ~0.1 MiB per run, tests/runs/test_soak.py).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_chat.bridge.schemas import McpServerSpec, ModelSpec, mcp_key

logger = logging.getLogger(__name__)

# (user id, session id, model, tool profile, MCP servers) → agent
AgentFactory = Callable[[int, str, ModelSpec, str, tuple[McpServerSpec, ...]], Any]
Key = tuple[int, str]  # (user id, session id)


@dataclass
class _Entry:
    key: tuple[object, ...]
    agent: Any
    in_use: bool = False


class AgentPool:
    """Agents keyed by (user id, session id); reused only for the same model settings and
    profile."""

    def __init__(self, factory: AgentFactory, size: int) -> None:
        self._factory = factory
        self._size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        # Builds in progress (prepare): an acquire for the same session and key waits for
        # it instead of building a second agent.
        self._building: dict[Key, tuple[tuple[object, ...], threading.Event]] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def acquire(
        self,
        user_id: int,
        session_id: str,
        model: ModelSpec,
        profile: str = "chat",
        mcp: tuple[McpServerSpec, ...] = (),
    ) -> Any:
        """The person's agent of the session, built if missing or built for other model
        settings, another tool profile or other MCP servers (toolsets are fixed when hermes
        builds an agent)."""
        key = (*model.pool_key(), profile, mcp_key(mcp))
        slot = (user_id, session_id)
        with self._lock:
            building = self._building.get(slot)
        if building is not None and building[0] == key:
            building[1].wait(60)  # a prepare is building exactly this agent
        with self._lock:
            entry = self._entries.get(slot)
            if entry is not None and entry.key == key and not entry.in_use and _whole(entry):
                entry.in_use = True
                self._entries.move_to_end(slot)
                return entry.agent
        # Built outside the lock: construction probes the endpoint and takes a while.
        agent = self._factory(user_id, session_id, model, profile, mcp)
        with self._lock:
            old = self._entries.get(slot)
            self._entries[slot] = _Entry(key=key, agent=agent, in_use=True)
            self._entries.move_to_end(slot)
            gone = self._evict()
        # One built for other settings is replaced (unless a run still uses it: then the
        # run's release finds it gone and lets it go).
        _release([*gone, *([old.agent] if old is not None and not old.in_use else [])])
        return agent

    def prepare(
        self,
        user_id: int,
        session_id: str,
        model: ModelSpec,
        profile: str = "chat",
        mcp: tuple[McpServerSpec, ...] = (),
    ) -> bool:
        """Build the person's agent of the session ahead of its first message (the page
        calls this when a conversation opens), so that message does not wait for it. It is
        built for this person and session only, like any other: no agent ever moves between
        sessions or people. False when there was nothing to do (already there, or being
        built)."""
        key = (*model.pool_key(), profile, mcp_key(mcp))
        slot = (user_id, session_id)
        with self._lock:
            entry = self._entries.get(slot)
            if (entry is not None and entry.key == key) or slot in self._building:
                return False
            done = threading.Event()
            self._building[slot] = (key, done)
        try:
            agent = self._factory(user_id, session_id, model, profile, mcp)
            with self._lock:
                current = self._entries.get(slot)
                gone = [agent]  # not kept: a run is using the session's other agent
                if current is None or not current.in_use:
                    self._entries[slot] = _Entry(key=key, agent=agent)
                    self._entries.move_to_end(slot)
                    gone = self._evict() + ([current.agent] if current is not None else [])
            _release(gone)
        finally:
            with self._lock:
                self._building.pop(slot, None)
            done.set()
        return True

    def get(self, user_id: int, session_id: str) -> Any:
        """The pooled agent of this person and session, or None (tests, inspection)."""
        with self._lock:
            entry = self._entries.get((user_id, session_id))
            return entry.agent if entry is not None else None

    def release(self, user_id: int, session_id: str, agent: Any) -> None:
        """A run is done with `agent`: idle again, or let go if the pool no longer has it
        (dropped or replaced while the run went on)."""
        with self._lock:
            entry = self._entries.get((user_id, session_id))
            kept = entry is not None and entry.agent is agent
            if kept:
                entry.in_use = False
            gone = self._evict() + ([] if kept else [agent])
        _release(gone)

    def drop(self, session_id: str) -> bool:
        """Forget the session's agents, whoever they were built for (the next run builds a
        fresh one)."""
        with self._lock:
            slots = [slot for slot in self._entries if slot[1] == session_id]
            entries = [self._entries.pop(slot) for slot in slots]
        # One in use is let go by its run's release.
        _release([entry.agent for entry in entries if not entry.in_use])
        return bool(entries)

    def drop_idle(self, user_id: int | None = None) -> int:
        """Forget every agent of this person (everyone's: None) not running now, e.g. after
        their memory was edited: a new agent reads it into its prompt."""
        with self._lock:
            idle = [
                slot
                for slot, entry in self._entries.items()
                if not entry.in_use and (user_id is None or slot[0] == user_id)
            ]
            agents = [self._entries.pop(slot).agent for slot in idle]
        _release(agents)
        return len(idle)

    def _evict(self) -> list[Any]:
        """Oldest idle agents go first; agents in use are never evicted. The agents evicted,
        for the caller to release outside the lock."""
        gone = []
        for slot in list(self._entries):
            if len(self._entries) <= self._size:
                break
            if not self._entries[slot].in_use:
                logger.debug("agent pool: evicting user %s session %s", *slot)
                gone.append(self._entries.pop(slot).agent)
        return gone


def _whole(entry: _Entry) -> bool:
    """Built with every MCP server it was meant to have: one built while a server was down
    is rebuilt by the next run, which tries that server again."""
    return not getattr(entry.agent, "agent_chat_mcp_problems", None)


def _release(agents: list[Any]) -> None:
    """Give back each agent's model client (hermes' `release_clients`); the agent's session
    state (memory, todo list, workspace) is not hermes' client and stays."""
    for agent in agents:
        release = getattr(agent, "release_clients", None)
        if release is None:
            continue
        try:
            release()
        except Exception:  # a failed release must not fail the run that evicted it
            logger.exception("agent pool: releasing an agent's clients failed")

"""An agent leaving the pool gives back its model client (hermes' `release_clients`): the
soak found the bridge growing per rebuilt agent without it (bridge/pool.py)."""

from __future__ import annotations

from agent_chat.bridge.pool import AgentPool
from agent_chat.bridge.schemas import ModelSpec


class FakeAgent:
    def __init__(self, session_id: str, model: ModelSpec) -> None:
        self.session_id = session_id
        self.model = model.model
        self.released = 0

    def release_clients(self) -> None:
        self.released += 1


def model(name: str = "m") -> ModelSpec:
    return ModelSpec(base_url="http://127.0.0.1:9/v1", model=name)


def pool(size: int) -> AgentPool:
    return AgentPool(lambda user, sid, spec, profile, mcp=(): FakeAgent(sid, spec), size)


def test_an_evicted_agent_is_released_and_one_in_use_never() -> None:
    p = pool(1)
    a = p.acquire(1, "a", model())
    b = p.acquire(1, "b", model())  # over the size, but a is in use: kept
    assert a.released == 0
    p.release(1, "a", a)  # a is idle now and the oldest: evicted, released once
    assert (a.released, b.released) == (1, 0)
    p.release(1, "b", b)
    assert b.released == 0  # still pooled
    assert p.acquire(1, "b", model()) is b


def test_dropped_agents_are_released_once_and_in_use_ones_by_their_run() -> None:
    p = pool(4)
    a = p.acquire(1, "a", model())
    p.release(1, "a", a)
    b = p.acquire(1, "b", model())
    assert p.drop("a") and a.released == 1
    assert p.drop("b") and b.released == 0  # its run still has it
    p.release(1, "b", b)
    assert b.released == 1
    c = p.acquire(1, "c", model())
    p.release(1, "c", c)
    assert p.drop_idle() == 1 and c.released == 1


def test_an_agent_replaced_for_other_settings_is_released() -> None:
    p = pool(4)
    old = p.acquire(1, "a", model("one"))
    p.release(1, "a", old)
    new = p.acquire(1, "a", model("two"))
    assert new is not old and old.released == 1 and new.released == 0

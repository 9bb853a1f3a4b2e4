"""Agents built ahead of a conversation's first message (POST /sessions/{id}/prepare): the
first run uses that agent, and an agent prepared for one conversation carries nothing of
another (history, todo list, approvals)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import httpx

from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.sse import TEST_USER, read_events, run_body, start_run


async def _prepared(bridge: RunningBridge, session: str, timeout: float = 30) -> object:
    pool = bridge.app.state.pool
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        agent = pool.get(TEST_USER, session)  # pooled once built
        if agent is not None:
            return agent
        await asyncio.sleep(0.05)
    raise AssertionError(f"no agent was prepared for {session}")


async def test_the_first_run_uses_the_agent_prepared_for_its_conversation(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        # Conversation A: a secret, a todo list and a plan in its agent's past.
        secret = "CALL todo " + json.dumps(
            {"todos": [{"id": "1", "content": "secret plan A", "status": "pending"}]}
        )
        run_a = await start_run(client, run_body(bridge.model(fake_model), secret, first))
        await read_events(client, run_a)
        body = {"user": TEST_USER, "model": bridge.model(fake_model), "tool_profile": "chat"}
        response = await client.post(f"/sessions/{second}/prepare", json=body)
        assert response.status_code == 202
        agent = await _prepared(bridge, second)
        assert agent is not bridge.app.state.pool.get(TEST_USER, first)
        run_b = await start_run(client, run_body(bridge.model(fake_model), "hello B", second))
        stream = await read_events(client, run_b)
    assert stream.events[-1].type == "run_completed"
    assert bridge.app.state.pool.get(TEST_USER, second) is agent  # used, not rebuilt
    sent = json.dumps(fake_model.requests()[-1]["messages"])
    assert "secret plan A" not in sent and "CALL todo" not in sent
    # A prepare for a profile the bridge has not enabled is refused.
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        body = {"user": TEST_USER, "model": bridge.model(fake_model), "tool_profile": "workspace"}
        assert (await client.post(f"/sessions/{second}/prepare", json=body)).status_code == 422

"""What hermes learns about an endpoint is learnt once per bridge process
(bridge/hermes_caches.py): a second conversation on the same endpoint builds its agent
without probing it again, and that agent, built from the shared answers, carries nothing of
the first conversation (history, todo list, memory store, "allow for this conversation")."""

from __future__ import annotations

import json
import uuid

import httpx

from agent_chat.bridge import hermes_caches
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.sse import TEST_USER, read_events, run_body, start_run

LOCAL = "http://127.0.0.1"  # a host the bridge's Host guard serves


async def _run(client: httpx.AsyncClient, bridge, fake, text: str, session: str):
    run_id = await start_run(client, run_body(bridge.model(fake), text, session))
    stream = await read_events(client, run_id)
    assert stream.events[-1].type == "run_completed", stream.events[-1]
    return stream


async def test_a_second_conversation_on_the_same_endpoint_is_not_probed_again(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    hermes_caches.clear()  # this process may know the fake endpoint from another test
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        before = hermes_caches.probe_count()
        await _run(client, bridge, fake_model, "hello", first)
        learnt = hermes_caches.probe_count()
        assert learnt > before  # a local endpoint: hermes asked what server it is
        await _run(client, bridge, fake_model, "hello too", second)
        assert hermes_caches.probe_count() == learnt  # the second agent asked nothing
    pool = bridge.app.state.pool
    assert pool.get(TEST_USER, second) is not pool.get(TEST_USER, first)
    from agent.ssl_verify import resolve_httpx_verify

    assert resolve_httpx_verify() is resolve_httpx_verify()  # one TLS setting per process


async def test_an_agent_built_from_the_shared_answers_carries_nothing_of_another(
    start_bridge, fake_model: RunningFakeModel
) -> None:
    from tools.approval import approve_session, is_approved

    bridge = start_bridge(agent_pool_size=4)
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    todo = {"todos": [{"id": "1", "content": "secret plan A", "status": "pending"}]}
    note = {"action": "add", "target": "memory", "content": "A noted the secret 4711"}
    script = f"CALL todo {json.dumps(todo)}\nCALL memory {json.dumps(note)}"
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        await _run(client, bridge, fake_model, script, a)
        # A's person chose "allow for this conversation" for a command (hermes keys it by
        # the session, which the bridge sets per run).
        approve_session(a, "recursive delete")
        agent_a = bridge.app.state.pool.get(TEST_USER, a)
        assert agent_a._todo_store._items  # A's turn really made a plan
        fake_model.reset()
        stream = await _run(client, bridge, fake_model, "recall", b)
    agent_b = bridge.app.state.pool.get(TEST_USER, b)
    assert agent_b is not agent_a
    assert "I have no earlier message." in stream.text()  # no history of A
    sent = fake_model.requests()[-1]["messages"]
    conversation = json.dumps([m for m in sent if m["role"] != "system"])
    assert "secret plan A" not in conversation and "CALL" not in conversation
    assert agent_b._todo_store._items == []  # no todo list of A
    # Its own memory store: what A wrote reaches B only as the long-term memory on disk
    # (MEMORY.md of the same person: one person's conversations share it), never through
    # A's agent.
    assert agent_b._memory_store is not agent_a._memory_store
    assert agent_b.session_id == b
    assert is_approved(a, "recursive delete") and not is_approved(b, "recursive delete")


def test_health_says_when_the_warm_up_is_done(hermes_home) -> None:
    import time
    from dataclasses import replace

    from fastapi.testclient import TestClient

    from agent_chat.bridge.app import create_app
    from agent_chat.bridge.settings import BridgeSettings

    settings = BridgeSettings(hermes_home=hermes_home)
    # A TestClient runs the app's lifespan, where the warm-up starts.
    with TestClient(create_app(replace(settings, warm_up=True)), base_url=LOCAL) as client:
        deadline = time.monotonic() + 90
        while not client.get("/health").json()["warm"]:
            assert time.monotonic() < deadline, "the warm-up never ended"
            time.sleep(0.05)
    # Without a warm-up there is nothing to wait for.
    with TestClient(create_app(replace(settings, warm_up=False)), base_url=LOCAL) as client:
        assert client.get("/health").json()["warm"] is True

"""Run lifecycle over HTTP: stop, replay, admission (409/429/422/404), reset."""

from __future__ import annotations

import asyncio

import httpx

from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.sse import Received, read_events, run_body, start_run


async def _wait_for(client: httpx.AsyncClient, run_id: str, event_type: str) -> Received:
    async def hit(event: Received) -> bool:
        return event.type == event_type

    return (await read_events(client, run_id, on_event=hit)).events[-1]


async def test_stop_during_slow_stream_ends_stopped_with_partial_text(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(
            client, run_body(bridge.model(fake_model), "slow please", "slow-s")
        )
        await _wait_for(client, run_id, "text_delta")
        response = await client.post(f"/runs/{run_id}/stop")
        stream = await read_events(client, run_id)
        state = (await client.get(f"/runs/{run_id}")).json()
        again = await client.post(f"/runs/{run_id}/stop")
    assert response.status_code == 200
    assert stream.events[-1].type == "run_stopped"
    assert len(stream.of("text_delta")) < 200  # it did not run to the end
    assert state["status"] == "stopped"
    assert again.status_code == 200 and again.json()["status"] == "stopped"


async def test_reconnect_with_last_event_id_replays_exactly_the_missed_events(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    body = run_body(bridge.model(fake_model), "long 30 delay=0.02", "replay-s")
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, body)
        head = await read_events(client, run_id, on_event=lambda e: _after_seq(e, 6))
        last = head.events[-1].seq
        tail = await read_events(client, run_id, headers={"Last-Event-ID": str(last)})
        whole = await read_events(client, run_id)
        by_query = await read_events(client, run_id, params={"last_event_id": 10})
    seqs = [e.seq for e in head.events + tail.events]
    assert seqs == list(range(1, len(seqs) + 1))  # no gap, no duplicate
    assert [(e.seq, e.type, e.data) for e in head.events + tail.events] == [
        (e.seq, e.type, e.data) for e in whole.events
    ]
    assert [e.seq for e in by_query.events] == list(range(11, len(whole.events) + 1))
    assert whole.events[-1].type == "run_completed"


async def test_busy_session_and_duplicate_run_id_are_409(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    model = bridge.model(fake_model)
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, run_body(model, "slow", "busy-s", run_id="fixed-run-id"))
        busy = await client.post("/runs", json=run_body(model, "hello", "busy-s"))
        duplicate = await client.post(
            "/runs", json=run_body(model, "hello", "other-s", run_id="fixed-run-id")
        )
        reset_running = await client.post("/sessions/busy-s/reset")
        await client.post(f"/runs/{run_id}/stop")
        await read_events(client, run_id)
        reset_idle = await client.post("/sessions/busy-s/reset")
    assert busy.status_code == 409 and "already has a running run" in busy.json()["detail"]
    assert duplicate.status_code == 409
    assert reset_running.status_code == 409
    assert reset_idle.status_code == 200


async def test_global_cap_is_429_and_waiting_runs_do_not_count(
    start_bridge, fake_model: RunningFakeModel
) -> None:
    bridge = start_bridge(max_active_runs=1)
    model = bridge.model(fake_model)
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        asking = await start_run(client, run_body(model, "ask me", "cap-ask"))
        await _wait_for(client, asking, "clarify_request")
        slow = await start_run(
            client, run_body(model, "slow", "cap-slow")
        )  # the waiting run is not counted
        refused = await client.post("/runs", json=run_body(model, "hello", "cap-third"))
        health = (await client.get("/health")).json()
        for run_id in (asking, slow):
            await client.post(f"/runs/{run_id}/stop")
            await read_events(client, run_id)
    assert refused.status_code == 429 and "Too many runs" in refused.json()["detail"]
    assert health["active_runs"] == 1 and health["waiting_runs"] == 1


async def test_bad_body_is_422_with_a_readable_detail(bridge: RunningBridge) -> None:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=10) as client:
        missing = await client.post("/runs", json={"session_id": "x", "message": "hi"})
        empty = await client.post(
            "/runs",
            json={
                "session_id": "x",
                "message": "",
                "model": {"base_url": "http://x/v1", "model": "m"},
            },
        )
        small = await client.post(
            "/runs",
            json={
                "session_id": "x",
                "message": "hi",
                "model": {"base_url": "http://x/v1", "model": "m", "context_length": 4096},
            },
        )
    assert missing.status_code == 422 and "model: Field required" in missing.json()["detail"]
    assert empty.status_code == 422 and "message" in empty.json()["detail"]
    assert small.status_code == 422 and "model.context_length" in small.json()["detail"]


async def test_unknown_run_is_404_everywhere(bridge: RunningBridge) -> None:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=10) as client:
        responses = [
            await client.get("/runs/nope"),
            await client.get("/runs/nope/events"),
            await client.post("/runs/nope/stop"),
            await client.post("/runs/nope/clarify", json={"clarify_id": "c", "answer": "a"}),
        ]
    assert [r.status_code for r in responses] == [404, 404, 404, 404]


async def test_run_keeps_going_when_nobody_listens(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, run_body(bridge.model(fake_model), "hello", "nolisten-s"))
        for _ in range(300):
            state = (await client.get(f"/runs/{run_id}")).json()
            if state["status"] != "running":
                break
            await asyncio.sleep(0.1)
        stream = await read_events(client, run_id)
    assert state["status"] == "succeeded" and state["final_text"] == "Echo: hello"
    assert state["last_event_id"] == stream.events[-1].seq


async def _after_seq(event: Received, seq: int) -> bool:
    return event.seq >= seq


async def test_stop_right_after_start_ends_stopped_once(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, run_body(bridge.model(fake_model), "slow", "race-s"))
        await client.post(f"/runs/{run_id}/stop")
        stream = await read_events(client, run_id)
        state = (await client.get(f"/runs/{run_id}")).json()
    terminal = [
        e.type for e in stream.events if e.type.startswith("run_") and e.type != "run_started"
    ]
    assert terminal == ["run_stopped"] and stream.events[-1].type == "run_stopped"
    assert state["status"] == "stopped"


async def test_finished_runs_are_forgotten_after_the_retention_time(
    start_bridge, fake_model: RunningFakeModel
) -> None:
    bridge = start_bridge(buffer_retention_s=0.3)
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, run_body(bridge.model(fake_model), "hello", "retain-s"))
        await read_events(client, run_id)
        kept = await client.get(f"/runs/{run_id}")
        await asyncio.sleep(0.6)
        gone = await client.get(f"/runs/{run_id}")
    assert kept.status_code == 200 and gone.status_code == 404


async def test_only_the_newest_ended_runs_are_kept_beyond_the_retention_count(
    start_bridge, fake_model: RunningFakeModel
) -> None:
    bridge = start_bridge(buffer_retention_runs=1)
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        first = await start_run(client, run_body(bridge.model(fake_model), "hello", "keep-1"))
        await read_events(client, first)
        second = await start_run(client, run_body(bridge.model(fake_model), "hi", "keep-2"))
        await read_events(client, second)
        first_now = await client.get(f"/runs/{first}")
        second_now = await client.get(f"/runs/{second}")
    assert first_now.status_code == 404 and second_now.status_code == 200


async def test_an_ended_run_is_kept_without_the_history_it_was_started_with(
    start_bridge, fake_model: RunningFakeModel
) -> None:
    bridge = start_bridge()
    history = [{"role": "user", "content": "x" * 10_000}, {"role": "assistant", "content": "y"}]
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        body = run_body(bridge.model(fake_model), "hello", "light-1", history=history)
        run_id = await start_run(client, body)
        await read_events(client, run_id)
    run = bridge.app.state.registry.get(run_id)
    for _ in range(100):  # the run's thread ends just after its last event
        if not run.request.history:
            break
        await asyncio.sleep(0.05)
    assert run.finished and run.request.history == [] and run.request.message == "hello"

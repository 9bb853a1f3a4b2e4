"""Questions the agent asks back (clarify): answered, answered late, stopped, answered twice."""

from __future__ import annotations

import asyncio

import httpx

from agent_chat.bridge.settings import BridgeSettings, load_bridge_settings
from tests.fakes.model_server import CLARIFY_CHOICES, CLARIFY_QUESTION, RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.sse import Received, read_events, run_body, start_run


def test_clarify_wait_cap_defaults_to_at_least_a_day() -> None:
    assert BridgeSettings().clarify_max_wait_s >= 24 * 3600
    assert load_bridge_settings({}).clarify_max_wait_s >= 24 * 3600


async def test_clarify_answered_from_another_task_finishes_with_the_choice(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    async with (
        httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client,
        httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as other,
    ):
        run_id = await start_run(client, run_body(bridge.model(fake_model), "ask me", "ask-s"))
        answers: list[asyncio.Task] = []

        async def answer_later(event: Received) -> None:
            if event.type == "clarify_request":
                body = {"clarify_id": event.data["clarify_id"], "answer": "green"}
                answers.append(
                    asyncio.create_task(other.post(f"/runs/{run_id}/clarify", json=body))
                )

        stream = await read_events(client, run_id, on_event=answer_later)
        assert (await answers[0]).status_code == 200

    request = stream.first("clarify_request").data
    assert request["question"] == CLARIFY_QUESTION and request["choices"] == CLARIFY_CHOICES
    resolved = stream.first("clarify_resolved").data
    assert resolved["clarify_id"] == request["clarify_id"] and resolved["answer"] == "green"
    assert stream.events[-1].type == "run_completed"
    assert stream.events[-1].data["final_text"] == "You chose green."


async def test_clarify_answered_after_keepalive_interval_still_completes(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    # The bridge fixture sends keep-alives every 0.5 s; the answer comes after 2 s.
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, run_body(bridge.model(fake_model), "ask me", "late-s"))
        seen = await read_events(
            client, run_id, on_event=lambda e: _true_if(e.type == "clarify_request")
        )
        clarify_id = seen.events[-1].data["clarify_id"]
        state = (await client.get(f"/runs/{run_id}")).json()
        assert state["status"] == "waiting_input"
        assert state["pending_clarify"] == {
            "clarify_id": clarify_id,
            "question": CLARIFY_QUESTION,
            "choices": CLARIFY_CHOICES,
        }

        async def answer() -> httpx.Response:
            await asyncio.sleep(2.0)
            body = {"clarify_id": clarify_id, "answer": "red"}
            return await client.post(f"/runs/{run_id}/clarify", json=body)

        answering = asyncio.create_task(answer())
        rest = await read_events(
            client, run_id, headers={"Last-Event-ID": str(seen.events[-1].seq)}
        )
        assert (await answering).status_code == 200

    assert rest.keepalives >= 2
    assert rest.events[0].type == "clarify_resolved"
    assert rest.events[-1].data["final_text"] == "You chose red."


async def test_second_answer_to_the_same_question_is_404(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, run_body(bridge.model(fake_model), "ask me", "twice-s"))
        seen = await read_events(
            client, run_id, on_event=lambda e: _true_if(e.type == "clarify_request")
        )
        body = {"clarify_id": seen.events[-1].data["clarify_id"], "answer": "blue"}
        wrong = await client.post(f"/runs/{run_id}/clarify", json={**body, "clarify_id": "nope"})
        first = await client.post(f"/runs/{run_id}/clarify", json=body)
        second = await client.post(f"/runs/{run_id}/clarify", json=body)
        unknown_run = await client.post("/runs/no-such-run/clarify", json=body)
        await read_events(client, run_id)
    assert wrong.status_code == 404
    assert first.status_code == 200
    assert second.status_code == 404 and "already answered" in second.json()["detail"]
    assert unknown_run.status_code == 404


async def test_stop_during_pending_question_cancels_it_and_ends_stopped(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, run_body(bridge.model(fake_model), "ask me", "stopask-s"))
        await read_events(client, run_id, on_event=lambda e: _true_if(e.type == "clarify_request"))
        stopped = await client.post(f"/runs/{run_id}/stop")
        stream = await read_events(client, run_id)
        state = (await client.get(f"/runs/{run_id}")).json()
    assert stopped.status_code == 200
    resolved = stream.first("clarify_resolved").data
    assert resolved["answer"] is None and resolved["cancelled"] is True
    after = stream.types()[stream.types().index("clarify_resolved") :]
    assert after[-1] == "run_stopped" and "text_delta" not in after
    assert state["status"] == "stopped" and state["pending_clarify"] is None


async def _true_if(condition: bool) -> bool:
    return condition


async def test_question_unanswered_past_the_cap_is_cancelled_and_the_run_goes_on(
    start_bridge, fake_model: RunningFakeModel
) -> None:
    bridge = start_bridge(clarify_max_wait_s=0.5)
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, run_body(bridge.model(fake_model), "ask me", "cap-s"))
        stream = await read_events(client, run_id)
    resolved = stream.first("clarify_resolved").data
    assert (
        resolved["answer"] is None
        and resolved["cancelled"] is True
        and resolved["timed_out"] is True
    )
    assert stream.events[-1].type == "run_completed"


async def test_guidance_sent_while_the_agent_works_reaches_the_model(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    # The agent waits in a tool (clarify); guidance sent now is added to that tool's result.
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, run_body(bridge.model(fake_model), "ask me", "steer-s"))

        async def steer_then_answer(event: Received) -> None:
            if event.type == "clarify_request":
                steered = await client.post(
                    f"/runs/{run_id}/steer", json={"text": "Prefer warm colours."}
                )
                assert steered.status_code == 200, steered.text
                body = {"clarify_id": event.data["clarify_id"], "answer": "red"}
                assert (await client.post(f"/runs/{run_id}/clarify", json=body)).status_code == 200

        stream = await read_events(client, run_id, on_event=steer_then_answer)
        late = await client.post(f"/runs/{run_id}/steer", json={"text": "too late"})
    assert stream.first("steer").data["text"] == "Prefer warm colours."
    assert stream.first("steer_result").data["delivered"] is True
    assert stream.events[-1].type == "run_completed"
    tool_results = [m for m in fake_model.requests()[-1]["messages"] if m["role"] == "tool"]
    assert "Prefer warm colours." in tool_results[-1]["content"]
    assert late.status_code == 409  # a finished run takes no guidance


async def test_guidance_the_agent_never_took_in_is_reported_before_the_end(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(
            client, run_body(bridge.model(fake_model), "long 40 delay=0.05", "steer-late")
        )

        async def steer_once(event: Received) -> None:
            if event.type == "text_delta" and event.data["text"] == "word3 ":
                await client.post(f"/runs/{run_id}/steer", json={"text": "shorter please"})

        stream = await read_events(client, run_id, on_event=steer_once)
    types = stream.types()
    assert types[-2:] == ["steer_result", "run_completed"]
    assert stream.events[-2].data["delivered"] is False

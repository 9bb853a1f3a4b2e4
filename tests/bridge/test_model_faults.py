"""Model endpoint faults through the real bridge + hermes + the fake model: each run ends with
one terminal event and, when it fails, a sentence a person can read; the idle watchdog fails a
run that went quiet but never one waiting for an answer."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from agent_chat.bridge.events import EventBuffer
from agent_chat.bridge.failures import (
    STREAM_CUT_MARKER,
    duration_words,
    http_status_sentence,
    idle_sentence,
    readable_failure,
    stream_cut_sentence,
    unreachable_sentence,
)
from agent_chat.bridge.runs import Run
from agent_chat.bridge.schemas import StartRunRequest
from agent_chat.bridge.settings import BridgeSettings, load_bridge_settings
from agent_chat.protocol.events import RunState
from tests.fakes.model_server import RunningFakeModel, free_port
from tests.support.bridge import RunningBridge
from tests.support.sse import TERMINAL, Received, Stream, read_events, run_body, start_run

FAKE_500_MESSAGE = "The fake model failed on purpose (error500)."


@contextlib.contextmanager
def api_retries(hermes_home: Path, attempts: int) -> Iterator[None]:
    """hermes' ``agent.api_max_retries`` for agents built inside the block (read at build)."""
    path = hermes_home / "config.yaml"
    before = path.read_text(encoding="utf-8")
    path.write_text(
        before.replace("api_max_retries: 1", f"api_max_retries: {attempts}"), encoding="utf-8"
    )
    try:
        yield
    finally:
        path.write_text(before, encoding="utf-8")


async def _run(bridge: RunningBridge, body: dict[str, Any]) -> tuple[Stream, dict[str, Any]]:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, body)
        stream = await read_events(client, run_id)
        state = (await client.get(f"/runs/{run_id}")).json()
    terminal = [e for e in stream.events if e.type in TERMINAL]
    assert len(terminal) == 1 and stream.events[-1] is terminal[0], stream.types()
    assert [e.seq for e in stream.events] == list(range(1, len(stream.events) + 1))
    return stream, state


async def _failed_with(bridge: RunningBridge, body: dict[str, Any]) -> str:
    stream, state = await _run(bridge, body)
    assert stream.events[-1].type == "run_failed", stream.types()
    error = stream.events[-1].data["error"]
    assert state["status"] == "failed" and state["error"] == error
    return error


def _faulty(fake: RunningFakeModel, keywords: str) -> dict[str, Any]:
    """A model whose every chat request has the fault, whatever the message says."""
    return {
        "base_url": fake.base_url.replace("/v1", f"/fault/{keywords}/v1"),
        "model": "fake-model",
    }


# ---- what hermes does with each fault, and the sentence the person reads ---------------------


async def test_an_unreachable_endpoint_fails_saying_nothing_answered_there(
    bridge: RunningBridge,
) -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    model = {"base_url": base_url, "model": "fake-model"}
    error = await _failed_with(bridge, run_body(model, "hello", "fault-down"))
    assert error == unreachable_sentence(base_url)
    assert error.startswith(f"Could not reach the model endpoint at {base_url}")


async def test_http_401_fails_at_once_saying_the_key_was_refused(
    bridge: RunningBridge, fake_model: RunningFakeModel, hermes_home: Path
) -> None:
    fake_model.reset()
    with api_retries(hermes_home, 3):
        error = await _failed_with(
            bridge, run_body(bridge.model(fake_model), "error401 hi", "fault-401")
        )
    assert error == "The model endpoint refused the API key (HTTP 401)."
    assert len(fake_model.requests()) == 1  # hermes does not retry a refused key


async def test_http_429_is_retried_after_retry_after_then_fails_saying_rate_limited(
    bridge: RunningBridge, fake_model: RunningFakeModel, hermes_home: Path
) -> None:
    fake_model.reset()
    started = time.monotonic()
    with api_retries(hermes_home, 2):
        error = await _failed_with(
            bridge, run_body(bridge.model(fake_model), "error429 hi", "fault-429")
        )
    assert error == (
        "The model endpoint is rate limiting requests (HTTP 429); "
        "it still refused after 2 attempts. Try again later."
    )
    assert len(fake_model.requests()) == 2
    assert time.monotonic() - started >= 1.0  # it waited the fake's Retry-After: 1


async def test_http_429_once_completes_after_hermes_retries(
    bridge: RunningBridge, fake_model: RunningFakeModel, hermes_home: Path
) -> None:
    fake_model.reset()
    with api_retries(hermes_home, 2):
        stream, state = await _run(
            bridge, run_body(bridge.model(fake_model), "error429 once hi", "fault-429-once")
        )
    assert stream.events[-1].type == "run_completed"
    assert stream.events[-1].data["final_text"] == "Echo: error429 once hi"
    assert len(fake_model.requests()) == 2 and state["status"] == "succeeded"


async def test_http_500_is_retried_then_fails_naming_the_server_error(
    bridge: RunningBridge, fake_model: RunningFakeModel, hermes_home: Path
) -> None:
    fake_model.reset()
    with api_retries(hermes_home, 2):
        error = await _failed_with(
            bridge, run_body(bridge.model(fake_model), "error500 hi", "fault-500")
        )
    assert error == (
        "The model endpoint failed with a server error (HTTP 500) 2 times in a row. "
        f"It said: {FAKE_500_MESSAGE}"
    )
    assert len(fake_model.requests()) == 2


async def test_a_stream_cut_once_completes_through_hermes_continuation(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    fake_model.reset()
    stream, _ = await _run(
        bridge, run_body(bridge.model(fake_model), "cutstream hi there friend", "fault-cut-1")
    )
    assert stream.events[-1].type == "run_completed"
    # The partial text was kept; hermes asked the model to go on from there.
    assert stream.events[-1].data["final_text"].startswith("Echo: cutstream hi")
    requests = fake_model.requests()
    assert len(requests) == 2
    assert STREAM_CUT_MARKER in requests[1]["messages"][-1]["content"]


async def test_a_stream_cut_every_time_fails_after_hermes_continuations(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    fake_model.reset()
    error = await _failed_with(
        bridge, run_body(_faulty(fake_model, "cutstream"), "hi there friend", "fault-cut")
    )
    assert error == stream_cut_sentence(4)
    assert "mid-stream" in error
    assert len(fake_model.requests()) == 4


async def test_a_malformed_chunk_once_completes_through_hermes_continuation(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    fake_model.reset()
    stream, _ = await _run(
        bridge, run_body(bridge.model(fake_model), "malformed hi there", "fault-bad-1")
    )
    assert stream.events[-1].type == "run_completed"
    assert stream.events[-1].data["final_text"].startswith("Echo: malformed hi")
    assert len(fake_model.requests()) == 2


async def test_malformed_chunks_every_time_fail_after_hermes_continuations(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    fake_model.reset()
    error = await _failed_with(
        bridge, run_body(_faulty(fake_model, "malformed"), "hi there friend", "fault-bad")
    )
    assert error == stream_cut_sentence(4)
    assert "malformed" in error


async def test_a_slow_first_token_within_the_limits_completes(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    stream, _ = await _run(
        bridge, run_body(bridge.model(fake_model), "slowfirst=2 hi", "fault-slow-ok")
    )
    assert stream.events[-1].type == "run_completed"
    assert stream.events[-1].data["final_text"] == "Echo: slowfirst=2 hi"


# ---- the inactivity watchdog ---------------------------------------------------------------


async def _warm_bridge(
    start_bridge: Any, fake: RunningFakeModel, session_id: str, idle_timeout_s: float
) -> RunningBridge:
    """A bridge whose idle timeout is ``idle_timeout_s`` once the session's agent is built.

    Building an agent (and hermes' first turn in a process) takes a second or more before the
    first event; with a 1 s timeout that alone would trip the watchdog. So one normal run
    first, under the default timeout, then the short one.
    """
    bridge = start_bridge(keepalive_interval_s=0.2)
    stream, _ = await _run(bridge, run_body(bridge.model(fake), "hello", session_id))
    assert stream.events[-1].type == "run_completed"
    bridge.app.state.registry.idle_timeout_s = idle_timeout_s
    return bridge


async def test_the_watchdog_fails_a_run_whose_first_token_is_too_slow(
    start_bridge: Any, fake_model: RunningFakeModel
) -> None:
    bridge = await _warm_bridge(start_bridge, fake_model, "idle-s", 1.0)
    model = bridge.model(fake_model)
    started = time.monotonic()
    stream, state = await _run(bridge, run_body(model, "slowfirst=5 hi", "idle-s"))
    took = time.monotonic() - started
    assert stream.events[-1].type == "run_failed"
    assert stream.events[-1].data["error"] == (
        "No answer from the model for 1 second; the run was stopped."
    )
    assert state["status"] == "failed"
    assert stream.keepalives >= 2  # keep-alives went out and did not count as activity
    assert took < 4.5  # failed by the watchdog, not after the slow token arrived
    # hermes was interrupted: the run's thread ends before the slow token would have come.
    thread_name = f"run-{stream.events[-1].data['run_id']}"
    deadline = time.monotonic() + 2.0
    while any(t.name == thread_name for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the run thread is still in hermes"
        await asyncio.sleep(0.05)
    # The session is free again and its next run works.
    again, _ = await _run(bridge, run_body(model, "hello again", "idle-s"))
    assert again.events[-1].type == "run_completed"
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=10) as client:
        assert (await client.get("/health")).json()["active_runs"] == 0


async def test_the_watchdog_leaves_a_run_waiting_for_an_answer_alone(
    start_bridge: Any, fake_model: RunningFakeModel
) -> None:
    bridge = await _warm_bridge(start_bridge, fake_model, "idle-ask-s", 1.0)
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, run_body(bridge.model(fake_model), "ask me", "idle-ask-s"))
        answered: list[asyncio.Task] = []

        async def answer_after_2s(event: Received) -> None:
            if event.type == "clarify_request":

                async def later() -> httpx.Response:
                    await asyncio.sleep(2.0)
                    body = {"clarify_id": event.data["clarify_id"], "answer": "blue"}
                    return await client.post(f"/runs/{run_id}/clarify", json=body)

                answered.append(asyncio.create_task(later()))

        stream = await read_events(client, run_id, on_event=answer_after_2s)
        assert (await answered[0]).status_code == 200
    assert stream.events[-1].type == "run_completed", stream.events[-1].data
    assert stream.events[-1].data["final_text"] == "You chose blue."


def test_the_watchdog_names_a_tool_that_went_quiet() -> None:
    request = StartRunRequest(
        user=1, session_id="s", message="m", model={"base_url": "http://x/v1", "model": "m"}
    )
    run = Run(request, "r1", clarify_max_wait_s=60)
    run.buffer.emit("tool_start", call_id="c1", tool="terminal", args={})
    assert not run.expire_if_idle(60.0)
    time.sleep(0.06)
    assert run.expire_if_idle(0.05)
    assert run.status == RunState.FAILED
    assert run.buffer.all()[-1].data["error"] == (
        "The tool terminal gave no result for 0.05 seconds; the run was stopped."
    )
    assert not run.expire_if_idle(0.05)  # one terminal event only
    assert [e.type for e in run.buffer.all()] == ["tool_start", "run_failed"]


def test_a_run_waiting_for_an_answer_is_never_idle() -> None:
    request = StartRunRequest(
        user=1, session_id="s", message="m", model={"base_url": "http://x/v1", "model": "m"}
    )
    run = Run(request, "r2", clarify_max_wait_s=60)
    answers: list[str] = []
    agent = threading.Thread(target=lambda: answers.append(run.ask("Which one?", None)))
    agent.start()  # the agent asks and waits for the person
    deadline = time.monotonic() + 10
    while run.status != RunState.WAITING_INPUT:
        assert time.monotonic() < deadline, "the run never waited for an answer"
        time.sleep(0.01)
    time.sleep(0.06)
    assert not run.expire_if_idle(0.05)
    assert run.status == RunState.WAITING_INPUT
    question = run.snapshot()["pending_clarify"]
    assert run.answer(question["clarify_id"], "the red one")
    agent.join(10)
    assert answers == ["the red one"] and run.status == RunState.RUNNING


def test_keepalives_are_not_events_for_the_idle_clock() -> None:
    buffer = EventBuffer("r")
    buffer.emit("status", category="thinking", message="x")
    time.sleep(0.05)
    assert buffer.idle_for() >= 0.05


def test_idle_timeout_setting_defaults_to_ten_minutes_and_reads_the_env() -> None:
    assert BridgeSettings().run_idle_timeout_s == 600.0
    assert load_bridge_settings({}).run_idle_timeout_s == 600.0
    assert load_bridge_settings({"AGENT_CHAT_RUN_IDLE_TIMEOUT_S": "90"}).run_idle_timeout_s == 90
    assert idle_sentence(600) == "No answer from the model for 10 minutes; the run was stopped."
    assert [duration_words(s) for s in (1, 1.5, 60, 90, 600)] == [
        "1 second",
        "1.5 seconds",
        "1 minute",
        "90 seconds",
        "10 minutes",
    ]


# ---- hermes' texts that the fake cannot easily provoke ---------------------------------------


def test_hermes_texts_map_to_sentences_not_reprs() -> None:
    url = "http://m/v1"
    cases = {
        "stale": {
            "failed": True,
            "error": "Provider has been unresponsive (no response received) for 6 consecutive "
            "stale attempts — aborting this call to avoid an indefinite stall.",
        },
        "length": {
            "completed": False,
            "partial": True,
            "error": "Response remained truncated after 4 continuation attempts",
            "messages": [{"role": "user", "content": "[System: Your response was truncated]"}],
        },
        "403": {"failed": True, "error": "HTTP 403: Forbidden"},
        "404": {"failed": True, "error": "HTTP 404: model not found"},
        "502": {
            "failed": True,
            "error": "HTTP 502 — Bad gateway",
            "final_response": "API call failed after 3 retries: HTTP 502 — Bad gateway",
        },
        "other": {"failed": True, "error": "Something odd\nwith a second line"},
        "nothing": {"failed": True},
    }
    got = {name: readable_failure(result, url) for name, result in cases.items()}
    assert got["stale"].startswith("The model endpoint at http://m/v1 sent nothing for too long")
    assert got["length"].startswith("The model's answer kept hitting its output token limit")
    assert got["403"] == http_status_sentence(403)
    assert "check the base URL" in got["404"]
    assert got["502"] == (
        "The model endpoint failed with a server error (HTTP 502) 3 times in a row. "
        "It said: Bad gateway"
    )
    assert got["other"] == "The model call failed: Something odd with a second line"
    assert got["nothing"].startswith("The agent stopped without an answer")


# ---- honest outcomes: hermes' "completed" turns without an answer ----------------------------


async def test_empty_answers_fail_with_a_sentence_not_hermes_cli_notice(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    fake_model.reset()
    error = await _failed_with(
        bridge, run_body(bridge.model(fake_model), "emptyanswer please", "fault-empty")
    )
    attempts = len(fake_model.requests())
    assert attempts > 1  # hermes retried
    assert error == f"The model returned an empty answer {attempts} times."
    assert "No reply" not in error and "continue" not in error


async def test_a_cut_answer_whose_continuation_is_empty_fails_and_keeps_the_partial_text(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    fake_model.reset()
    stream, _ = await _run(
        bridge, run_body(bridge.model(fake_model), "cutthenempty hi there friend", "fault-cte")
    )
    assert stream.events[-1].type == "run_failed", stream.types()
    assert "No reply" not in stream.events[-1].data["error"]
    # The text that arrived before the cut is what the app keeps as the answer.
    assert stream.text().startswith("Echo: cutthenempty hi")


async def test_a_stop_during_hermes_retry_wait_ends_stopped_without_hermes_text(
    bridge: RunningBridge, fake_model: RunningFakeModel, hermes_home: Path
) -> None:
    fake_model.reset()
    with api_retries(hermes_home, 3):
        async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
            body = run_body(bridge.model(fake_model), "error500 hi", "fault-stop-retry")
            run_id = await start_run(client, body)

            async def stop_when_retrying(event: Received) -> None:
                if len(fake_model.requests()) >= 1 and event.type == "status":
                    await client.post(f"/runs/{run_id}/stop")

            stream = await read_events(client, run_id, on_event=stop_when_retrying)
    assert stream.events[-1].type == "run_stopped", stream.types()
    assert stream.events[-1].data["final_text"] == ""
    assert len(fake_model.requests()) < 3  # stopped before hermes used its retries

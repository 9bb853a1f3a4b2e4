"""BridgeClient against a real bridge (uvicorn in a thread) and the scripted fake model."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from agent_chat.protocol.events import RunEvent
from agent_chat.runs.client import (
    BridgeClient,
    BridgeError,
    BridgeUnavailable,
    RunNotFound,
)
from tests.fakes.model_server import RunningFakeModel, free_port
from tests.support.bridge import RunningBridge


def new_session() -> str:
    return f"client-{uuid.uuid4().hex[:8]}"


async def start(client: BridgeClient, bridge: RunningBridge, fake: RunningFakeModel, text: str):
    return await client.start_run(
        user_id=1, session_id=new_session(), message=text, history=[], model=bridge.model(fake)
    )


async def collect(events: AsyncIterator[RunEvent]) -> list[RunEvent]:
    return [event async for event in events]


class CuttingTransport(httpx.AsyncHTTPTransport):
    """Drops the first `cuts` event streams after `after` events, like a network failure."""

    def __init__(self, *, after: int, cuts: int = 1) -> None:
        super().__init__()
        self.after = after
        self.cuts = cuts
        self.stream_requests: list[dict[str, str]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        if request.url.path.endswith("/events"):
            self.stream_requests.append(dict(request.headers))
            if self.cuts > 0:
                self.cuts -= 1
                response.stream = _CutStream(response.stream, self.after)
        return response


class _CutStream(httpx.AsyncByteStream):
    """Passes whole SSE frames through, then fails like a dropped connection."""

    def __init__(self, inner: Any, frames: int) -> None:
        self.inner = inner
        self.frames = frames

    async def __aiter__(self) -> AsyncIterator[bytes]:
        buffer = b""
        sent = 0
        async for chunk in self.inner:
            buffer += chunk
            while b"\n\n" in buffer:
                frame, buffer = buffer.split(b"\n\n", 1)
                yield frame + b"\n\n"
                if frame.startswith(b"id:"):
                    sent += 1
                    if sent >= self.frames:
                        raise httpx.ReadError("connection reset by peer (test)")
        raise AssertionError("the stream ended before it was cut")

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
async def client(bridge: RunningBridge) -> AsyncIterator[BridgeClient]:
    client = BridgeClient(bridge.base_url)
    yield client
    await client.aclose()


async def test_health_answers(client: BridgeClient) -> None:
    health = await client.health()
    assert health["status"] == "ok"


async def test_a_run_streams_contiguous_seqs_until_run_completed(
    client: BridgeClient, bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    run_id = await start(client, bridge, fake_model, "hello there")
    events = await collect(client.events(run_id))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert events[0].type == "run_started"
    assert events[-1].type == "run_completed" and events[-1].is_terminal
    assert sum(e.is_terminal for e in events) == 1
    text = "".join(e.data["text"] for e in events if e.type == "text_delta")
    assert text == "Echo: hello there"
    assert events[-1].data["final_text"] == "Echo: hello there"
    state = await client.run_state(run_id)
    assert state["status"] == "succeeded" and state["last_event_id"] == events[-1].seq


async def test_events_after_last_event_id_replays_exactly_the_rest(
    client: BridgeClient, bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    run_id = await start(client, bridge, fake_model, "long 20")
    everything = await collect(client.events(run_id))
    n = len(everything) // 2
    rest = await collect(client.events(run_id, last_event_id=n))
    assert rest == everything[n:]
    assert rest[0].seq == n + 1


async def test_a_dropped_stream_reconnects_and_yields_every_event_once(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    transport = CuttingTransport(after=5)
    client = BridgeClient(bridge.base_url, transport=transport)
    reference = BridgeClient(bridge.base_url)
    connection: list[bool] = []
    try:
        run_id = await start(client, bridge, fake_model, "long 30")
        events = await collect(client.events(run_id, on_connection=connection.append))
        expected = await collect(reference.events(run_id))
    finally:
        await client.aclose()
        await reference.aclose()
    assert events == expected
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert events[-1].type == "run_completed"
    assert connection == [False, True]
    assert len(transport.stream_requests) == 2
    assert "last-event-id" not in transport.stream_requests[0]
    assert transport.stream_requests[1]["last-event-id"] == "5"


async def test_unknown_run_is_run_not_found(client: BridgeClient) -> None:
    with pytest.raises(RunNotFound):
        await client.run_state("no-such-run")
    with pytest.raises(RunNotFound):
        await collect(client.events("no-such-run"))
    with pytest.raises(RunNotFound):
        await client.stop("no-such-run")


async def test_bridge_not_listening_is_bridge_unavailable_with_a_readable_message() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    client = BridgeClient(url, reconnect_for=0.3)
    try:
        with pytest.raises(BridgeUnavailable) as excinfo:
            await client.health()
        assert url in excinfo.value.message and "not reachable" in excinfo.value.message
        with pytest.raises(BridgeUnavailable) as excinfo:
            await client.start_run(
                user_id=1,
                session_id="s",
                message="hi",
                history=[],
                model={"base_url": "x", "model": "m"},
            )
        assert url in str(excinfo.value)
        seen: list[bool] = []
        with pytest.raises(BridgeUnavailable) as excinfo:
            await collect(client.events("some-run", on_connection=seen.append))
        assert url in excinfo.value.message and "Lost the connection" in excinfo.value.message
        assert seen == [False]
    finally:
        await client.aclose()


async def test_duplicate_run_id_is_a_bridge_error_with_the_bridges_detail(
    client: BridgeClient, bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    run_id = f"dup-{uuid.uuid4().hex[:8]}"
    model = bridge.model(fake_model)
    await client.start_run(
        user_id=1, session_id=new_session(), message="hi", history=[], model=model, run_id=run_id
    )
    with pytest.raises(BridgeError) as excinfo:
        await client.start_run(
            user_id=1,
            session_id=new_session(),
            message="hi",
            history=[],
            model=model,
            run_id=run_id,
        )
    assert excinfo.value.status_code == 409
    assert not isinstance(excinfo.value, (BridgeUnavailable, RunNotFound))
    assert run_id in excinfo.value.message
    await collect(client.events(run_id))


async def test_second_run_of_a_session_is_409_with_the_bridges_detail(
    client: BridgeClient, bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    session_id = new_session()
    model = bridge.model(fake_model)
    run_id = await client.start_run(
        user_id=1, session_id=session_id, message="ask", history=[], model=model
    )
    with pytest.raises(BridgeError) as excinfo:
        await client.start_run(
            user_id=1, session_id=session_id, message="hi", history=[], model=model
        )
    assert excinfo.value.status_code == 409
    assert excinfo.value.message  # the bridge's sentence, not an empty string
    await client.stop(run_id)
    events = await collect(client.events(run_id))
    assert events[-1].type == "run_stopped"


async def test_bad_body_is_a_bridge_error_with_the_validation_detail(
    client: BridgeClient,
) -> None:
    with pytest.raises(BridgeError) as excinfo:
        await client.start_run(
            user_id=1,
            session_id="s",
            message="hi",
            history=[],
            model={"base_url": "", "model": "m"},
        )
    assert excinfo.value.status_code == 422
    assert "at least 1 character" in excinfo.value.message


async def test_clarify_answer_and_stop_round_trip(
    client: BridgeClient, bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    run_id = await start(client, bridge, fake_model, "ask me")
    events: list[RunEvent] = []
    async for event in client.events(run_id):
        events.append(event)
        if event.type == "clarify_request":
            state = await client.run_state(run_id)
            assert state["status"] == "waiting_input"
            assert state["pending_clarify"]["clarify_id"] == event.data["clarify_id"]
            await client.answer_clarify(run_id, event.data["clarify_id"], "green")
    assert events[-1].type == "run_completed"
    assert events[-1].data["final_text"] == "You chose green."
    clarify_id = next(e.data["clarify_id"] for e in events if e.type == "clarify_request")
    with pytest.raises(BridgeError) as excinfo:  # already answered
        await client.answer_clarify(run_id, clarify_id, "red")
    assert excinfo.value.status_code == 404
    # A second answer is not a lost run: callers treat RunNotFound as "the bridge restarted".
    assert not isinstance(excinfo.value, RunNotFound)
    stopped = await client.stop(run_id)  # stop on a finished run reports its status
    assert stopped["status"] == "succeeded"


async def test_events_after_the_end_of_a_finished_run_stop_at_once(
    client: BridgeClient, bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    # A re-attaching app may already hold the terminal event: nothing more will come.
    run_id = await start(client, bridge, fake_model, "hello")
    everything = await collect(client.events(run_id))
    seen: list[bool] = []
    rest = await asyncio.wait_for(
        collect(client.events(run_id, last_event_id=everything[-1].seq, on_connection=seen.append)),
        timeout=5,
    )
    assert rest == []
    assert seen == []  # not reported as an outage

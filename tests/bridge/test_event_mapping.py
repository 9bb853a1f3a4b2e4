"""Every event type of protocol/events.py, from the real hermes agent against the fake model."""

from __future__ import annotations

import httpx

from tests.fakes.model_server import TODO_ITEMS, RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.sse import TERMINAL, TEST_USER, Stream, read_events, run_body, start_run


async def _run(bridge: RunningBridge, body: dict) -> Stream:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, body)
        return await read_events(client, run_id)


def _assert_well_formed(stream: Stream) -> None:
    assert [e.seq for e in stream.events] == list(range(1, len(stream.events) + 1))
    for event in stream.events:
        assert {"run_id", "seq", "ts"} <= event.data.keys()
        assert event.data["seq"] == event.seq
        assert isinstance(event.data["ts"], float)
    terminal = [e for e in stream.events if e.type in TERMINAL]
    assert len(terminal) == 1 and stream.events[-1] is terminal[0]


async def test_todo_run_emits_step_status_text_tool_and_todo_events(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    stream = await _run(bridge, run_body(bridge.model(fake_model), "make a todo plan", "todo-s"))
    _assert_well_formed(stream)
    types = stream.types()

    started = stream.first("run_started").data
    assert started["session_id"] == "todo-s" and started["model"] == "fake-model"
    assert stream.first("step").data["iteration"] == 1
    assert stream.of("step")[1].data == {
        **stream.of("step")[1].data,
        "iteration": 2,
        "tools": ["todo"],
    }
    thinking = [e for e in stream.of("status") if e.data["category"] == "thinking"]
    assert thinking and thinking[0].data["message"]
    # The text streamed before the tool call ends with a break, then the tool runs.
    assert types.index("text_break") < types.index("tool_start")
    assert "Let me make a plan." in stream.text()

    tool_start = stream.first("tool_start").data
    assert tool_start["tool"] == "todo" and tool_start["args"]["todos"] == TODO_ITEMS
    progress = [e.data for e in stream.of("tool_progress")]
    assert {"tool.started", "tool.completed"} <= {p["event"] for p in progress}
    assert all({"tool", "event", "preview"} <= p.keys() for p in progress)
    tool_end = stream.first("tool_end").data
    assert tool_end["call_id"] == tool_start["call_id"] and tool_end["tool"] == "todo"
    assert tool_end["is_error"] is False and tool_end["duration_ms"] >= 0
    assert '"todos"' in tool_end["result"]

    todo = stream.first("todo_update").data
    assert todo["todos"] == TODO_ITEMS
    assert todo["summary"]["total"] == 3 and todo["summary"]["in_progress"] == 1

    completed = stream.events[-1]
    assert completed.type == "run_completed"
    assert completed.data["final_text"] == "Plan made."
    usage = completed.data["usage"]
    assert set(usage) == {"input_tokens", "output_tokens", "total_tokens", "context_tokens"}
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
    # Two model calls (the todo, then the answer): the window held the last one's prompt.
    assert 0 < usage["context_tokens"] < usage["input_tokens"]


async def test_think_run_streams_reasoning_then_answer(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    stream = await _run(bridge, run_body(bridge.model(fake_model), "think about it", "think-s"))
    _assert_well_formed(stream)
    reasoning = "".join(e.data["text"] for e in stream.of("reasoning_delta"))
    assert reasoning.startswith("Let me think about this.")
    assert stream.types().index("reasoning_delta") < stream.types().index("text_delta")
    assert stream.events[-1].data["final_text"] == "After thinking: the answer is 42."


async def test_history_and_system_prompt_reach_the_model(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    history = [
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Hello Ada."},
    ]
    body = run_body(
        bridge.model(fake_model),
        "please recall",
        "recall-s",
        history=history,
        system_prompt="You are a pirate skill.",
    )
    fake_model.reset()
    stream = await _run(bridge, body)
    assert stream.events[-1].data["final_text"] == "Earlier you said: My name is Ada."
    sent = fake_model.requests()[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] in ("user", "assistant")][:2] == [
        "My name is Ada.",
        "Hello Ada.",
    ]
    system = " ".join(str(m["content"]) for m in sent if m["role"] == "system")
    assert "You are a pirate skill." in system


async def test_agent_keeps_no_history_between_runs_of_a_session(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    model = bridge.model(fake_model)
    first = await _run(bridge, run_body(model, "hello there", "fresh-s"))
    assert first.events[-1].data["final_text"] == "Echo: hello there"
    second = await _run(bridge, run_body(model, "recall", "fresh-s"))
    assert second.events[-1].data["final_text"] == "I have no earlier message."


async def test_long_history_triggers_real_compaction_event(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    # ~250K characters against a 64K window: hermes' preflight compression must run.
    history = []
    for i in range(20):
        history.append({"role": "user", "content": f"question {i} " + "lorem ipsum dolor " * 350})
        history.append({"role": "assistant", "content": f"answer {i} " + "sit amet elit " * 400})
    model = bridge.model(fake_model, context_length=64000, max_tokens=1000)
    stream = await _run(
        bridge, run_body(model, "hello after a long talk", "compact-s", history=history)
    )
    _assert_well_formed(stream)
    compacted = stream.first("context_compacted").data
    assert compacted["compression_count"] == 1
    assert compacted["summary"]
    lifecycle = [
        e.data["message"] for e in stream.of("status") if e.data["category"] == "lifecycle"
    ]
    assert any("ompact" in m or "ompress" in m for m in lifecycle)
    assert stream.events[-1].data["final_text"] == "Echo: hello after a long talk"


async def test_model_endpoint_down_fails_with_readable_error(
    bridge: RunningBridge,
) -> None:
    model = {"base_url": "http://127.0.0.1:9/v1", "model": "fake-model"}
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=90) as client:
        run_id = await start_run(client, run_body(model, "hello", "down-s"))
        stream = await read_events(client, run_id)
        state = (await client.get(f"/runs/{run_id}")).json()
    _assert_well_formed(stream)
    failed = stream.events[-1]
    assert failed.type == "run_failed"
    assert "Could not reach the model endpoint at http://127.0.0.1:9/v1" in failed.data["error"]
    assert state["status"] == "failed" and state["error"] == failed.data["error"]


async def test_model_http_500_fails_the_run(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    stream = await _run(bridge, run_body(bridge.model(fake_model), "error500 please", "e500-s"))
    _assert_well_formed(stream)
    assert stream.events[-1].type == "run_failed"
    assert stream.events[-1].data["error"]


def _system_text(request: dict) -> str:
    return " ".join(str(m["content"]) for m in request["messages"] if m["role"] == "system")


async def test_memory_edit_reaches_the_next_run_of_a_pooled_session(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    model = bridge.model(fake_model)
    await _run(bridge, run_body(model, "hello", "mem-s"))  # the session's agent is now pooled
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=10) as client:
        put = await client.put(
            "/memory",
            params={"user": TEST_USER},
            json={"memory": "The user's favourite colour is teal."},
        )
    try:
        assert put.status_code == 200
        fake_model.reset()
        await _run(bridge, run_body(model, "hello again", "mem-s"))
        assert "favourite colour is teal" in _system_text(fake_model.requests()[-1])
    finally:
        async with httpx.AsyncClient(base_url=bridge.base_url, timeout=10) as client:
            await client.put("/memory", params={"user": TEST_USER}, json={"memory": ""})


async def test_project_files_in_the_bridge_cwd_stay_out_of_the_prompt(
    bridge: RunningBridge,
    fake_model: RunningFakeModel,
    tmp_path,
    monkeypatch,
) -> None:
    (tmp_path / "AGENTS.md").write_text("SECRET-PROJECT-RULES", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    fake_model.reset()
    await _run(bridge, run_body(bridge.model(fake_model), "hello", "cwd-s"))
    assert "SECRET-PROJECT-RULES" not in _system_text(fake_model.requests()[-1])

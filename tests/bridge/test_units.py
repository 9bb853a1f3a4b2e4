"""Plain units of the bridge: truncation, callback mapping, the agent pool, settings."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from agent_chat.bridge.events import EventBuffer
from agent_chat.bridge.hermes_callbacks import CallbackMapper
from agent_chat.bridge.pool import AgentPool
from agent_chat.bridge.schemas import ModelSpec
from agent_chat.bridge.settings import load_bridge_settings
from agent_chat.bridge.truncation import LIMIT_CHARS, cut_args, cut_text


def _mapper(buffer: EventBuffer) -> CallbackMapper:
    return CallbackMapper(
        emit=buffer.emit, ask=lambda q, c: "yes", on_step=lambda: None, summary=lambda: "sum"
    )


def test_long_text_is_cut_with_a_marker_saying_how_much() -> None:
    text = "a" * (LIMIT_CHARS + 500)
    cut = cut_text(text)
    assert cut.startswith("a" * LIMIT_CHARS) and cut.endswith("[truncated 500 chars]")
    assert cut_text("short") == "short"


def test_long_args_stay_an_object_with_cut_string_values() -> None:
    args = {"path": "/tmp/x", "content": "b" * 50_000}
    cut = cut_args(args)
    assert isinstance(cut, dict) and cut["path"] == "/tmp/x"
    assert "truncated" in cut["content"]
    assert len(json.dumps(cut)) < LIMIT_CHARS + 200


def test_tool_end_gets_duration_and_error_matched_by_name_and_order() -> None:
    buffer = EventBuffer("r")
    mapper = _mapper(buffer)
    for call_id in ("c1", "c2"):
        mapper.on_tool_start(call_id, "memory", {"action": "add"})
    mapper.on_tool_progress("tool.completed", "memory", None, None, duration=0.5, is_error=False)
    mapper.on_tool_progress("tool.completed", "memory", None, None, duration=0.25, is_error=True)
    mapper.on_tool_complete("c1", "memory", {}, '{"ok": true}')
    mapper.on_tool_complete("c2", "memory", {}, '{"error": "full"}')
    ends = [e.data for e in buffer.all() if e.type == "tool_end"]
    assert [(e["call_id"], e["duration_ms"], e["is_error"]) for e in ends] == [
        ("c1", 500.0, False),
        ("c2", 250.0, True),
    ]


def test_todo_result_is_never_truncated_and_becomes_todo_update() -> None:
    buffer = EventBuffer("r")
    todos = [{"id": str(i), "content": "x" * 300, "status": "pending"} for i in range(100)]
    result = json.dumps({"todos": todos, "summary": {"total": 100}})
    assert len(result) > LIMIT_CHARS
    _mapper(buffer).on_tool_complete("c", "todo", {}, result)
    events = {e.type: e.data for e in buffer.all()}
    assert events["tool_end"]["result"] == result
    assert events["todo_update"]["todos"] == todos


def test_reasoning_available_progress_is_not_forwarded() -> None:
    buffer = EventBuffer("r")
    _mapper(buffer).on_tool_progress("reasoning.available", "_thinking", "the answer", None)
    assert buffer.all() == []


def test_a_failing_callback_is_logged_loudly(caplog: pytest.LogCaptureFixture) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    mapper = CallbackMapper(emit=broken, ask=lambda q, c: "", on_step=lambda: None, summary=str)
    with caplog.at_level(logging.ERROR):
        mapper.on_stream_delta("hi")  # must not raise into hermes
    assert any("stream_delta callback failed" in r.message and r.exc_info for r in caplog.records)


def test_nothing_is_emitted_after_the_terminal_event() -> None:
    buffer = EventBuffer("r")
    buffer.emit("run_completed", final_text="", usage={})
    assert buffer.emit("text_delta", text="late") is None
    assert [e.type for e in buffer.all()] == ["run_completed"]


def test_pool_reuses_per_session_rebuilds_for_other_model_and_evicts_lru() -> None:
    built: list[tuple[str, str]] = []

    def factory(user_id: int, session_id: str, model: ModelSpec, profile: str, mcp=()) -> object:
        built.append((session_id, model.model))
        return object()

    pool = AgentPool(factory, size=2)
    model_a = ModelSpec(base_url="http://m/v1", model="a")
    model_b = ModelSpec(base_url="http://m/v1", model="b")
    first = pool.acquire(1, "s1", model_a)
    pool.release(1, "s1", first)
    assert pool.acquire(1, "s1", model_a) is first
    pool.release(1, "s1", first)
    other = pool.acquire(1, "s1", model_b)
    assert other is not first
    pool.release(1, "s1", other)
    for sid in ("s2", "s3"):
        pool.release(1, sid, pool.acquire(1, sid, model_a))
    assert len(pool) == 2  # s1 was the least recently used
    assert pool.acquire(1, "s1", model_b) is not other
    assert built[-1] == ("s1", "b")


def test_pool_builds_a_new_agent_for_another_tool_profile() -> None:
    built: list[str] = []

    def factory(user_id: int, session_id: str, model: ModelSpec, profile: str, mcp=()) -> object:
        built.append(profile)
        return object()

    pool = AgentPool(factory, size=2)
    model = ModelSpec(base_url="http://m/v1", model="a")
    chat = pool.acquire(1, "s1", model, "chat")
    pool.release(1, "s1", chat)
    work = pool.acquire(1, "s1", model, "workspace")
    assert work is not chat and built == ["chat", "workspace"]


def test_settings_come_from_the_environment() -> None:
    settings = load_bridge_settings(
        {
            "HERMES_HOME": "/tmp/hh",
            "AGENT_CHAT_BRIDGE_TOKEN": "tok",
            "AGENT_CHAT_MAX_ACTIVE_RUNS": "2",
            "AGENT_CHAT_AGENT_POOL_SIZE": "3",
            "AGENT_CHAT_TOOLSETS": "web, terminal",
            "AGENT_CHAT_BRIDGE_KEEPALIVE_S": "0.5",
        }
    )
    assert str(settings.hermes_home) == "/tmp/hh" and settings.token == "tok"
    assert settings.max_active_runs == 2 and settings.agent_pool_size == 3
    assert settings.toolsets == ["todo", "clarify", "memory", "skills", "web", "terminal"]
    assert settings.tool_profiles == ("chat",)
    assert settings.keepalive_interval_s == 0.5
    defaults = load_bridge_settings({})
    assert defaults.max_active_runs == 5 and defaults.agent_pool_size == 8
    both = load_bridge_settings({"AGENT_CHAT_TOOL_PROFILES": "chat, workspace"})
    assert both.tool_profiles == ("chat", "workspace")
    assert both.toolsets_for("workspace") == [
        *["todo", "clarify", "memory", "skills"],
        *["file", "terminal", "code_execution", "delegation"],
    ]
    with pytest.raises(ValueError, match="unknown profile 'shell'"):
        load_bridge_settings({"AGENT_CHAT_TOOL_PROFILES": "chat,shell"})
    assert defaults.hermes_home.parts[-2:] == ("data", "hermes")
    with pytest.raises(ValueError, match="AGENT_CHAT_MAX_ACTIVE_RUNS"):
        load_bridge_settings({"AGENT_CHAT_MAX_ACTIVE_RUNS": "many"})


def test_status_spinner_and_notices_become_status_events() -> None:
    buffer = EventBuffer("r")
    mapper = _mapper(buffer)
    mapper.on_thinking("(◕‿◕) pondering...")
    mapper.on_thinking("")
    mapper.on_thinking("")  # a repeated clear is not sent twice
    mapper.on_status("warn", "Auxiliary compression failed")

    class Notice:
        text = "Credits are running low"

    mapper.on_notice(Notice())
    assert [(e.data["category"], e.data["message"]) for e in buffer.all()] == [
        ("thinking", "(◕‿◕) pondering..."),
        ("thinking", ""),
        ("warn", "Auxiliary compression failed"),
        ("notice", "Credits are running low"),
    ]

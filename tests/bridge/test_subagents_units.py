"""bridge/subagents.py without hermes: a child announced by hermes' relay gets this bridge's
callbacks and the run's context on whatever thread runs it, its events are renamed and tagged,
its end is mapped to a run state, and children's threads share one seq order."""

from __future__ import annotations

import contextvars
import logging
import threading
from typing import Any

import pytest

from agent_chat.bridge import workspace
from agent_chat.bridge.events import EventBuffer
from agent_chat.bridge.hermes_callbacks import CallbackMapper
from agent_chat.bridge.subagents import NOT_CONFINED, Subagents, child_failure
from agent_chat.protocol.reducer import replay

MARK: contextvars.ContextVar[str] = contextvars.ContextVar("test_mark", default="no context")


class FakeChild:
    """What bridge/subagents.py touches of a hermes child AIAgent."""

    def __init__(self, subagent_id: str, result: dict[str, Any] | None = None) -> None:
        self._subagent_id = subagent_id
        self.base_url = "http://model.test/v1"
        self.relayed: list[str] = []
        self.tool_progress_callback = lambda event, *a, **kw: self.relayed.append(event)
        self.tool_start_callback: Any = None
        self.clarify_callback: Any = None
        self.seen_mark = ""
        self._result = result or {"final_response": "done", "completed": True}

    def run_conversation(self, user_message: str, task_id: str = "", **kw: Any) -> dict:
        self.seen_mark = MARK.get()
        return self._result


class FakeParent:
    def __init__(self, *children: FakeChild) -> None:
        self._active_children = list(children)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, type_: str, **fields: Any) -> None:
        self.events.append((str(type_), fields))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [fields for t, fields in self.events if t == kind]


def mapper(emit: Any, subagents: Subagents | None) -> CallbackMapper:
    return CallbackMapper(
        emit=emit, ask=lambda q, c: "", on_step=lambda: None, summary=str, subagents=subagents
    )


def start_relay(subagent_id: str, **extra: Any) -> dict[str, Any]:
    """What hermes' relay passes the parent's tool_progress_callback at `subagent.start`."""
    return {
        "task_index": 1,
        "task_count": 2,
        "goal": "Count the files",
        "subagent_id": subagent_id,
        "depth": 0,
        "model": "fake-model",
        "toolsets": ["todo", "file"],
        "tool_count": 0,
        **extra,
    }


def in_thread(func: Any, *args: Any, **kwargs: Any) -> Any:
    """Run on a fresh thread (an empty context), as hermes' pools do."""
    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(func(*args, **kwargs)))
    thread.start()
    thread.join()
    return box[0]


def test_a_child_runs_in_the_context_of_its_delegate_task_call_on_any_thread() -> None:
    child = FakeChild("sa-1-abc")
    emit = Recorder()
    parent = mapper(emit, Subagents(emit, FakeParent(child), task_id="session-1"))
    token = MARK.set("the run's context")
    try:
        parent.on_tool_start("call-d", "delegate_task", {"tasks": []})
    finally:
        MARK.reset(token)
    # hermes announces a batch's child on a pool thread, and runs it on another.
    in_thread(
        parent.on_tool_progress,
        "subagent.start",
        None,
        "Count the files",
        None,
        **start_relay("sa-1-abc"),
    )
    in_thread(child.run_conversation, "Count the files")
    assert child.seen_mark == "the run's context"
    (start,) = emit.of("subagent_start")
    assert start == {
        "subagent": "sa-1-abc",
        "parent_call_id": "call-d",
        "goal": "Count the files",
        "toolsets": ["todo", "file"],
        "model": "fake-model",
        "index": 1,
    }
    assert not emit.of("tool_progress")  # the relay itself is not a tool progress


def test_the_childs_callbacks_emit_renamed_tagged_events_and_hermes_relay_still_hears() -> None:
    child = FakeChild("sa-0-abc")
    emit = Recorder()
    parent = mapper(emit, Subagents(emit, FakeParent(child), task_id="s"))
    parent.on_tool_start("call-d", "delegate_task", {})
    parent.on_tool_progress("subagent.start", None, "g", None, **start_relay("sa-0-abc"))
    child.stream_delta_callback("Hello")  # type: ignore[attr-defined]
    child.stream_delta_callback(None)  # type: ignore[attr-defined]
    child.tool_start_callback("c1", "todo", {"todos": []})
    child.tool_progress_callback("tool.completed", "todo", None, None, duration=0.5)
    todos = '{"todos": [{"id": "1", "content": "x", "status": "pending"}], "summary": {}}'
    child.tool_complete_callback("c1", "todo", {}, todos)  # type: ignore[attr-defined]
    child.event_callback("session:compress", {})  # type: ignore[attr-defined]
    assert child.clarify_callback is None  # hermes gives children no questions
    kinds = [t for t, _ in emit.events]
    assert kinds == [
        "tool_start",
        "subagent_start",
        "subagent_text_delta",
        "subagent_text_break",
        "subagent_tool_start",
        "subagent_tool_progress",
        "subagent_tool_end",
        "subagent_todo_update",
    ]  # the child's compaction is not the conversation's: not forwarded
    assert all(f["subagent"] == "sa-0-abc" for t, f in emit.events if t != "tool_start")
    assert emit.of("subagent_tool_end")[0]["duration_ms"] == 500.0
    assert child.relayed == ["tool.completed"]  # hermes' relay and live transcript too


def test_the_end_carries_summary_usage_and_cost_under_the_same_call() -> None:
    child = FakeChild("sa-0-abc")
    emit = Recorder()
    parent = mapper(emit, Subagents(emit, FakeParent(child), task_id="s"))
    parent.on_tool_start("call-d", "delegate_task", {})
    parent.on_tool_progress("subagent.start", None, "g", None, **start_relay("sa-0-abc"))
    complete = {
        "status": "completed",
        "summary": "There are 3 files.",
        "duration_seconds": 1.25,
        "input_tokens": 120,
        "output_tokens": 30,
        "cost_usd": 0.002,
    }
    parent.on_tool_progress(
        "subagent.complete", None, "x", None, **start_relay("sa-0-abc", **complete)
    )
    parent.on_tool_progress(
        "subagent.complete", None, "x", None, **start_relay("sa-0-abc", **complete)
    )
    (end,) = emit.of("subagent_end")  # once
    assert end == {
        "subagent": "sa-0-abc",
        "parent_call_id": "call-d",
        "state": "succeeded",
        "usage": {"input_tokens": 120, "output_tokens": 30, "total_tokens": 150},
        "summary": "There are 3 files.",
        "duration_s": 1.25,
        "cost_usd": 0.002,
    }


@pytest.mark.parametrize(
    ("status", "extra", "state", "error"),
    [
        ("interrupted", {"summary": ""}, "stopped", None),
        (
            "failed",
            {"summary": "Subagent did not produce a response."},
            "failed",
            "Subagent did not produce a response.",
        ),
        (
            "timeout",
            {"preview": "Timed out after 30s", "summary": ""},
            "failed",
            "Timed out after 30s",
        ),
        ("error", {}, "failed", "The subagent failed."),
    ],
)
def test_hermes_child_statuses_map_to_run_states(
    status: str, extra: dict[str, Any], state: str, error: str | None
) -> None:
    child = FakeChild("sa-0-abc")
    emit = Recorder()
    subagents = Subagents(emit, FakeParent(child), task_id="s")
    subagents.call_started("call-d")
    subagents.relayed("subagent.start", start_relay("sa-0-abc"))
    subagents.relayed("subagent.complete", start_relay("sa-0-abc", status=status, **extra))
    (end,) = emit.of("subagent_end")
    assert end["state"] == state and end.get("error") == error
    assert end["usage"] == {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}


def test_a_turn_hermes_calls_completed_but_that_failed_ends_failed() -> None:
    failed = {
        "final_response": "API call failed after 3 retries: HTTP 401: bad key",
        "completed": False,
        "failed": True,
        "error": "HTTP 401: bad key",
    }
    child = FakeChild("sa-0-abc", result=failed)
    emit = Recorder()
    subagents = Subagents(emit, FakeParent(child), task_id="s")
    subagents.call_started("call-d")
    subagents.relayed("subagent.start", start_relay("sa-0-abc"))
    child.run_conversation("g")
    summary = failed["final_response"]
    subagents.relayed(
        "subagent.complete", start_relay("sa-0-abc", status="completed", summary=summary)
    )
    (end,) = emit.of("subagent_end")
    assert end["state"] == "failed" and "401" in end["error"] and "summary" not in end
    empty = {
        "final_response": "⚠️ No reply",
        "turn_exit_reason": "empty_response_exhausted",
        "api_calls": 4,
        "completed": True,
    }
    assert child_failure(empty, "u") == "The model returned an empty answer 4 times."
    assert child_failure({"final_response": "fine", "completed": True}, "u") is None
    assert child_failure({"interrupted": True, "failed": True}, "u") is None


def test_without_an_open_delegate_task_call_the_child_does_not_run() -> None:
    """The run's context is known only from the delegate_task call: a child announced
    outside one could not be confined, so it fails instead of running unconfined."""
    child = FakeChild("sa-0-abc")
    emit = Recorder()
    subagents = Subagents(emit, FakeParent(child), task_id="s")
    subagents.relayed("subagent.start", start_relay("sa-0-abc"))
    result = child.run_conversation("g")
    assert result["failed"] and result["error"] == NOT_CONFINED
    assert child.seen_mark == ""  # the real one never ran


def test_a_child_that_is_not_among_the_parents_children_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    emit = Recorder()
    subagents = Subagents(emit, FakeParent(), task_id="s")
    subagents.call_started("call-d")
    with caplog.at_level(logging.ERROR):
        subagents.relayed("subagent.start", start_relay("sa-0-lost"))
        subagents.relayed("subagent.complete", start_relay("sa-0-lost", status="completed"))
    assert emit.events == []
    assert "not confined" in caplog.text


def test_a_grandchilds_relay_is_left_to_its_parent() -> None:
    """hermes relays a nested child's start up through every level, with `parent_id`."""
    grandchild = FakeChild("sa-0-deep")
    child = FakeChild("sa-0-abc")
    child._active_children = [grandchild]  # type: ignore[attr-defined]
    emit = Recorder()
    top = mapper(emit, Subagents(emit, FakeParent(child), task_id="s"))
    top.on_tool_start("call-d", "delegate_task", {})
    top.on_tool_progress("subagent.start", None, "g", None, **start_relay("sa-0-abc"))
    top.on_tool_progress(
        "subagent.start", None, "g", None, **start_relay("sa-0-deep", parent_id="sa-0-abc")
    )
    assert [f["subagent"] for f in emit.of("subagent_start")] == ["sa-0-abc"]
    # The child's own mapper (its tool callbacks) takes its delegate_task call and children.
    child.tool_start_callback("call-e", "delegate_task", {})
    child.tool_progress_callback(
        "subagent.start", None, "g", None, **start_relay("sa-0-deep", parent_id="sa-0-abc")
    )
    nested = emit.of("subagent_start")[-1]
    assert (nested["subagent"], nested["parent_call_id"], nested["parent_subagent"]) == (
        "sa-0-deep",
        "call-e",
        "sa-0-abc",
    )
    view = replay([{"type": t, "seq": n, **f} for n, (t, f) in enumerate(emit.events, 1)])
    assert [s.subagent_id for s in view.children_of("call-e", parent_subagent="sa-0-abc")] == [
        "sa-0-deep"
    ]


def test_without_subagents_the_relays_are_dropped_not_shown_as_tool_progress() -> None:
    emit = Recorder()
    parent = mapper(emit, None)
    parent.on_tool_progress("subagent.start", None, "g", None, **start_relay("sa-0-abc"))
    parent.on_tool_progress("subagent.text", None, "hi", None, **start_relay("sa-0-abc"))
    parent.on_tool_progress("subagent_progress", "[1] todo")
    assert emit.events == []


def test_a_workspace_child_is_fenced_into_its_parents_folder_until_it_ends(tmp_path: Any) -> None:
    folder = tmp_path / "conversation"
    folder.mkdir()
    with workspace._lock:
        workspace._folders["session-fenced"] = folder
    try:
        child = FakeChild("sa-0-fence")
        emit = Recorder()
        subagents = Subagents(emit, FakeParent(child), task_id="session-fenced")
        subagents.call_started("call-d")
        subagents.relayed("subagent.start", start_relay("sa-0-fence"))
        assert workspace.folder_of("sa-0-fence") == folder
        subagents.relayed("subagent.complete", start_relay("sa-0-fence", status="completed"))
        assert workspace.folder_of("sa-0-fence") is None
        # One hermes gave up on (its timeout) may still work: it stays fenced.
        late = FakeChild("sa-1-fence")
        subagents = Subagents(emit, FakeParent(late), task_id="session-fenced")
        subagents.call_started("call-e")
        subagents.relayed("subagent.start", start_relay("sa-1-fence"))
        subagents.relayed("subagent.complete", start_relay("sa-1-fence", status="timeout"))
        assert workspace.folder_of("sa-1-fence") == folder
    finally:
        for task in ("session-fenced", "sa-1-fence"):
            workspace.close_workspace(task)


def test_children_on_parallel_threads_share_one_gapless_seq_order() -> None:
    buffer = EventBuffer("run-1")
    children = [FakeChild(f"sa-{n}-abc") for n in range(4)]
    subagents = Subagents(buffer.emit, FakeParent(*children), task_id="s")
    parent = mapper(buffer.emit, subagents)
    parent.on_tool_start("call-d", "delegate_task", {})
    for child in children:
        parent.on_tool_progress(
            "subagent.start", None, "g", None, **start_relay(child._subagent_id)
        )
    barrier = threading.Barrier(len(children))

    def work(child: FakeChild) -> None:
        barrier.wait()
        for n in range(300):
            child.stream_delta_callback(f"{child._subagent_id}:{n} ")  # type: ignore[attr-defined]

    threads = [threading.Thread(target=work, args=(c,)) for c in children]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events = buffer.all()
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    view = replay([{**e.data, "type": e.type} for e in events])
    for child in children:
        sid = child._subagent_id
        assert view.subagent(sid).text == "".join(f"{sid}:{n} " for n in range(300))

"""The reducer's tree of child agents (hermes' delegate_task): one node per child with its own
status, tools, todos, thinking, text, summary and usage, grouped by the call that made it."""

from __future__ import annotations

from typing import Any

from agent_chat.protocol.events import SUBAGENT_EVENT_OF, EventType
from agent_chat.protocol.log_codec import event_to_row, merge_rows, row_to_event
from agent_chat.protocol.reducer import RunView, apply, replay


def ev(seq: int, type_: str, **data: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "ts": 1000.0 + seq, "run_id": "r1", **data}


def fold(*events: dict[str, Any]) -> RunView:
    return replay(list(events))


def delegation(seq: int = 1, call_id: str = "d1") -> list[dict[str, Any]]:
    """The answer's delegate_task call and its two children."""
    return [
        ev(seq, "tool_start", call_id=call_id, tool="delegate_task", args={"tasks": []}),
        ev(
            seq + 1,
            "subagent_start",
            subagent="sa-0",
            parent_call_id=call_id,
            goal="Count the files",
            toolsets=["todo", "file"],
            model="fake-model",
            index=0,
        ),
        ev(
            seq + 2,
            "subagent_start",
            subagent="sa-1",
            parent_call_id=call_id,
            goal="Read the notes",
            toolsets=["todo", "file"],
            model="fake-model",
            index=1,
        ),
    ]


USAGE_A = {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}
USAGE_B = {"input_tokens": 200, "output_tokens": 20, "total_tokens": 220}


def test_every_forwarded_event_type_has_a_child_twin() -> None:
    assert {str(k) for k in SUBAGENT_EVENT_OF} == {
        "text_delta",
        "text_break",
        "reasoning_delta",
        "status",
        "step",
        "tool_start",
        "tool_progress",
        "tool_end",
        "todo_update",
    }
    assert all(child == f"subagent_{base}" for base, child in SUBAGENT_EVENT_OF.items())


def test_subagent_start_adds_a_child_under_its_delegate_task_call() -> None:
    view = fold(*delegation())
    first, second = view.children_of("d1")
    assert (first.subagent_id, first.parent_call_id, first.goal, first.index) == (
        "sa-0",
        "d1",
        "Count the files",
        0,
    )
    assert first.toolsets == ("todo", "file") and first.model == "fake-model"
    assert first.state == "running" and not first.finished
    assert first.work.started_ts == 1002.0
    assert second.subagent_id == "sa-1"
    assert view.children_of("another-call") == ()
    # The answer's own view is untouched: its current tool is still delegate_task.
    assert view.current_tool is not None and view.current_tool.tool == "delegate_task"
    assert view.status == "Running delegate_task"


def test_a_repeated_start_does_not_add_the_child_twice() -> None:
    view = fold(*delegation(), ev(4, "subagent_start", subagent="sa-0", parent_call_id="d1"))
    assert [s.subagent_id for s in view.subagents] == ["sa-0", "sa-1"]
    assert view.subagent("sa-0") is not None and view.subagent("sa-0").goal == "Count the files"


def test_child_events_build_the_childs_own_view_and_leave_the_answers_alone() -> None:
    todos = [{"id": "1", "content": "count", "status": "in_progress"}]
    view = fold(
        *delegation(),
        ev(4, "reasoning_delta", text="The answer thinks."),
        ev(5, "subagent_step", subagent="sa-0", iteration=1, tools=[]),
        ev(6, "subagent_reasoning_delta", subagent="sa-0", text="Child thought."),
        ev(7, "subagent_text_delta", subagent="sa-0", text="Let me count."),
        ev(8, "subagent_text_break", subagent="sa-0"),
        ev(9, "subagent_tool_start", subagent="sa-0", call_id="c1", tool="terminal", args={}),
        ev(
            10,
            "subagent_tool_progress",
            subagent="sa-0",
            call_id="c1",
            tool="terminal",
            event="x",
            preview="running ls",
        ),
        ev(11, "subagent_todo_update", subagent="sa-0", todos=todos, summary={}),
        ev(12, "subagent_status", subagent="sa-1", category="lifecycle", message="Retrying"),
        ev(13, "reasoning_delta", text=" Still the answer."),
    )
    child = view.subagent("sa-0")
    assert child is not None
    assert child.thinking == "Child thought.\n\nLet me count."
    assert child.text == ""
    assert child.current_tool is not None and child.current_tool.progress == "running ls"
    assert child.status == "terminal: running ls"
    assert child.todos == tuple(todos) and child.todo_counts == (0, 1)
    assert child.work.steps == 1
    assert view.subagent("sa-1").status == "Retrying"
    # The child's tool_start did not close the answer's reasoning, nor change its tools.
    assert view.thinking == "The answer thinks. Still the answer."
    assert [t.tool for t in view.tools] == ["delegate_task"]
    assert view.todos == () and view.answer == "" and view.steps == 0


def test_two_childrens_interleaved_text_stays_apart() -> None:
    view = fold(
        *delegation(),
        ev(4, "subagent_text_delta", subagent="sa-0", text="A1 "),
        ev(5, "subagent_text_delta", subagent="sa-1", text="B1 "),
        ev(6, "subagent_text_delta", subagent="sa-0", text="A2"),
        ev(7, "subagent_text_delta", subagent="sa-1", text="B2"),
    )
    assert view.subagent("sa-0").text == "A1 A2"
    assert view.subagent("sa-1").text == "B1 B2"
    assert view.answer == ""


def test_subagent_end_records_summary_usage_and_closes_its_tools() -> None:
    view = fold(
        *delegation(),
        ev(4, "subagent_tool_start", subagent="sa-0", call_id="c1", tool="terminal", args={}),
        ev(
            5,
            "subagent_tool_end",
            subagent="sa-0",
            call_id="c1",
            tool="terminal",
            result="3",
            duration_ms=4.0,
            is_error=False,
        ),
        ev(6, "subagent_tool_start", subagent="sa-0", call_id="c2", tool="read_file", args={}),
        ev(7, "subagent_text_delta", subagent="sa-0", text="There are 3 files."),
        ev(
            8,
            "subagent_end",
            subagent="sa-0",
            parent_call_id="d1",
            state="succeeded",
            summary="There are 3 files.",
            usage=USAGE_A,
            cost_usd=0.25,
            duration_s=1.5,
        ),
    )
    child = view.subagent("sa-0")
    assert child.state == "succeeded" and child.finished
    assert child.summary == "There are 3 files." and child.text == "There are 3 files."
    assert child.usage == USAGE_A and child.cost_usd == 0.25 and child.duration_s == 1.5
    assert child.error is None and child.status == "" and child.work.ended_ts == 1008.0
    done, cut = child.tools
    assert done.result == "3" and not done.is_error
    assert cut.done and cut.is_error  # started, never ended: closed with the child
    assert child.current_tool is None
    assert view.subagent("sa-1").state == "running"


def test_a_failed_child_carries_its_reason_and_later_events_change_nothing() -> None:
    view = fold(
        *delegation(),
        ev(
            4,
            "subagent_end",
            subagent="sa-1",
            parent_call_id="d1",
            state="failed",
            error="Subagent did not produce a response.",
            usage={},
        ),
        ev(5, "subagent_text_delta", subagent="sa-1", text="late"),
        ev(6, "subagent_end", subagent="sa-1", parent_call_id="d1", state="succeeded"),
        ev(7, "subagent_text_delta", subagent="sa-9", text="never started"),
        ev(8, "subagent_end", subagent="sa-9", state="succeeded"),
    )
    child = view.subagent("sa-1")
    assert child.state == "failed" and child.error == "Subagent did not produce a response."
    assert child.text == ""
    assert view.subagent("sa-9") is None and len(view.subagents) == 2
    assert view.last_seq == 8


def test_an_unknown_end_state_is_a_failure() -> None:
    view = fold(*delegation(), ev(4, "subagent_end", subagent="sa-0", state="exploded"))
    assert view.subagent("sa-0").state == "failed"


def test_the_answers_usage_counts_every_child() -> None:
    view = fold(
        *delegation(),
        ev(
            4,
            "subagent_end",
            subagent="sa-0",
            parent_call_id="d1",
            state="succeeded",
            usage=USAGE_A,
        ),
        ev(
            5,
            "subagent_end",
            subagent="sa-1",
            parent_call_id="d1",
            state="succeeded",
            usage={**USAGE_B, "context_tokens": 150},  # its own window
        ),
        ev(6, "tool_end", call_id="d1", tool="delegate_task", result="{}", duration_ms=9),
        ev(
            7,
            "run_completed",
            final_text="Done.",
            usage={"input_tokens": 5, "output_tokens": 1, "total_tokens": 6, "context_tokens": 4},
        ),
    )
    # The counts add up; how full the answer's window was stays the answer's own.
    assert view.usage == {
        "context_tokens": 4,
        "input_tokens": 305,
        "output_tokens": 31,
        "total_tokens": 336,
    }
    assert view.subagent("sa-0").usage == USAGE_A  # each child keeps its own


def test_a_run_without_children_keeps_its_usage_as_sent() -> None:
    view = fold(ev(1, "run_completed", final_text="x", usage={"input_tokens": 3}))
    assert view.usage == {"input_tokens": 3}


def test_children_still_working_end_with_the_run() -> None:
    stopped = fold(
        *delegation(),
        ev(4, "subagent_tool_start", subagent="sa-0", call_id="c1", tool="terminal", args={}),
        ev(5, "subagent_end", subagent="sa-1", state="succeeded", usage=USAGE_B),
        ev(6, "run_stopped"),
    )
    cut, done = stopped.subagent("sa-0"), stopped.subagent("sa-1")
    assert cut.state == "stopped" and cut.error is None and cut.tools[0].is_error
    assert done.state == "succeeded"
    assert stopped.usage == USAGE_B  # the stopped answer reported none of its own
    failed = fold(*delegation(), ev(4, "run_failed", error="model down"))
    assert {s.state for s in failed.subagents} == {"failed"}
    assert failed.subagent("sa-0").error == "The subagent never finished: the run ended first."
    assert failed.error == "model down"


def test_nested_children_hang_under_their_parents_call() -> None:
    view = fold(
        *delegation(),
        ev(4, "subagent_tool_start", subagent="sa-0", call_id="d2", tool="delegate_task", args={}),
        ev(
            5,
            "subagent_start",
            subagent="sa-0-0",
            parent_call_id="d2",
            parent_subagent="sa-0",
            goal="Deeper",
            index=0,
        ),
        ev(6, "subagent_tool_start", subagent="sa-0-0", call_id="c9", tool="todo", args={}),
    )
    (grandchild,) = view.children_of("d2", parent_subagent="sa-0")
    assert grandchild.subagent_id == "sa-0-0" and grandchild.current_tool.tool == "todo"
    assert view.children_of("d2") == ()  # not a call of the answer's own agent
    assert [s.subagent_id for s in view.children_of("d1")] == ["sa-0", "sa-1"]


def test_children_are_listed_in_task_order() -> None:
    call, first, second = delegation()
    # The second task's child began first.
    view = fold(call, {**second, "seq": 2}, {**first, "seq": 3})
    assert [s.index for s in view.children_of("d1")] == [0, 1]
    assert [s.subagent_id for s in view.subagents] == ["sa-1", "sa-0"]


def test_a_childs_deltas_merge_only_with_the_same_childs() -> None:
    a1 = event_to_row(EventType.SUBAGENT_TEXT_DELTA, 4, {"subagent": "sa-0", "text": "A1 "})
    b1 = event_to_row(EventType.SUBAGENT_TEXT_DELTA, 5, {"subagent": "sa-1", "text": "B1"})
    a2 = event_to_row(EventType.SUBAGENT_TEXT_DELTA, 5, {"subagent": "sa-0", "text": "A2"})
    answer = event_to_row(EventType.TEXT_DELTA, 5, {"text": "answer"})
    assert merge_rows(a1, b1) is None
    assert merge_rows(a1, answer) is None
    merged = merge_rows(a1, a2)
    assert merged is not None and merged.content == "A1 A2"
    event = row_to_event(merged.seq, merged.kind, merged.content, merged.meta_json)
    assert event == {"type": "subagent_text_delta", "subagent": "sa-0", "text": "A1 A2", "seq": 5}
    answers = event_to_row(EventType.TEXT_DELTA, 6, {"text": "more"})
    assert merge_rows(answer, answers) is not None  # the answer's own still merge


def test_apply_routes_by_subagent_without_changing_the_old_view() -> None:
    view = fold(*delegation())
    after = apply(view, ev(4, "subagent_text_delta", subagent="sa-0", text="x"))
    assert view.subagent("sa-0").text == "" and after.subagent("sa-0").text == "x"
    assert after.last_seq == 4


def test_an_approval_for_a_child_makes_that_child_wait_until_answered() -> None:
    asked = ev(
        4,
        "approval_request",
        clarify_id="c1",
        command="rm -rf victim",
        choices=["once", "deny"],
        description="recursive delete",
        subagent="sa-1",
    )
    view = fold(*delegation(), asked)
    assert view.clarify is not None and view.clarify.subagent == "sa-1"
    waiting, working = view.subagent("sa-1"), view.subagent("sa-0")
    assert waiting is not None and waiting.state == "waiting_input"
    assert waiting.status == "Waiting for your approval"
    assert working is not None and working.state == "running"  # the other child is not asked
    after = apply(view, ev(5, "approval_resolved", clarify_id="c1", answer="once"))
    assert after.clarify is None and after.subagent("sa-1").state == "running"
    # The answer's own approval leaves every child as it is.
    own = fold(*delegation(), {**asked, "subagent": None})
    assert own.clarify.subagent == "" and own.subagent("sa-1").state == "running"

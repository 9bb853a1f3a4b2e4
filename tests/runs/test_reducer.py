"""The reducer (one test per event type of protocol/events.py) and live == replay from log rows."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent_chat.db.logs import LogRow
from agent_chat.protocol.events import SUBAGENT_EVENT_OF
from agent_chat.protocol.log_codec import (
    event_to_row,
    merge_rows,
    row_to_event,
    seqs_covered,
    stored_events,
)
from agent_chat.protocol.reducer import RunView, apply, replay, strip_spinner


def ev(seq: int, type_: str, **data: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "ts": 1000.0 + seq, "run_id": "r1", **data}


def fold(*events: dict[str, Any]) -> RunView:
    return replay(list(events))


# ---- one test per event type ---------------------------------------------------------------


def test_run_started_records_model_and_start_time() -> None:
    view = fold(ev(1, "run_started", session_id="s", model="fake-model"))
    assert view.model == "fake-model"
    assert view.started_ts == 1001.0
    assert view.state == "running"
    assert view.last_seq == 1


def test_text_deltas_append_to_the_answer() -> None:
    view = fold(ev(1, "text_delta", text="Hello "), ev(2, "text_delta", text="world"))
    assert view.answer == "Hello world"
    assert view.thinking == ""


def test_text_break_moves_the_segment_to_thinking() -> None:
    view = fold(
        ev(1, "text_delta", text="Let me check."),
        ev(2, "text_break"),
        ev(3, "text_delta", text="The answer."),
    )
    assert view.thinking == "Let me check."
    assert view.answer == "The answer."


def test_text_break_without_text_leaves_thinking_empty() -> None:
    view = fold(ev(1, "text_break"))
    assert view.thinking == ""
    assert view.answer == ""


def test_reasoning_deltas_append_to_thinking_and_a_new_block_is_separated() -> None:
    view = fold(
        ev(1, "reasoning_delta", text="First "),
        ev(2, "reasoning_delta", text="thought."),
        ev(3, "step", iteration=2, tools=[]),
        ev(4, "reasoning_delta", text="  Second thought."),
    )
    assert view.thinking == "First thought.\n\nSecond thought."
    assert view.answer == ""


def test_status_overwrites_and_spinner_text_loses_its_kaomoji() -> None:
    view = fold(ev(1, "status", category="thinking", message="( ͡° ͜ʖ ͡°) formulating..."))
    assert view.status == "formulating..."
    view = apply(view, ev(2, "status", category="thinking", message="(╯°□°)╯ pondering..."))
    assert view.status == "pondering..."


def test_strip_spinner_keeps_plain_words_and_strips_emoji() -> None:
    assert strip_spinner("🤔 reasoning...") == "reasoning..."
    assert strip_spinner("formulating...") == "formulating..."
    assert strip_spinner("(analysing) the data") == "(analysing) the data"


def test_every_hermes_spinner_face_is_stripped() -> None:
    from agent.display import KawaiiSpinner

    # hermes sends f"{face} {verb}..." (agent/conversation_loop.py) with one of these faces.
    faces = KawaiiSpinner.KAWAII_THINKING + KawaiiSpinner.KAWAII_WAITING
    stripped = {face: strip_spinner(f"{face} formulating...") for face in faces}
    assert {f: s for f, s in stripped.items() if s != "formulating..."} == {}


def test_status_priority_tool_progress_over_status_over_step_over_spinner() -> None:
    view = fold(ev(1, "step", iteration=1, tools=[]))
    assert view.status == "Step 1: asking the model"
    view = apply(view, ev(2, "status", category="thinking", message="(°ロ°) thinking..."))
    assert view.status == "Step 1: asking the model"  # spinner < step
    view = apply(view, ev(3, "status", category="lifecycle", message="Compressing context"))
    assert view.status == "Compressing context"  # status > step
    view = apply(view, ev(4, "step", iteration=2, tools=["todo"]))
    assert view.status == "Step 2: asking the model"  # a new step starts over
    view = apply(view, ev(5, "tool_start", call_id="c1", tool="todo", args={}))
    view = apply(view, ev(6, "tool_progress", call_id="c1", tool="todo", event="x", preview="50%"))
    assert view.status == "todo: 50%"
    view = apply(view, ev(7, "status", category="lifecycle", message="Saving"))
    assert view.status == "todo: 50%"  # status < tool progress
    view = apply(view, ev(8, "status", category="thinking", message="(•_•) musing..."))
    assert view.status == "todo: 50%"  # spinner < tool progress
    view = apply(view, ev(9, "tool_end", call_id="c1", tool="todo", result="ok", duration_ms=5))
    view = apply(view, ev(10, "status", category="lifecycle", message="Next"))
    assert view.status == "Next"  # the ended tool no longer holds area ②


def test_step_counts_iterations() -> None:
    view = fold(ev(1, "step", iteration=1, tools=[]), ev(2, "step", iteration=2, tools=[]))
    assert view.steps == 2


def test_tool_start_sets_current_tool_and_appends_history() -> None:
    view = fold(
        ev(1, "reasoning_delta", text="hmm"),
        ev(2, "tool_start", call_id="c1", tool="todo", args={"todos": []}),
    )
    assert view.current_tool is not None
    assert view.current_tool.call_id == "c1" and view.current_tool.tool == "todo"
    assert view.current_tool.args == {"todos": []}
    assert [t.call_id for t in view.tools] == ["c1"]
    assert view.status == "Running todo"
    assert not view.reasoning_open


def test_tool_progress_updates_the_current_tool() -> None:
    view = fold(
        ev(1, "tool_start", call_id="c1", tool="web", args={}),
        ev(2, "tool_progress", call_id="c1", tool="web", event="fetch", preview="page 1"),
    )
    assert view.current_tool is not None and view.current_tool.progress == "page 1"
    assert view.tools[0].progress == "page 1"


def test_tool_end_records_duration_and_error_matched_by_call_id() -> None:
    view = fold(
        ev(1, "tool_start", call_id="a", tool="one", args={}),
        ev(2, "tool_start", call_id="b", tool="two", args={}),
        ev(3, "tool_end", call_id="a", tool="one", result="boom", duration_ms=12.5, is_error=True),
    )
    first, second = view.tools
    assert (first.call_id, first.done, first.is_error, first.duration_ms, first.result) == (
        "a",
        True,
        True,
        12.5,
        "boom",
    )
    assert not second.done
    assert view.current_tool is not None and view.current_tool.call_id == "b"  # still running
    view = apply(view, ev(4, "tool_end", call_id="b", tool="two", result="ok", duration_ms=3))
    assert view.current_tool is not None and view.current_tool.done
    assert view.tools[1].result == "ok" and not view.tools[1].is_error


def test_tool_end_without_a_start_is_still_listed() -> None:
    view = fold(ev(1, "tool_end", call_id="x", tool="memory", result="saved", duration_ms=1))
    assert [(t.call_id, t.tool, t.done) for t in view.tools] == [("x", "memory", True)]


def test_todo_update_replaces_the_list() -> None:
    first = [{"id": "1", "content": "a", "status": "pending"}]
    second = [
        {"id": "1", "content": "a", "status": "completed"},
        {"id": "2", "content": "b", "status": "cancelled"},
        {"id": "3", "content": "c", "status": "pending"},
    ]
    view = fold(ev(1, "todo_update", todos=first, summary=""))
    assert view.todos == tuple(first)
    view = apply(view, ev(2, "todo_update", todos=second, summary=""))
    assert view.todos == tuple(second)
    assert view.todo_counts == (1, 2)  # cancelled items do not count


def test_clarify_request_waits_and_clarify_resolved_closes() -> None:
    view = fold(
        ev(1, "clarify_request", clarify_id="q1", question="Color?", choices=["red", "blue"])
    )
    assert view.state == "waiting_input"
    assert view.clarify is not None
    assert (view.clarify.clarify_id, view.clarify.question, view.clarify.choices) == (
        "q1",
        "Color?",
        ("red", "blue"),
    )
    view = apply(view, ev(2, "clarify_resolved", clarify_id="q1", answer="red"))
    assert view.state == "running"
    assert view.clarify is None
    assert view.answers == (("Color?", "red"),)


def test_cancelled_clarify_records_no_answer() -> None:
    view = fold(
        ev(1, "clarify_request", clarify_id="q1", question="Color?", choices=[]),
        ev(2, "clarify_resolved", clarify_id="q1", answer=None, cancelled=True),
        ev(3, "run_stopped"),
    )
    assert view.answers == (("Color?", None),)
    assert view.state == "stopped"


def test_context_compacted_adds_a_summary_divider() -> None:
    view = fold(ev(1, "context_compacted", summary="Earlier: hi", compression_count=1))
    assert view.compactions == ("Earlier: hi",)


def test_run_completed_sets_state_answer_and_usage() -> None:
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    view = fold(
        ev(1, "text_delta", text="partial"),
        ev(2, "status", category="lifecycle", message="busy"),
        ev(3, "run_completed", final_text="The final answer.", usage=usage),
    )
    assert view.state == "succeeded" and view.finished
    assert view.answer == "The final answer."
    assert view.usage == usage
    assert view.status == ""
    assert view.ended_ts == 1003.0


def test_run_failed_sets_error_and_keeps_the_partial_answer() -> None:
    view = fold(ev(1, "text_delta", text="half"), ev(2, "run_failed", error="model down"))
    assert view.state == "failed"
    assert view.error == "model down"
    assert view.answer == "half"


def test_run_stopped_keeps_the_partial_answer_and_closes_the_question() -> None:
    view = fold(
        ev(1, "text_delta", text="so far"),
        ev(2, "clarify_request", clarify_id="q", question="?", choices=[]),
        ev(3, "run_stopped"),
    )
    assert view.state == "stopped"
    assert view.answer == "so far"
    assert view.clarify is None


def test_run_stopped_with_final_text_uses_it() -> None:
    view = fold(ev(1, "text_delta", text="so"), ev(2, "run_stopped", final_text="so far"))
    assert view.answer == "so far"


def test_duplicate_seq_is_ignored() -> None:
    view = fold(ev(1, "text_delta", text="a"), ev(2, "text_delta", text="b"))
    again = apply(view, ev(2, "text_delta", text="b"))
    older = apply(view, ev(1, "text_delta", text="a"))
    assert again is view and older is view
    assert view.answer == "ab"


def test_unknown_event_type_only_advances_last_seq() -> None:
    view = fold(ev(1, "text_delta", text="a"))
    after = apply(view, ev(2, "something_new", x=1))
    assert after.answer == "a" and after.last_seq == 2


def test_apply_never_changes_the_old_view() -> None:
    view = fold(ev(1, "text_delta", text="a"))
    apply(view, ev(2, "text_delta", text="b"))
    assert view.answer == "a" and view.last_seq == 1


# ---- live == replay from rows (property) -----------------------------------------------------

pieces = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=4),
    st.sampled_from([" ", "\n", "  "]),
    st.sampled_from(["🤔", "👍🏽", "👨‍👩‍👧", "é", "( ͡° ͜ʖ ͡°)", "word"]),
)
texts = st.lists(pieces, max_size=4).map("".join)
ids = st.sampled_from(["c1", "c2", "c3"])
todo_items = st.lists(
    st.fixed_dictionaries(
        {
            "id": st.sampled_from(["1", "2", "3"]),
            "content": texts,
            "status": st.sampled_from(["pending", "in_progress", "completed", "cancelled"]),
        }
    ),
    max_size=3,
)

event_data = st.one_of(
    st.tuples(st.just("run_started"), st.fixed_dictionaries({"session_id": ids, "model": texts})),
    st.tuples(st.just("text_delta"), st.fixed_dictionaries({"text": texts})),
    st.tuples(st.just("text_delta"), st.fixed_dictionaries({"text": texts})),
    st.tuples(st.just("text_break"), st.just({})),
    st.tuples(st.just("reasoning_delta"), st.fixed_dictionaries({"text": texts})),
    st.tuples(st.just("reasoning_delta"), st.fixed_dictionaries({"text": texts})),
    st.tuples(
        st.just("status"),
        st.fixed_dictionaries(
            {"category": st.sampled_from(["thinking", "lifecycle"]), "message": texts}
        ),
    ),
    st.tuples(
        st.just("step"),
        st.fixed_dictionaries({"iteration": st.integers(1, 5), "tools": st.lists(texts)}),
    ),
    st.tuples(
        st.just("tool_start"),
        st.fixed_dictionaries(
            {"call_id": ids, "tool": texts, "args": st.dictionaries(texts, texts)}
        ),
    ),
    st.tuples(
        st.just("tool_progress"),
        st.fixed_dictionaries(
            {"tool": texts, "event": texts, "preview": texts}, optional={"call_id": ids}
        ),
    ),
    st.tuples(
        st.just("tool_end"),
        st.fixed_dictionaries(
            {
                "call_id": ids,
                "tool": texts,
                "result": texts,
                "duration_ms": st.floats(0, 1e6, allow_nan=False),
                "is_error": st.booleans(),
            }
        ),
    ),
    st.tuples(
        st.just("todo_update"), st.fixed_dictionaries({"todos": todo_items, "summary": texts})
    ),
    st.tuples(
        st.just("clarify_request"),
        st.fixed_dictionaries({"clarify_id": ids, "question": texts, "choices": st.lists(texts)}),
    ),
    st.tuples(
        st.just("clarify_resolved"),
        st.fixed_dictionaries({"clarify_id": ids, "answer": st.one_of(st.none(), texts)}),
    ),
    st.tuples(
        st.just("context_compacted"),
        st.fixed_dictionaries({"summary": texts, "compression_count": st.integers(1, 3)}),
    ),
)
# Child agents (delegate_task): two children whose starts, ends and forwarded events come in
# any order and interleave, as parallel child threads send them.
child_ids = st.sampled_from(["sa-0", "sa-1"])
usages = st.fixed_dictionaries(
    {
        "input_tokens": st.integers(0, 99),
        "output_tokens": st.integers(0, 99),
        "total_tokens": st.integers(0, 99),
    }
)
subagent_start_data = st.tuples(
    st.just("subagent_start"),
    st.fixed_dictionaries(
        {
            "subagent": child_ids,
            "parent_call_id": ids,
            "goal": texts,
            "toolsets": st.lists(st.sampled_from(["todo", "file", "terminal"]), max_size=3),
            "model": texts,
            "index": st.integers(0, 2),
        },
        optional={"parent_subagent": child_ids},
    ),
)
subagent_end_data = st.tuples(
    st.just("subagent_end"),
    st.fixed_dictionaries(
        {
            "subagent": child_ids,
            "parent_call_id": ids,
            "state": st.sampled_from(["succeeded", "failed", "stopped"]),
            "summary": texts,
            "usage": usages,
            "duration_s": st.floats(0, 1e4, allow_nan=False),
        },
        optional={"cost_usd": st.floats(0, 10, allow_nan=False), "error": texts},
    ),
)
FORWARDED = {str(base) for base in SUBAGENT_EVENT_OF}
child_event_data = st.tuples(event_data.filter(lambda pair: pair[0] in FORWARDED), child_ids).map(
    lambda drawn: (f"subagent_{drawn[0][0]}", {**drawn[0][1], "subagent": drawn[1]})
)
event_data = st.one_of(
    event_data, subagent_start_data, subagent_start_data, child_event_data, subagent_end_data
)

terminal_data = st.one_of(
    st.tuples(
        st.just("run_completed"), st.fixed_dictionaries({"final_text": texts, "usage": usages})
    ),
    st.tuples(st.just("run_failed"), st.fixed_dictionaries({"error": texts})),
    st.tuples(st.just("run_stopped"), st.fixed_dictionaries({}, optional={"final_text": texts})),
)


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[tuple[int, str, dict[str, Any]]], list[int]]:
    """A run's events as (seq, type, data-as-sent), and where flushes cut the stream."""
    body = draw(st.lists(event_data, max_size=40))
    if draw(st.booleans()):
        body.append(draw(terminal_data))
    events = []
    for seq, (kind, data) in enumerate(body, start=1):
        events.append((seq, kind, {"run_id": "run-x", "seq": seq, "ts": 100.0 + seq, **data}))
    cuts = draw(st.lists(st.integers(1, max(len(events), 1)), max_size=6))
    return events, sorted(set(cuts))


def rows_like_the_batch_writer(
    events: list[tuple[int, str, dict[str, Any]]], cuts: list[int]
) -> list[LogRow]:
    """Rows as `LogBatchWriter` stores them: merged within a batch, never across a flush."""
    stored: list[LogRow] = []
    pending: list[LogRow] = []
    for seq, kind, data in events:
        row = event_to_row(kind, seq, data)
        merged = merge_rows(pending[-1], row) if pending else None
        if merged is not None:
            pending[-1] = merged
        else:
            pending.append(row)
        if seq in cuts:
            stored += pending
            pending = []
    return stored + pending


@settings(max_examples=300, deadline=None)
@given(runs())
def test_replay_from_stored_rows_equals_the_live_view(run: Any) -> None:
    events, cuts = run
    live = replay([{"type": kind, **data} for _, kind, data in events])
    rows = rows_like_the_batch_writer(events, cuts)
    rebuilt = replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows])
    assert rebuilt == live
    covered = [seq for r in rows for seq in seqs_covered(r.seq, r.meta_json)]
    assert covered == [seq for seq, _, _ in events]  # every seq exactly once, in order


small_texts = st.lists(st.sampled_from(["", " ", "\n", "a", " b", "😀 "]), max_size=3).map("".join)
answer_delta_data = st.one_of(
    st.tuples(st.just("text_delta"), st.fixed_dictionaries({"text": small_texts})),
    st.tuples(st.just("reasoning_delta"), st.fixed_dictionaries({"text": small_texts})),
    st.tuples(st.just("text_break"), st.just({})),
    st.tuples(
        st.just("step"), st.fixed_dictionaries({"iteration": st.just(1), "tools": st.just([])})
    ),
)
# The same deltas from either of two children, interleaved with the answer's.
delta_data = st.one_of(
    answer_delta_data,
    st.tuples(answer_delta_data, child_ids).map(
        lambda drawn: (f"subagent_{drawn[0][0]}", {**drawn[0][1], "subagent": drawn[1]})
    ),
)
CHILDREN_STARTED = [
    ("subagent_start", {"subagent": "sa-0", "parent_call_id": "c1"}),
    ("subagent_start", {"subagent": "sa-1", "parent_call_id": "c1"}),
]


@st.composite
def delta_runs(draw: st.DrawFn) -> tuple[list[tuple[int, str, dict[str, Any]]], list[int]]:
    """Runs made mostly of deltas with whitespace-heavy texts: where merging is subtle."""
    body = draw(st.lists(delta_data, max_size=12))
    if draw(st.booleans()):
        body = [*CHILDREN_STARTED, *body]
    events = [
        (seq, kind, {"run_id": "run-x", "seq": seq, "ts": 1.0, **data})
        for seq, (kind, data) in enumerate(body, start=1)
    ]
    return events, sorted(set(draw(st.lists(st.integers(1, max(len(events), 1)), max_size=3))))


@settings(max_examples=500, deadline=None)
@given(delta_runs())
@example(
    (
        [
            (1, "text_delta", {"seq": 1, "text": "a"}),
            (2, "text_break", {"seq": 2}),
            (3, "reasoning_delta", {"seq": 3, "text": " "}),
            (4, "reasoning_delta", {"seq": 4, "text": " x"}),
        ],
        [],
    )
)
def test_replay_of_whitespace_heavy_deltas_equals_the_live_view(run: Any) -> None:
    events, cuts = run
    live = replay([{"type": kind, **data} for _, kind, data in events])
    rows = rows_like_the_batch_writer(events, cuts)
    rebuilt = replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows])
    assert rebuilt == live


def test_streaming_text_says_writing_unless_something_more_specific_holds_the_status() -> None:
    view = replay(
        [{"type": "step", "seq": 1, "iteration": 1}, {"type": "text_delta", "seq": 2, "text": "Hi"}]
    )
    assert view.status == "Writing…"
    view = replay(
        [
            {"type": "status", "seq": 1, "category": "lifecycle", "message": "Retrying in 2 s"},
            {"type": "text_delta", "seq": 2, "text": "Hi"},
        ]
    )
    assert view.status == "Retrying in 2 s"


def test_a_tool_that_never_ended_is_closed_with_the_run() -> None:
    # hermes rejected a malformed call (or the run stopped) after tool_start: no tool_end.
    view = fold(
        ev(1, "tool_start", call_id="c1", tool="terminal", args={"command": "ls"}),
        ev(2, "run_failed", error="boom"),
    )
    assert view.current_tool is None
    (tool,) = view.tools
    assert (
        tool.done
        and tool.is_error
        and tool.result == "The tool never finished: the run ended first."
    )


@settings(max_examples=300, deadline=None)
@given(delta_runs())
def test_stored_rows_split_back_into_the_live_events(run: Any) -> None:
    """A takeover re-opens a run's stream with `stored_events`: every seq once, each with its
    own text (so a reader that has seq n skips exactly what it has), reducing to the live view."""
    events, cuts = run
    rows = rows_like_the_batch_writer(events, cuts)
    split = [e for r in rows for e in stored_events(r.seq, r.kind, r.content, r.meta_json)]
    assert [e.seq for e in split] == [seq for seq, _, _ in events]
    for event, (_, kind, data) in zip(split, events, strict=True):
        assert event.type == kind
        if "text" in data:
            assert event.data["text"] == data["text"]
    live = replay([{"type": kind, **data} for _, kind, data in events])
    assert replay([e.as_dict() for e in split]) == live

"""The one reducer from run events to the thinking view (docs/architecture.md §3).

`apply(view, event)` is pure (no I/O, the old view is never changed), so the same code
builds the live view and replays it from persisted `chat_message_log` rows.
Events are plain dicts: `{"type": ..., "seq": ..., "ts": ..., **data}`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from agent_chat.protocol.events import FINISHED_STATES, EventType, RunState

# Area ② priorities: a lower one never hides a higher one within the same step.
PRIORITY_SPINNER, PRIORITY_STEP, PRIORITY_STATUS, PRIORITY_TOOL = 0, 1, 2, 3
WRITING = "Writing…"  # area ② while answer text streams and nothing more specific is known


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    tool: str
    args: Any = None
    result: str | None = None
    duration_ms: float | None = None
    is_error: bool = False
    done: bool = False
    progress: str = ""


@dataclass(frozen=True)
class Clarify:
    """A pending pause: a question, or (kind "approval") a command waiting for consent."""

    clarify_id: str
    question: str  # for an approval: the command
    choices: tuple[str, ...] = ()
    kind: str = "clarify"
    description: str = ""  # for an approval: why it is dangerous


@dataclass(frozen=True)
class RunView:
    """Everything the thinking panel and the answer show for one run."""

    answer: str = ""  # the text segment that is (so far) the final answer
    segment: int = 0  # how many text segments moved to ① (the answer restarts each time)
    thinking: str = ""  # ① reasoning and text segments that were followed by tool calls
    status: str = ""  # ② live status
    status_priority: int = -1
    current_tool: ToolCall | None = None  # ③ current
    tools: tuple[ToolCall, ...] = ()  # ③ history
    todos: tuple[dict[str, Any], ...] = ()  # ④
    clarify: Clarify | None = None  # ⑤ pending question
    answers: tuple[tuple[str, str | None], ...] = ()  # (question, answer) of resolved questions
    state: str = RunState.RUNNING  # a RunState
    error: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    steps: int = 0
    compactions: tuple[str, ...] = ()
    steers: tuple[tuple[str, str], ...] = ()  # (text, "sent" | "delivered" | "not delivered")
    started_ts: float | None = None
    ended_ts: float | None = None
    last_seq: int = 0
    model: str = ""
    reconnecting: bool = False  # the app lost its event stream from the bridge for now
    reasoning_open: bool = False  # the last thing in ① is a reasoning stream still going

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES

    @property
    def todo_counts(self) -> tuple[int, int]:
        """(completed, total) over the non-cancelled items."""
        live = [t for t in self.todos if t.get("status") != "cancelled"]
        return sum(1 for t in live if t.get("status") == "completed"), len(live)


_WORDLIKE = re.compile(r"[A-Za-z0-9]{2,}")


def strip_spinner(text: str) -> str:
    """Drop hermes' kaomoji/emoji decoration in front of spinner words.

    hermes sends `f"{face} {verb}..."`. A face may hold spaces, letters of other scripts
    (`ಠ_ಠ`, `( ˘▽˘)っ`) and symbols, but never two ASCII letters or digits in a row, so
    leading whitespace-separated pieces without such a run are decoration.
    """
    rest = (text or "").strip()
    while rest:
        head, *tail = rest.split(maxsplit=1)
        if _WORDLIKE.search(head):
            break
        rest = tail[0] if tail else ""
    return rest


def _set_status(view: RunView, message: str, priority: int) -> RunView:
    if not message or priority < view.status_priority:
        return view
    return replace(view, status=message, status_priority=priority)


def _append(block: str, text: str) -> str:
    if not text.strip():
        return block
    return f"{block}\n\n{text.strip()}" if block else text.strip()


def _replace_tool(view: RunView, call: ToolCall) -> tuple[ToolCall, ...]:
    return tuple(call if t.call_id == call.call_id else t for t in view.tools)


def apply(view: RunView, event: dict[str, Any]) -> RunView:
    """Return the view after `event`. Unknown event types change only `last_seq`."""
    kind = event.get("type", "")
    seq = int(event.get("seq") or 0)
    if seq and seq <= view.last_seq:
        return view  # a duplicate delivery must not change anything
    view = replace(view, last_seq=seq or view.last_seq)
    if kind in _CLOSES_REASONING and view.reasoning_open:
        view = replace(view, reasoning_open=False)
    ts = event.get("ts")
    handler = _HANDLERS.get(kind)
    return handler(view, event, ts) if handler else view


def _run_started(view: RunView, e: dict, ts: float | None) -> RunView:
    return replace(view, started_ts=ts, model=str(e.get("model") or ""), state=RunState.RUNNING)


def _text_delta(view: RunView, e: dict, ts: float | None) -> RunView:
    view = replace(view, answer=view.answer + str(e.get("text") or ""))
    if view.status_priority <= PRIORITY_STEP and view.status != WRITING:
        view = replace(view, status=WRITING, status_priority=PRIORITY_STEP)
    return view


def _text_break(view: RunView, e: dict, ts: float | None) -> RunView:
    # The segment before tool calls was the agent talking to itself: it moves to ①.
    return replace(
        view, thinking=_append(view.thinking, view.answer), answer="", segment=view.segment + 1
    )


def _reasoning_delta(view: RunView, e: dict, ts: float | None) -> RunView:
    text = str(e.get("text") or "")
    if not view.reasoning_open and view.thinking:
        # A new block of reasoning after other work. Whitespace before its first word is
        # dropped however the deltas are split, so merged log rows replay the same view.
        if not text.strip():
            return view
        text = "\n\n" + text.lstrip()
    return replace(view, thinking=view.thinking + text, reasoning_open=True)


def _status(view: RunView, e: dict, ts: float | None) -> RunView:
    message = str(e.get("message") or "")
    if e.get("category") == "thinking":
        return _set_status(view, strip_spinner(message), PRIORITY_SPINNER)
    return _set_status(view, message, PRIORITY_STATUS)


def _step(view: RunView, e: dict, ts: float | None) -> RunView:
    iteration = int(e.get("iteration") or view.steps + 1)
    # A new model call starts a new step: earlier statuses no longer describe the work.
    view = replace(view, steps=iteration, status_priority=-1)
    return _set_status(view, f"Step {iteration}: asking the model", PRIORITY_STEP)


def _tool_start(view: RunView, e: dict, ts: float | None) -> RunView:
    call = ToolCall(
        call_id=str(e.get("call_id") or f"seq-{e.get('seq')}"),
        tool=str(e.get("tool") or ""),
        args=e.get("args"),
    )
    view = replace(view, current_tool=call, tools=(*view.tools, call), status_priority=-1)
    return _set_status(view, f"Running {call.tool}", PRIORITY_TOOL)


def _tool_progress(view: RunView, e: dict, ts: float | None) -> RunView:
    preview = str(e.get("preview") or e.get("event") or "")
    tool = str(e.get("tool") or "")
    if (
        view.current_tool
        and not view.current_tool.done
        and (e.get("call_id") in (None, view.current_tool.call_id))
    ):
        updated = replace(view.current_tool, progress=preview)
        view = replace(view, current_tool=updated, tools=_replace_tool(view, updated))
    label = f"{tool}: {preview}" if tool and preview else preview or tool
    return _set_status(view, label, PRIORITY_TOOL)


def _tool_end(view: RunView, e: dict, ts: float | None) -> RunView:
    call_id = str(e.get("call_id") or "")
    existing = next((t for t in view.tools if t.call_id == call_id), None)
    base = existing or ToolCall(call_id=call_id, tool=str(e.get("tool") or ""), args=e.get("args"))
    done = replace(
        base,
        result=None if e.get("result") is None else str(e.get("result")),
        duration_ms=e.get("duration_ms"),
        is_error=bool(e.get("is_error")),
        done=True,
    )
    tools = _replace_tool(view, done) if existing else (*view.tools, done)
    current = (
        done if view.current_tool and view.current_tool.call_id == call_id else view.current_tool
    )
    # The tool's progress no longer holds area ②.
    return replace(
        view,
        tools=tools,
        current_tool=current,
        status_priority=min(view.status_priority, PRIORITY_STATUS),
    )


def _todo_update(view: RunView, e: dict, ts: float | None) -> RunView:
    todos = tuple(dict(t) for t in (e.get("todos") or []) if isinstance(t, dict))
    return replace(view, todos=todos)


def _clarify_request(view: RunView, e: dict, ts: float | None) -> RunView:
    approval = e.get("type") == EventType.APPROVAL_REQUEST
    clarify = Clarify(
        clarify_id=str(e.get("clarify_id") or ""),
        question=str((e.get("command") if approval else None) or e.get("question") or ""),
        choices=tuple(str(c) for c in (e.get("choices") or [])),
        kind="approval" if approval else "clarify",
        description=str(e.get("description") or "") if approval else "",
    )
    view = replace(view, clarify=clarify, state=RunState.WAITING_INPUT, status_priority=-1)
    status = "Waiting for your approval" if approval else "Waiting for your answer"
    return _set_status(view, status, PRIORITY_TOOL)


def _clarify_resolved(view: RunView, e: dict, ts: float | None) -> RunView:
    question = view.clarify.question if view.clarify else ""
    answer = e.get("answer")
    state = RunState.RUNNING if view.state == RunState.WAITING_INPUT else view.state
    return replace(
        view,
        clarify=None,
        state=state,
        answers=(*view.answers, (question, None if answer is None else str(answer))),
        status_priority=-1,
    )


def _steer(view: RunView, e: dict, ts: float | None) -> RunView:
    return replace(view, steers=(*view.steers, (str(e.get("text") or ""), "sent")))


def _steer_result(view: RunView, e: dict, ts: float | None) -> RunView:
    outcome = "delivered" if e.get("delivered") else "not delivered"
    steers = tuple((text, outcome if state == "sent" else state) for text, state in view.steers)
    return replace(view, steers=steers)


def _context_compacted(view: RunView, e: dict, ts: float | None) -> RunView:
    return replace(view, compactions=(*view.compactions, str(e.get("summary") or "")))


def _bridge_link(view: RunView, e: dict, ts: float | None) -> RunView:
    return replace(view, reconnecting=not e.get("connected", True))


NEVER_ENDED = "The tool never finished: the run ended first."


def _finish(state: str):
    def handler(view: RunView, e: dict, ts: float | None) -> RunView:
        final = e.get("final_text")
        answer = str(final) if final else view.answer
        usage = e.get("usage") if isinstance(e.get("usage"), dict) else view.usage
        current = view.current_tool if view.current_tool and view.current_tool.done else None
        # A tool that started but never ended (a malformed call, a stop) ends with the run.
        tools = tuple(
            t if t.done else replace(t, done=True, is_error=True, result=t.result or NEVER_ENDED)
            for t in view.tools
        )
        return replace(
            view,
            tools=tools,
            state=state,
            reconnecting=False,
            answer=answer,
            usage=dict(usage or {}),
            error=str(e.get("error")) if e.get("error") else view.error,
            ended_ts=ts,
            clarify=None,
            current_tool=current,
            status="",
            status_priority=-1,
        )

    return handler


_CLOSES_REASONING = frozenset(
    {
        EventType.TEXT_BREAK,
        EventType.STEP,
        EventType.TOOL_START,
        EventType.CLARIFY_REQUEST,
        EventType.APPROVAL_REQUEST,
    }
)

_HANDLERS = {
    EventType.RUN_STARTED: _run_started,
    EventType.TEXT_DELTA: _text_delta,
    EventType.TEXT_BREAK: _text_break,
    EventType.REASONING_DELTA: _reasoning_delta,
    EventType.STATUS: _status,
    EventType.STEP: _step,
    EventType.TOOL_START: _tool_start,
    EventType.TOOL_PROGRESS: _tool_progress,
    EventType.TOOL_END: _tool_end,
    EventType.TODO_UPDATE: _todo_update,
    EventType.CLARIFY_REQUEST: _clarify_request,
    EventType.CLARIFY_RESOLVED: _clarify_resolved,
    EventType.APPROVAL_REQUEST: _clarify_request,
    EventType.APPROVAL_RESOLVED: _clarify_resolved,
    EventType.CONTEXT_COMPACTED: _context_compacted,
    EventType.STEER: _steer,
    EventType.STEER_RESULT: _steer_result,
    EventType.BRIDGE_LINK: _bridge_link,
    EventType.RUN_COMPLETED: _finish(RunState.SUCCEEDED),
    EventType.RUN_FAILED: _finish(RunState.FAILED),
    EventType.RUN_STOPPED: _finish(RunState.STOPPED),
}


def replay(events: list[dict[str, Any]], view: RunView | None = None) -> RunView:
    """Fold events into a view (used to rebuild history from the log)."""
    view = view or RunView()
    for event in events:
        view = apply(view, event)
    return view

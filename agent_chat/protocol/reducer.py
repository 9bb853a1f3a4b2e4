"""The one reducer from run events to the thinking view (docs/architecture.md §3).

`apply(view, event)` is pure (no I/O, the old view is never changed), so the same code
builds the live view and replays it from persisted `chat_message_log` rows.
Events are plain dicts: `{"type": ..., "seq": ..., "ts": ..., **data}`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from agent_chat.protocol.events import CHILD_EVENT_BASE, FINISHED_STATES, EventType, RunState
from agent_chat.protocol.views import Clarify, RunView, Subagent, ToolCall

__all__ = ["Clarify", "RunView", "Subagent", "ToolCall", "apply", "replay", "strip_spinner"]

# Area ② priorities: a lower one never hides a higher one within the same step.
PRIORITY_SPINNER, PRIORITY_STEP, PRIORITY_STATUS, PRIORITY_TOOL = 0, 1, 2, 3
WRITING = "Writing…"  # area ② while answer text streams and nothing more specific is known


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
    ts = event.get("ts")
    base = CHILD_EVENT_BASE.get(kind)
    if base is not None:
        return _child_event(view, event, base, ts)
    return _reduce(view, event, kind, ts)


def _reduce(view: RunView, event: dict[str, Any], kind: str, ts: float | None) -> RunView:
    if kind in _CLOSES_REASONING and view.reasoning_open:
        view = replace(view, reasoning_open=False)
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
        subagent=str(e.get("subagent") or ""),
    )
    view = replace(view, clarify=clarify, state=RunState.WAITING_INPUT, status_priority=-1)
    status = "Waiting for your approval" if approval else "Waiting for your answer"
    return _child_waits(_set_status(view, status, PRIORITY_TOOL), clarify.subagent, status)


def _child_waits(view: RunView, subagent_id: str, status: str) -> RunView:
    """The child the pause is for waits too (its card says so); "" for the answer's own."""
    child = view.subagent(subagent_id) if subagent_id else None
    if child is None or child.finished or not (status or child.state == RunState.WAITING_INPUT):
        return view
    state = RunState.WAITING_INPUT if status else RunState.RUNNING
    work = replace(child.work, state=state, status_priority=-1)
    work = _set_status(work, status, PRIORITY_TOOL) if status else work
    return _replace_subagent(view, replace(child, work=work))


def _clarify_resolved(view: RunView, e: dict, ts: float | None) -> RunView:
    question = view.clarify.question if view.clarify else ""
    answer = e.get("answer")
    state = RunState.RUNNING if view.state == RunState.WAITING_INPUT else view.state
    if view.clarify and view.clarify.subagent:
        view = _child_waits(view, view.clarify.subagent, "")
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
SUBAGENT_NEVER_ENDED = "The subagent never finished: the run ended first."


def _finished(view: RunView, state: str, e: dict, ts: float | None) -> RunView:
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


def _finish(state: str):
    def handler(view: RunView, e: dict, ts: float | None) -> RunView:
        view = _finished(view, state, e, ts)
        if not view.subagents:
            return view
        # A child still working ends with the run; the answer's usage counts every child's.
        subagents = tuple(
            s if s.finished else _end_subagent(s, _cut_short(state), ts) for s in view.subagents
        )
        usage = view.usage
        for child in subagents:
            usage = _add_usage(usage, child.usage)
        return replace(view, subagents=subagents, usage=usage)

    return handler


def _cut_short(state: str) -> dict[str, Any]:
    if state == RunState.STOPPED:
        return {"state": RunState.STOPPED}
    return {"state": RunState.FAILED, "error": SUBAGENT_NEVER_ENDED}


def _add_usage(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    """Counts add up; `context_tokens` (how full the answer's own window was) stays `a`'s."""
    added = {k: int(a.get(k) or 0) + int(b.get(k) or 0) for k in b.keys() - {"context_tokens"}}
    return dict(sorted({**a, **added}.items()))


# ---- child agents (delegate_task) -----------------------------------------------------------


def _replace_subagent(view: RunView, child: Subagent) -> RunView:
    subagents = tuple(child if s.subagent_id == child.subagent_id else s for s in view.subagents)
    return replace(view, subagents=subagents)


def _subagent_start(view: RunView, e: dict, ts: float | None) -> RunView:
    subagent_id = str(e.get("subagent") or "")
    if not subagent_id or view.subagent(subagent_id) is not None:
        return view
    toolsets = e.get("toolsets") if isinstance(e.get("toolsets"), list) else []
    model = str(e.get("model") or "")
    child = Subagent(
        subagent_id=subagent_id,
        parent_call_id=str(e.get("parent_call_id") or ""),
        parent_subagent=str(e.get("parent_subagent") or ""),
        goal=str(e.get("goal") or ""),
        toolsets=tuple(str(t) for t in toolsets),
        model=model,
        index=int(e.get("index") or 0),
        work=RunView(started_ts=ts, model=model),
    )
    return replace(view, subagents=(*view.subagents, child))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _end_subagent(child: Subagent, e: dict, ts: float | None) -> Subagent:
    state = e.get("state")
    state = state if state in FINISHED_STATES else RunState.FAILED
    usage = e.get("usage") if isinstance(e.get("usage"), dict) else {}
    usage = {k: int(v) for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
    work = _finished(child.work, state, {"usage": usage, "error": e.get("error")}, ts)
    return replace(
        child,
        work=work,
        summary=str(e.get("summary") or child.summary),
        cost_usd=_number(e.get("cost_usd")),
        duration_s=_number(e.get("duration_s")),
    )


def _subagent_end(view: RunView, e: dict, ts: float | None) -> RunView:
    child = view.subagent(str(e.get("subagent") or ""))
    if child is None or child.finished:
        return view
    return _replace_subagent(view, _end_subagent(child, e, ts))


def _child_event(view: RunView, e: dict, base: str, ts: float | None) -> RunView:
    """A child's event reduced into its own view as the answer's event `base` would be;
    one for a child that never started or already ended changes nothing."""
    child = view.subagent(str(e.get("subagent") or ""))
    if child is None or child.finished:
        return view
    work = _reduce(child.work, {**e, "type": base}, base, ts)
    return _replace_subagent(view, replace(child, work=work))


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
    EventType.SUBAGENT_START: _subagent_start,
    EventType.SUBAGENT_END: _subagent_end,
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

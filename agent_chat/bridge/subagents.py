"""Child agents (hermes' `delegate_task`): their events, tagged with the child's id and the
delegate_task call that made them, and the run's confinement carried into them
(docs/architecture.md §4d).

How hermes 0.19 runs a child (`tools/delegate_tool.py`): it builds a fresh `AIAgent` per task
on the calling thread, with only a `tool_progress_callback` that relays `subagent.*` events to
the parent's and a `thinking_callback`; its other callbacks are unset. `_run_single_child`
announces it (`subagent.start`, relayed with the child's `subagent_id`) and then runs its
`run_conversation` on a worker thread of a pool of its own (a batch on one more pool, in
parallel), and announces its end (`subagent.complete`: status, summary, tokens, cost).

Those worker threads start with an empty `contextvars.Context`, and the child works under a
`task_id` of its own (its `subagent_id`). Left so, a child of a Workspace run would escape
everything the bridge keeps per run in the context or per task id: the sandbox (a ContextVar:
its commands would run unsandboxed), the approval context (hermes would see no interactive
session and run dangerous commands without asking), the person's hermes home, and the write
fence and working directory (keyed by task id). So, per child:

- at the parent's `delegate_task` tool_start, on the thread that then runs the tool, the run's
  context is captured (hermes never runs delegate_task in parallel with another tool);
- at `subagent.start`, before hermes submits the child, its callbacks are this bridge's (one
  `CallbackMapper` per child, its events renamed `subagent_*` and tagged), its
  `run_conversation` runs in a copy of that context (an instance attribute over the method:
  the one override of hermes here, since hermes has no hook for the child's thread), and its
  task id is fenced into the parent's folder. A child that cannot be confined does not run.

A child's dangerous command asks the person like its parent's (hermes' own answer for
children, the worker thread's `delegation.subagent_auto_approve` callback, would deny it or
allow it unasked): for the child's turn its thread's approval callback is the run's, tagged
with the child's id (`Run.approve`), and children working in parallel ask one after the
other (one pause at a time per run). The child waits like any asking agent: hermes sets no
timeout on a child by default (`delegation.child_timeout_seconds`).

`delegate_task` of the answer's own agent would run in the background and re-enter the
conversation as a later message, which a bridge run (one turn, then its stream ends) never
delivers: `foreground_delegation` declares the run's channel stateless (hermes' own switch), so
hermes runs the children within the turn.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from agent_chat.bridge import mcp_images, workspace
from agent_chat.bridge.failures import abnormal_end_sentence, readable_failure
from agent_chat.bridge.hermes_callbacks import CallbackMapper, Emit
from agent_chat.bridge.truncation import cut_text
from agent_chat.protocol.events import SUBAGENT_EVENT_OF, EventType, RunState

logger = logging.getLogger(__name__)

GOAL_CHARS = 4000
SUMMARY_CHARS = 4000
# hermes' child statuses (`_run_single_child`) as run states; any other is a failure.
STATES = {"completed": RunState.SUCCEEDED, "interrupted": RunState.STOPPED}
FAILED_BY_STATUS = {
    "timeout": "The subagent timed out.",
    "error": "The subagent failed.",
    "failed": "Subagent did not produce a response.",
}
LIMIT_REASONS = ("max_iterations_reached", "budget_exhausted")
NOT_CONFINED = (
    "The bridge could not run this subagent in the conversation's workspace and sandbox, so it "
    "did not run."
)


def foreground_delegation() -> None:
    """In the run's thread, before the turn: hermes runs delegate_task's children within the
    turn instead of in the background (`gateway.session_context.declare_stateless_channel`,
    a ContextVar of this thread, which is the run's own)."""
    from gateway.session_context import declare_stateless_channel

    declare_stateless_channel()


def child_failure(result: Any, base_url: str) -> str | None:
    """Why a child's turn failed, in the sentence the answer's would fail with (as
    bridge/execute.py judges it), or None. hermes calls a child "completed" whenever its
    final response has text, and an API error or an empty answer leaves hermes' own notice
    there."""
    if not isinstance(result, dict) or result.get("interrupted"):
        return None
    abnormal = abnormal_end_sentence(result)
    if result.get("failed") or not result.get("completed", True):
        limit = str(result.get("turn_exit_reason") or "").startswith(LIMIT_REASONS)
        return (abnormal if limit else None) or readable_failure(result, base_url)
    return abnormal


def _in_context(
    context: contextvars.Context,
    run: Callable[..., Any],
    judged: Callable[[Any], None],
    approve: Callable[..., str] | None,
) -> Callable[..., Any]:
    @functools.wraps(run)
    def run_conversation(*args: Any, **kwargs: Any) -> Any:
        from tools import terminal_tool

        # Per thread in hermes (its pool's initializer set the children's answer): the run's
        # for this turn, hermes' again after it (the thread may serve another child).
        before = terminal_tool._get_approval_callback()
        if approve is not None:
            terminal_tool.set_approval_callback(approve)
        try:
            result = context.run(run, *args, **kwargs)
        finally:
            terminal_tool.set_approval_callback(before)
        judged(result)
        return result

    return run_conversation


def _refused(*args: Any, **kwargs: Any) -> dict[str, Any]:
    # What hermes reads of a child's result: no answer, failed, with the reason.
    return {"final_response": "", "completed": False, "failed": True, "error": NOT_CONFINED}


def _tee(first: Callable[..., Any], second: Callable[..., Any] | None) -> Callable[..., Any]:
    """Both callbacks, ours first (hermes' relay and live transcript keep their events)."""
    if second is None:
        return first

    def both(*args: Any, **kwargs: Any) -> None:
        first(*args, **kwargs)
        second(*args, **kwargs)

    return both


def _no_answer(question: str, choices: list[str] | None) -> str:
    return ""  # hermes gives children no clarify tool; never asked


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


class Subagents:
    """The children one agent starts through delegate_task in a run (the answer's own agent,
    or a child allowed to delegate further, hermes' `orchestrator` role)."""

    def __init__(
        self,
        emit: Emit,
        agent: Any,
        *,
        task_id: str,
        subagent_id: str | None = None,
        approve: Callable[..., str] | None = None,
    ) -> None:
        self._emit = emit  # the run's EventBuffer.emit
        self._approve = approve  # the run's approval callback (Run.approve)
        self._agent = agent
        self._task_id = task_id  # the agent's hermes task id: its folder's key
        self._own_id = subagent_id  # None: the answer's own agent
        self._lock = threading.Lock()
        self._call_id = ""
        self._context: contextvars.Context | None = None
        self._calls: dict[str, str] = {}  # working child -> its delegate_task call
        self._fenced: set[str] = set()
        self._failures: dict[str, str] = {}  # child -> why its turn failed (child_failure)

    # -- from the agent's CallbackMapper --------------------------------------------------

    def call_started(self, call_id: str) -> None:
        """The agent's delegate_task call begins, on the thread that runs it."""
        with self._lock:
            self._call_id = call_id
            self._context = contextvars.copy_context()

    def call_ended(self, call_id: str) -> None:
        with self._lock:
            if self._call_id == call_id:
                self._call_id, self._context = "", None

    def relayed(self, event: str, fields: dict[str, Any]) -> None:
        """hermes' relay of a child's `subagent.*` event to this agent's progress callback."""
        if fields.get("parent_id") != self._own_id:
            return  # a grandchild's, relayed up by its parent: its parent's Subagents has it
        subagent_id = fields.get("subagent_id")
        if not isinstance(subagent_id, str) or not subagent_id:
            return
        if event == "subagent.start":
            self._start(subagent_id, fields)
        elif event == "subagent.complete":
            self._end(subagent_id, fields)
        # subagent.text/.thinking/.tool/.progress: the child's own callbacks send them here.

    # -- a child's life ---------------------------------------------------------------------

    def _child(self, subagent_id: str) -> Any:
        children = list(getattr(self._agent, "_active_children", None) or [])
        return next((c for c in children if getattr(c, "_subagent_id", None) == subagent_id), None)

    def _start(self, subagent_id: str, fields: dict[str, Any]) -> None:
        child = self._child(subagent_id)
        if child is None:
            # Nothing here can reach it: hermes changed how it keeps its children.
            logger.error(
                "subagent %s is not among its parent's children: not confined", subagent_id
            )
            return
        with self._lock:
            if subagent_id in self._calls:
                return
            call_id, context = self._call_id, self._context
            self._calls[subagent_id] = call_id
        body: dict[str, Any] = {
            "subagent": subagent_id,
            "parent_call_id": call_id,
            "goal": cut_text(str(fields.get("goal") or ""), GOAL_CHARS),
            "toolsets": [str(t) for t in fields.get("toolsets") or []],
            "model": str(fields.get("model") or ""),
            "index": _count(fields.get("task_index")),
        }
        if self._own_id is not None:
            body["parent_subagent"] = self._own_id
        self._emit(EventType.SUBAGENT_START, **body)
        try:
            if context is None:
                raise RuntimeError("no delegate_task call is open: the run's context is unknown")
            self._attach(child, subagent_id, context.copy())
        except Exception:
            logger.exception("subagent %s cannot be confined: it does not run", subagent_id)
            child.run_conversation = _refused

    def _attach(self, child: Any, subagent_id: str, context: contextvars.Context) -> None:
        mcp_images.adopt(self._task_id, subagent_id)  # its MCP pictures: the conversation's
        if workspace.open_child_workspace(self._task_id, subagent_id):
            with self._lock:
                self._fenced.add(subagent_id)
        mapper = CallbackMapper(
            emit=functools.partial(self._child_emit, subagent_id),
            ask=_no_answer,
            on_step=lambda: None,
            summary=str,
            subagents=Subagents(
                self._emit,
                child,
                task_id=subagent_id,
                subagent_id=subagent_id,
                approve=self._approve,
            ),
        )
        for name, callback in mapper.callbacks().items():
            if name not in ("clarify_callback", "tool_progress_callback"):
                setattr(child, name, callback)
        child.tool_progress_callback = _tee(
            mapper.on_tool_progress, getattr(child, "tool_progress_callback", None)
        )
        child.suppress_status_output = True
        base_url = str(getattr(child, "base_url", "") or "")

        def judged(result: Any) -> None:
            if (failure := child_failure(result, base_url)) is not None:
                with self._lock:
                    self._failures[subagent_id] = failure

        approve = None
        if self._approve is not None:
            approve = functools.partial(self._approve, subagent=subagent_id)
        child.run_conversation = _in_context(context, child.run_conversation, judged, approve)

    def _child_emit(self, subagent_id: str, type_: str, **fields: Any) -> Any:
        kind = SUBAGENT_EVENT_OF.get(type_)
        if kind is None:
            return None  # a child's compaction is not the conversation's; it asks nothing
        return self._emit(kind, subagent=subagent_id, **fields)

    def _end(self, subagent_id: str, fields: dict[str, Any]) -> None:
        with self._lock:
            call_id = self._calls.pop(subagent_id, None)
            fenced = subagent_id in self._fenced
            self._fenced.discard(subagent_id)
            failure = self._failures.pop(subagent_id, None)
        if call_id is None:
            return  # never started here, or ended already
        status = str(fields.get("status") or "")
        state = STATES.get(status, RunState.FAILED)
        if failure is not None and state == RunState.SUCCEEDED:
            state = RunState.FAILED
            fields = {**fields, "summary": failure}
        tokens_in, tokens_out = (
            _count(fields.get("input_tokens")),
            _count(fields.get("output_tokens")),
        )
        body: dict[str, Any] = {
            "subagent": subagent_id,
            "parent_call_id": call_id,
            "state": state,
            "usage": {
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
        }
        summary = str(fields.get("summary") or "")
        if state == RunState.FAILED:
            reason = summary or str(fields.get("preview") or "")
            body["error"] = reason or FAILED_BY_STATUS.get(status, "The subagent failed.")
        elif summary:
            body["summary"] = cut_text(summary, SUMMARY_CHARS)
        if isinstance(fields.get("duration_seconds"), int | float):
            body["duration_s"] = float(fields["duration_seconds"])
        cost = fields.get("cost_usd")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
            body["cost_usd"] = float(cost)
        self._emit(EventType.SUBAGENT_END, **body)
        # A child hermes gave up on (its timeout) may still be working: it stays fenced.
        if status != "timeout":
            mcp_images.release(subagent_id)
            if fenced:
                workspace.close_workspace(subagent_id)

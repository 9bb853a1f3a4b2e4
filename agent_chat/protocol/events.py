"""The bridge protocol's event names and run states (docs/architecture.md §4), in one place.

The bridge emits these names, the reducer reads them, the stored log keeps them, and the
HTTP API will send them as SSE `event:` fields: write them through these constants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class EventType(StrEnum):
    RUN_STARTED = "run_started"
    TEXT_DELTA = "text_delta"
    TEXT_BREAK = "text_break"
    REASONING_DELTA = "reasoning_delta"
    STATUS = "status"
    STEP = "step"
    TOOL_START = "tool_start"
    TOOL_PROGRESS = "tool_progress"
    TOOL_END = "tool_end"
    TODO_UPDATE = "todo_update"
    CLARIFY_REQUEST = "clarify_request"
    CLARIFY_RESOLVED = "clarify_resolved"
    # A dangerous step waits for the person: `clarify_id` (the pause's id, as for a
    # question), `command`, hermes' `description` of the danger, `choices` (of
    # once/session/always/deny); resolved with the `answer` chosen (deny when stopped).
    APPROVAL_REQUEST = "approval_request"
    APPROVAL_RESOLVED = "approval_resolved"
    # The person's guidance for the running agent (`text`); hermes adds it to the next tool
    # result. `steer_result`: `delivered` (at `step`), or not (the run ended first).
    STEER = "steer"
    STEER_RESULT = "steer_result"
    CONTEXT_COMPACTED = "context_compacted"
    RUN_COMPLETED = "run_completed"
    RUN_FAILED = "run_failed"
    RUN_STOPPED = "run_stopped"
    # App side only, never from the bridge and never stored: the app lost (`connected`
    # false) or regained its event stream from the bridge. It has no seq.
    BRIDGE_LINK = "bridge_link"
    # A child agent (hermes' `delegate_task`) began: `subagent` (its id), `parent_call_id`
    # (the delegate_task call that made it), `goal`, `toolsets`, `model`, `index` (its task's
    # place in that call), `parent_subagent` (only when a child spawned it).
    SUBAGENT_START = "subagent_start"
    # It ended: `subagent`, `parent_call_id`, `state` (a finished RunState), `summary`,
    # `usage`, `cost_usd?`, `duration_s`, `error` (when it failed).
    SUBAGENT_END = "subagent_end"
    # What a child does, as the answer's own events of the same name without the prefix,
    # each with `subagent`: consumers that do not know children ignore them, so a child's
    # text is never taken for the answer.
    SUBAGENT_TEXT_DELTA = "subagent_text_delta"
    SUBAGENT_TEXT_BREAK = "subagent_text_break"
    SUBAGENT_REASONING_DELTA = "subagent_reasoning_delta"
    SUBAGENT_STATUS = "subagent_status"
    SUBAGENT_STEP = "subagent_step"
    SUBAGENT_TOOL_START = "subagent_tool_start"
    SUBAGENT_TOOL_PROGRESS = "subagent_tool_progress"
    SUBAGENT_TOOL_END = "subagent_tool_end"
    SUBAGENT_TODO_UPDATE = "subagent_todo_update"


# A child's event type for each of the answer's events a child forwards; the others (its
# questions, compactions, its end) are not forwarded as such.
SUBAGENT_EVENT_OF = {
    EventType.TEXT_DELTA: EventType.SUBAGENT_TEXT_DELTA,
    EventType.TEXT_BREAK: EventType.SUBAGENT_TEXT_BREAK,
    EventType.REASONING_DELTA: EventType.SUBAGENT_REASONING_DELTA,
    EventType.STATUS: EventType.SUBAGENT_STATUS,
    EventType.STEP: EventType.SUBAGENT_STEP,
    EventType.TOOL_START: EventType.SUBAGENT_TOOL_START,
    EventType.TOOL_PROGRESS: EventType.SUBAGENT_TOOL_PROGRESS,
    EventType.TOOL_END: EventType.SUBAGENT_TOOL_END,
    EventType.TODO_UPDATE: EventType.SUBAGENT_TODO_UPDATE,
}
# ... and back: the answer's event type a child's event is reduced as.
CHILD_EVENT_BASE = {child: base for base, child in SUBAGENT_EVENT_OF.items()}

PAUSE_REQUESTS = frozenset({EventType.CLARIFY_REQUEST, EventType.APPROVAL_REQUEST})
PAUSE_RESOLUTIONS = frozenset({EventType.CLARIFY_RESOLVED, EventType.APPROVAL_RESOLVED})
TERMINAL_EVENTS = frozenset({EventType.RUN_COMPLETED, EventType.RUN_FAILED, EventType.RUN_STOPPED})


class RunState(StrEnum):
    """A run's state, as the bridge reports it and the reducer derives it."""

    RUNNING = "running"
    WAITING_INPUT = "waiting_input"  # blocked on a question or an approval
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    STOPPED = "stopped"


FINISHED_STATES = frozenset({RunState.SUCCEEDED, RunState.FAILED, RunState.STOPPED})

# The terminal event of each finished state.
TERMINAL_EVENT_OF = {
    RunState.SUCCEEDED: EventType.RUN_COMPLETED,
    RunState.FAILED: EventType.RUN_FAILED,
    RunState.STOPPED: EventType.RUN_STOPPED,
}


@dataclass(frozen=True)
class RunEvent:
    """One event of a run: `seq` numbers a run's events from 1 without gaps (0 for the
    app-side `bridge_link`); `data` holds the event's fields."""

    seq: int
    type: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def is_terminal(self) -> bool:
        return self.type in TERMINAL_EVENTS

    def as_dict(self) -> dict[str, Any]:
        """The shape `reducer.apply` reads."""
        return {**self.data, "type": self.type, "seq": self.seq}

"""The bridge protocol's event names and run states (DESIGN.md §3), in one place.

The bridge emits these names, the reducer reads them, the stored log keeps them, and the
HTTP API will send them as SSE `event:` fields: write them through these constants.
"""

from __future__ import annotations

from enum import StrEnum


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
    CONTEXT_COMPACTED = "context_compacted"
    RUN_COMPLETED = "run_completed"
    RUN_FAILED = "run_failed"
    RUN_STOPPED = "run_stopped"


TERMINAL_EVENTS = frozenset({EventType.RUN_COMPLETED, EventType.RUN_FAILED, EventType.RUN_STOPPED})


class RunState(StrEnum):
    """A run's state, as the bridge reports it and the reducer derives it."""

    RUNNING = "running"
    WAITING_INPUT = "waiting_input"  # blocked on a question to the person
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

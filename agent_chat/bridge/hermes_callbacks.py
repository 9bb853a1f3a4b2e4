"""hermes' callbacks mapped to protocol events (the event table: docs/architecture.md §4).

hermes logs exceptions raised inside callbacks at debug level only, so every callback is
wrapped here: a failure is logged loudly and the event is not silently lost.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any, Protocol

from agent_chat.bridge.truncation import cut_args, cut_text
from agent_chat.protocol.events import EventType

logger = logging.getLogger(__name__)

Emit = Callable[..., Any]
# hermes' progress events that are not forwarded: `reasoning.available` repeats the answer,
# `_thinking` is a subagent relay.
IGNORED_PROGRESS = frozenset({"reasoning.available", "_thinking"})
DELEGATE_TOOL = "delegate_task"


class ChildAgents(Protocol):
    """The children an agent starts through delegate_task (bridge/subagents.py)."""

    def call_started(self, call_id: str) -> None: ...

    def call_ended(self, call_id: str) -> None: ...

    def relayed(self, event: str, fields: dict[str, Any]) -> None: ...


def is_subagent_relay(event: str) -> bool:
    """hermes' relay of a child's life to its parent's progress callback (`subagent.start`,
    `.complete`, `.text`, `.thinking`, `.tool`, `.progress`; `subagent_progress`)."""
    return event.startswith("subagent.") or event == "subagent_progress"


CALLBACK_NAMES = (
    "stream_delta",
    "reasoning",
    "thinking",
    "status",
    "step",
    "tool_gen",
    "tool_progress",
    "tool_start",
    "tool_complete",
    "interim_assistant",
    "event",
    "clarify",
    "notice",
)


def _guarded(name: str, fallback: Any = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except Exception:
                logger.exception("hermes %s callback failed; its event is lost", name)
                return fallback

        return guarded

    return wrap


def _tool_is_error(result: str) -> bool:
    try:
        parsed = json.loads(result)
    except (TypeError, ValueError):
        return False
    return isinstance(parsed, dict) and "error" in parsed and len(parsed) <= 2


class CallbackMapper:
    """Turns one run's hermes callbacks into events.

    ``ask`` blocks until the question is answered; ``on_step`` lets the run re-check a stop
    that arrived before hermes started listening for it; ``summary`` reads the latest
    compaction summary from the agent; ``subagents`` follows the children its delegate_task
    calls start (None: their relays are dropped).
    """

    def __init__(
        self,
        emit: Emit,
        ask: Callable[[str, list[str] | None], str],
        on_step: Callable[[], None],
        summary: Callable[[], str],
        subagents: ChildAgents | None = None,
    ) -> None:
        self._emit = emit
        self._ask = ask
        self._on_step = on_step
        self._summary = summary
        self._subagents = subagents
        self._lock = threading.Lock()
        # call_ids of started tools, and tool.completed facts, per tool name in order:
        # tool.completed carries no call_id, so it is matched by name and order.
        self._open_calls: dict[str, deque[str]] = defaultdict(deque)
        self._completed: dict[str, deque[tuple[float | None, bool]]] = defaultdict(deque)
        self._thinking_shown = False

    @staticmethod
    def callback_attribute_names() -> list[str]:
        return [f"{name}_callback" for name in CALLBACK_NAMES]

    def callbacks(self) -> dict[str, Callable[..., Any]]:
        """``<name>_callback`` attribute values for an AIAgent."""
        return {f"{name}_callback": getattr(self, f"on_{name}") for name in CALLBACK_NAMES}

    @_guarded("stream_delta")
    def on_stream_delta(self, text: str | None) -> None:
        if text is None:
            self._emit(EventType.TEXT_BREAK)
        elif text:
            self._emit(EventType.TEXT_DELTA, text=text)

    @_guarded("reasoning")
    def on_reasoning(self, text: str) -> None:
        if text:
            self._emit(EventType.REASONING_DELTA, text=text)

    @_guarded("thinking")
    def on_thinking(self, text: str) -> None:
        # The spinner sends '' after every line: forward one '' so the status clears.
        if text or self._thinking_shown:
            self._thinking_shown = bool(text)
            self._emit(EventType.STATUS, category="thinking", message=text or "")

    @_guarded("status")
    def on_status(self, kind: str, message: str) -> None:
        self._emit(EventType.STATUS, category=kind or "lifecycle", message=str(message))

    @_guarded("notice")
    def on_notice(self, notice: Any) -> None:
        # Structured out-of-band notices (e.g. provider credits); shown as a status line.
        text = getattr(notice, "text", None) or str(notice)
        self._emit(EventType.STATUS, category="notice", message=text)

    @_guarded("step")
    def on_step(self, iteration: int, prev_tools: list[dict[str, Any]] | None = None) -> None:
        self._on_step()
        tools = [t.get("name") for t in prev_tools or [] if isinstance(t, dict)]
        self._emit(EventType.STEP, iteration=iteration, tools=tools)

    @_guarded("tool_gen")
    def on_tool_gen(self, name: str) -> None:
        self._emit(
            EventType.TOOL_PROGRESS, tool=name, event="tool.generating", preview=f"preparing {name}"
        )

    @_guarded("tool_progress")
    def on_tool_progress(
        self, event: str, name: str, preview: str | None = None, args: Any = None, **kw: Any
    ) -> None:
        if event in IGNORED_PROGRESS:
            return
        if is_subagent_relay(str(event)):
            if self._subagents is not None:
                self._subagents.relayed(str(event), kw)
            return
        fields: dict[str, Any] = {"tool": name, "event": event, "preview": preview or ""}
        if event == "tool.completed":
            duration = kw.get("duration")
            is_error = bool(kw.get("is_error"))
            with self._lock:
                self._completed[name].append((duration, is_error))
                open_calls = self._open_calls.get(name)
                call_id = open_calls[0] if open_calls else None
            if call_id:
                fields["call_id"] = call_id
            if duration is not None:
                fields["duration_ms"] = round(float(duration) * 1000, 1)
            fields["is_error"] = is_error
            fields["preview"] = "failed" if is_error else "done"
        elif kw.get("tool_call_id"):
            fields["call_id"] = kw["tool_call_id"]
        self._emit(EventType.TOOL_PROGRESS, **fields)

    @_guarded("tool_start")
    def on_tool_start(self, call_id: str, name: str, args: Any) -> None:
        with self._lock:
            self._open_calls[name].append(call_id)
        self._emit(EventType.TOOL_START, call_id=call_id, tool=name, args=cut_args(args or {}))
        if name == DELEGATE_TOOL and self._subagents is not None:
            self._subagents.call_started(call_id)

    @_guarded("tool_complete")
    def on_tool_complete(self, call_id: str, name: str, args: Any, result: Any) -> None:
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        with self._lock:
            open_calls = self._open_calls.get(name)
            if open_calls and call_id in open_calls:
                open_calls.remove(call_id)
            completed = self._completed.get(name)
            duration, is_error = completed.popleft() if completed else (None, _tool_is_error(text))
        self._emit(
            EventType.TOOL_END,
            call_id=call_id,
            tool=name,
            result=text if name == "todo" else cut_text(text),
            duration_ms=None if duration is None else round(float(duration) * 1000, 1),
            is_error=is_error,
        )
        if name == "todo":
            self._emit_todos(text)
        if name == DELEGATE_TOOL and self._subagents is not None:
            self._subagents.call_ended(call_id)

    def _emit_todos(self, result: str) -> None:
        parsed = json.loads(result)
        if isinstance(parsed, dict) and isinstance(parsed.get("todos"), list):
            self._emit(
                EventType.TODO_UPDATE, todos=parsed["todos"], summary=parsed.get("summary") or {}
            )

    @_guarded("interim_assistant")
    def on_interim_assistant(self, text: str, already_streamed: bool = True, **kw: Any) -> None:
        # Text that came with tool calls was streamed already (text_delta + text_break).
        if not already_streamed and text:
            self._emit(EventType.TEXT_DELTA, text=text)
            self._emit(EventType.TEXT_BREAK)

    @_guarded("event")
    def on_event(self, name: str, payload: dict[str, Any] | None = None) -> None:
        if name == "session:compress":
            payload = payload or {}
            self._emit(
                EventType.CONTEXT_COMPACTED,
                summary=self._summary(),
                compression_count=int(payload.get("compression_count") or 0),
            )

    @_guarded("clarify", fallback="")
    def on_clarify(self, question: str, choices: list[str] | None = None) -> str:
        return self._ask(question, list(choices) if choices else None)

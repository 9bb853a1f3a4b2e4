"""A run's thread: build or reuse the agent, run one turn with its callbacks, approvals
and workspace, and turn hermes' result into the one terminal event (bridge/runs.py holds the
run's state; this module its life in the thread)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from agent_chat.bridge import mcp_images, sandbox
from agent_chat.bridge.approvals import approvals_for
from agent_chat.bridge.failures import abnormal_end_sentence, readable_failure
from agent_chat.bridge.hermes_callbacks import CallbackMapper
from agent_chat.bridge.homes import entered
from agent_chat.bridge.pool import AgentPool
from agent_chat.bridge.runs import Run
from agent_chat.bridge.subagents import Subagents, foreground_delegation
from agent_chat.bridge.workspace import close_workspace, open_workspace
from agent_chat.common.tool_profiles import uses_workspace
from agent_chat.protocol.events import EventType, RunState

logger = logging.getLogger(__name__)

LIMIT_REASONS = ("max_iterations_reached", "budget_exhausted")


USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")


def _counters(agent: Any) -> dict[str, int]:
    """hermes' token counters of `agent` so far: they count over the agent's whole life, and a
    conversation's agent serves run after run (bridge/pool.py)."""
    return {key: int(getattr(agent, f"session_{key}", 0) or 0) for key in USAGE_KEYS}


def _usage(result: dict[str, Any], before: dict[str, int]) -> dict[str, int]:
    """This run's tokens: the result's counters less what they were before the run, and
    `context_tokens`, its last model call's prompt (how full the window is; the counters add
    up every call of the run). hermes parks it at -1 right after a compression: unknown."""
    usage = {key: max(int(result.get(key) or 0) - before.get(key, 0), 0) for key in USAGE_KEYS}
    context = int(result.get("last_prompt_tokens") or 0)
    return {**usage, "context_tokens": context} if context > 0 else usage


def execute(run: Run, pool: AgentPool) -> None:
    """The body of a run's thread: build or reuse the agent, run one turn, finish."""
    from agent_chat.bridge.agent_factory import apply_context_length, apply_vision

    request = run.request
    run.buffer.emit(EventType.RUN_STARTED, session_id=run.session_id, model=run.model.model)
    agent = None
    try:
        if run.stop_requested:
            run.finish(RunState.STOPPED, EventType.RUN_STOPPED, final_text="")
            return
        profile = request.tool_profile
        agent = pool.acquire(
            run.user_id, run.session_id, run.model, profile, tuple(request.mcp_servers)
        )
        mapper = CallbackMapper(
            emit=run.buffer.emit,
            ask=run.ask,
            on_step=run.check_stop,
            summary=lambda: _compaction_summary(agent),
            subagents=Subagents(
                run.buffer.emit, agent, task_id=run.session_id, approve=run.approve
            ),
        )
        for name, callback in mapper.callbacks().items():
            setattr(agent, name, callback)
        for server, why in getattr(agent, "agent_chat_mcp_problems", {}).items():
            run.buffer.emit(
                EventType.STATUS,
                category="notice",
                message=f"The MCP server {server!r} is not available for this answer: {why}",
            )
        agent.ephemeral_system_prompt = request.system_prompt or None
        agent.max_iterations = request.max_iterations or 90
        apply_context_length(agent, run.model)
        apply_vision(agent, run.model)
        agent.clear_interrupt()  # before run.agent is set, so it cannot erase a new stop
        run.agent = agent
        if run.stop_requested:  # a stop (or the watchdog) came while the agent was built
            run.finish(RunState.STOPPED, EventType.RUN_STOPPED, final_text="")
            return
        history = [m.model_dump() for m in request.history]
        with (
            _person(run),
            approvals_for(run.session_id, run.approve),
            _workspace(run, profile),
            mcp_images.for_run(run.session_id, run.workspaces_root, request.workspace),
        ):
            foreground_delegation()
            message = request.agent_message()
            before = _counters(agent)
            result = agent.run_conversation(
                message, conversation_history=history, task_id=run.session_id
            )
        _finish_from_result(run, result, before, note=_pictures_dropped(agent, message))
    except Exception as exc:
        logger.exception("run %s crashed", run.run_id)
        if run.stop_requested:
            run.finish(RunState.STOPPED, EventType.RUN_STOPPED, final_text="")
        else:
            run.finish(RunState.FAILED, EventType.RUN_FAILED, error=f"The agent failed: {exc}")
    finally:
        run.agent = None
        # An ended run is kept for replay (bridge/registry.py) with its events only: the
        # conversation's history it was started with would make every kept run as big as
        # its conversation.
        run.request = request.model_copy(update={"history": []})
        if agent is not None:
            for name in CallbackMapper.callback_attribute_names():
                setattr(agent, name, None)
            pool.release(run.user_id, run.session_id, agent)


PICTURES_DROPPED = (
    "_(The model's endpoint refused the attached picture, so this answer was written without "
    "seeing it. Untick “Reads images” for this model in Settings → Models.)_"
)


def _pictures_dropped(agent: Any, message: Any) -> str | None:
    """The note an answer ends with when hermes, its endpoint having refused an image part,
    stripped the pictures and asked again (`_vision_supported` turned off for the turn): the
    answer comes without them, and the person must not think the agent saw them."""
    sent = isinstance(message, list) and any(p.get("type") == "image_url" for p in message)
    return PICTURES_DROPPED if sent and getattr(agent, "_vision_supported", True) is False else None


def _finish_from_result(
    run: Run, result: dict[str, Any], before: dict[str, int], note: str | None = None
) -> None:
    final_text = str(result.get("final_response") or "")
    usage = _usage(result, before)
    if run.stop_requested or result.get("interrupted"):
        # What was streamed is the answer; hermes' final text of an interrupted turn is its
        # own notice ("Operation interrupted: retrying API call ...").
        run.finish(RunState.STOPPED, EventType.RUN_STOPPED, record_usage=usage, final_text="")
    elif result.get("failed") or not result.get("completed", True):
        # A step or budget limit is no endpoint fault: hermes' final text there is the model's
        # summary, which readable_failure would show as an error message.
        limit = str(result.get("turn_exit_reason") or "").startswith(LIMIT_REASONS)
        error = abnormal_end_sentence(result) if limit else None
        error = error or readable_failure(result, run.model.base_url)
        # hermes' own words stay in the log; the person reads the sentence.
        logger.warning(
            "run %s failed: %s | hermes: error=%r failure_reason=%r final_response=%r",
            run.run_id,
            error,
            result.get("error"),
            result.get("failure_reason"),
            str(result.get("final_response") or "")[:500],
        )
        run.finish(RunState.FAILED, EventType.RUN_FAILED, record_usage=usage, error=error)
    elif (abnormal := abnormal_end_sentence(result)) is not None:
        logger.warning(
            "run %s ended without an answer: %s | hermes: turn_exit_reason=%r final_response=%r",
            run.run_id,
            abnormal,
            result.get("turn_exit_reason"),
            final_text[:300],
        )
        run.finish(RunState.FAILED, EventType.RUN_FAILED, record_usage=usage, error=abnormal)
    else:
        if note:  # streamed and in the final text alike, so a reload shows the same
            run.buffer.emit(EventType.TEXT_DELTA, text="\n\n" + note)
            final_text = f"{final_text}\n\n{note}" if final_text else note
        run.finish(
            RunState.SUCCEEDED,
            EventType.RUN_COMPLETED,
            record_usage=usage,
            final_text=final_text,
            usage=usage,
        )


@contextlib.contextmanager
def _person(run: Run) -> Iterator[None]:
    """hermes works in the person's home for the turn: the memory tool writes their files,
    the background memory review too (hermes hands this thread's context to its workers)."""
    if run.hermes_home is None:
        yield
        return
    with entered(run.hermes_home, run.user_id):
        yield


@contextlib.contextmanager
def _workspace(run: Run, profile: str) -> Iterator[None]:
    if not uses_workspace(profile) or run.workspaces_root is None:
        yield
        return
    name = run.request.workspace or run.session_id
    folder = open_workspace(run.workspaces_root, run.session_id, name)
    try:
        box = run.sandbox.for_run(run.workspaces_root, name, folder)
        with sandbox.entered(box) if box is not None else contextlib.nullcontext():
            yield
    finally:
        close_workspace(run.session_id)


def _compaction_summary(agent: Any) -> str:
    # hermes keeps the latest summary on its compressor (private attribute, read defensively).
    compressor = getattr(agent, "context_compressor", None)
    return str(getattr(compressor, "_previous_summary", None) or "")

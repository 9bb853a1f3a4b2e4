"""Runs: one run's state (status, stop, questions and approvals, guidance) and the idle
watchdog; its thread's body is bridge/execute.py.

Locking: the registry lock guards admission (busy session, duplicate id, cap); each run's
lock guards its status, stop flag and pending question, so a stop that lands just before a
question is registered is seen by it, and a question is resolved exactly once.

Inactivity watchdog: one registry thread (alive only while runs are unfinished) fails a run
that emitted no event for ``idle_timeout_s`` while working. A run waiting for a clarify answer
is exempt, and the answer's ``clarify_resolved`` event restarts its clock. The watchdog sends
the terminal ``run_failed`` itself and interrupts hermes: the run ends even if hermes stays
stuck in a read, and whatever the run thread reports afterwards is dropped (one terminal event).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_chat.bridge.approvals import CHOICES, DENY, ONCE, SESSION
from agent_chat.bridge.events import EventBuffer
from agent_chat.bridge.failures import idle_sentence
from agent_chat.bridge.sandbox import Policy
from agent_chat.bridge.schemas import ModelSpec, StartRunRequest
from agent_chat.protocol.events import FINISHED_STATES, EventType, RunState

logger = logging.getLogger(__name__)

STOP_MESSAGE = "Stopped by the user."
IDLE_INTERRUPT_MESSAGE = "Stopped by the bridge: no activity."


class RunRejected(Exception):
    """A run cannot start; ``status_code`` is the HTTP answer."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message


@dataclass
class PendingClarify:
    """A question (kind "clarify") or a dangerous step to approve (kind "approval")."""

    clarify_id: str
    question: str
    choices: list[str] | None
    kind: str = "clarify"
    description: str = ""  # approvals: hermes' words for the danger
    subagent: str = ""  # asked for a child agent (its id): the page shows which
    answered: threading.Event = field(default_factory=threading.Event)
    answer: str | None = None
    resolved: bool = False

    def public(self) -> dict[str, Any]:
        body = {"clarify_id": self.clarify_id, "question": self.question, "choices": self.choices}
        if self.kind == "approval":
            body.update(kind="approval", command=self.question, description=self.description)
        if self.subagent:
            body["subagent"] = self.subagent
        return body

    @property
    def resolved_event(self) -> str:
        return (
            EventType.APPROVAL_RESOLVED if self.kind == "approval" else EventType.CLARIFY_RESOLVED
        )

    def cancel_fields(self) -> dict[str, Any]:
        # A stopped or expired approval is a denial: hermes must not run the command.
        answer = DENY if self.kind == "approval" else None
        return {"clarify_id": self.clarify_id, "answer": answer, "cancelled": True}


class Run:
    """One turn of one session, run by hermes in its own thread."""

    def __init__(self, request: StartRunRequest, run_id: str, clarify_max_wait_s: float) -> None:
        self.run_id = run_id
        self.request = request
        self.session_id = request.session_id
        self.user_id = request.user  # whose hermes home the run works in
        self.model: ModelSpec = request.model
        self.buffer = EventBuffer(run_id)
        self.clarify_max_wait_s = clarify_max_wait_s
        self.created_at = time.time()
        self.ended_at: float | None = None
        self.final_text: str | None = None
        self.error: str | None = None
        self.usage: dict[str, int] | None = None
        self._status = RunState.RUNNING
        self._lock = threading.RLock()
        self._stop_requested = False
        self._expired = False  # failed by the idle watchdog
        self._pending: PendingClarify | None = None
        # One pause at a time: children working in parallel ask one after the other.
        self._asking = threading.Lock()
        self._steering = False  # guidance sent that hermes has not taken in yet
        self.agent: Any = None
        self.workspaces_root: Path | None = None  # Workspace runs work in a folder below
        self.hermes_home: Path | None = None  # the shared home; the person's is below it
        self.sandbox: Policy = Policy()  # how its Workspace commands are isolated

    @property
    def status(self) -> RunState:
        return self._status

    @property
    def finished(self) -> bool:
        return self._status in FINISHED_STATES

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def snapshot(self) -> dict[str, Any]:
        """The body of ``GET /runs/{run_id}``."""
        with self._lock:
            pending = self._pending
            body: dict[str, Any] = {
                "run_id": self.run_id,
                "session_id": self.session_id,
                "status": self._status.value,
                "pending_clarify": pending.public() if pending and not pending.resolved else None,
                "last_event_id": self.buffer.last_seq,
                "created_at": self.created_at,
                "ended_at": self.ended_at,
            }
            if self.final_text is not None:
                body["final_text"] = self.final_text
            if self.error is not None:
                body["error"] = self.error
            if self.usage is not None:
                body["usage"] = self.usage
            return body

    # -- called from the agent thread ------------------------------------------------

    def ask(self, question: str, choices: list[str] | None) -> str:
        """Block the agent until the question is answered, the run stops, or the cap passes."""
        if self._stop_requested:
            return ""
        pending = PendingClarify(uuid.uuid4().hex, question, choices)
        return self._wait(pending, EventType.CLARIFY_REQUEST) or ""

    def approve(self, command: str, description: str, *, subagent: str = "", **options: Any) -> str:
        """hermes' approval callback: block until the person chooses; a stop, the cap or
        anything unexpected is a denial. `subagent`: the child agent whose command it is."""
        if self._stop_requested:
            return DENY
        choices = list(CHOICES) if options.get("allow_permanent", True) else [ONCE, SESSION, DENY]
        if options.get("smart_denied"):
            choices = [ONCE, DENY]
        pending = PendingClarify(
            uuid.uuid4().hex,
            command,
            choices,
            kind="approval",
            description=description,
            subagent=subagent,
        )
        answer = self._wait(pending, EventType.APPROVAL_REQUEST)
        return answer if answer in choices else DENY

    def _wait(self, pending: PendingClarify, event: str) -> str | None:
        with self._asking:  # a second asker waits for the first answer, then asks
            return self._wait_alone(pending, event)

    def _wait_alone(self, pending: PendingClarify, event: str) -> str | None:
        with self._lock:
            if self._stop_requested:
                return pending.cancel_fields()["answer"]
            self._pending = pending
            self._status = RunState.WAITING_INPUT
            self.buffer.emit(event, **pending.public())
        answered = pending.answered.wait(self.clarify_max_wait_s)
        with self._lock:
            self._pending = None
            if self._status == RunState.WAITING_INPUT:
                self._status = RunState.RUNNING
            if not answered and not pending.resolved:
                pending.resolved = True
                logger.warning(
                    "run %s: %s unanswered after %ss",
                    self.run_id,
                    pending.kind,
                    self.clarify_max_wait_s,
                )
                self.buffer.emit(pending.resolved_event, **pending.cancel_fields(), timed_out=True)
                return pending.cancel_fields()["answer"]
            return pending.answer

    def check_stop(self) -> None:
        """At each step: re-deliver a stop to hermes (one that came before run_conversation
        started), and report guidance hermes has taken into a tool result."""
        if self._stop_requested and self.agent is not None:
            self.agent.interrupt(STOP_MESSAGE)
        with self._lock:
            agent = self.agent
            if self._steering and agent is not None and not getattr(agent, "_pending_steer", None):
                self._steering = False
                self.buffer.emit(EventType.STEER_RESULT, delivered=True)

    def steer(self, text: str) -> None:
        """Guidance for the working agent: hermes appends it to the next tool result
        (`AIAgent.steer`); RunRejected(409) when the run is not working."""
        with self._lock:
            agent = self.agent
            if self.finished or agent is None or self._stop_requested:
                raise RunRejected(409, "The run is not working now: send a new message instead.")
            if not agent.steer(text):
                raise RunRejected(422, "Type the guidance first.")
            self._steering = True
            self.buffer.emit(EventType.STEER, text=text.strip())

    def finish(
        self,
        status: RunState,
        event: str,
        *,
        record_usage: dict[str, int] | None = None,
        **fields: Any,
    ) -> bool:
        """Record the outcome, then send the one terminal event; False if already finished.

        ``record_usage`` is kept for ``GET /runs/{id}``; the event carries ``fields`` only.
        """
        with self._lock:
            if self.finished:
                # Expected after the watchdog ended the run: hermes returns later.
                log = logger.info if self._expired else logger.error
                log("run %s finished twice (%s after %s)", self.run_id, status, self._status)
                return False
            self._status = status
            self.ended_at = time.time()
            if "final_text" in fields:
                self.final_text = fields["final_text"]
            if "error" in fields:
                self.error = fields["error"]
            if record_usage is not None:
                self.usage = record_usage
            if self._steering:  # guidance hermes never took in: said so, before the end
                self._steering = False
                self.buffer.emit(EventType.STEER_RESULT, delivered=False)
            self.buffer.emit(event, **fields)
            return True

    def expire_if_idle(self, idle_timeout_s: float) -> bool:
        """Fail the run if it is working and sent no event for ``idle_timeout_s``.

        Waiting for a clarify answer does not count. True if the run was failed here.
        """
        with self._lock:
            if self.finished or self._status != RunState.RUNNING:
                return False
            idle = self.buffer.idle_for()
            if idle < idle_timeout_s:
                return False
            last = self.buffer.last_event()
            tool = None
            if last is not None and last.type == EventType.TOOL_START:
                tool = str(last.data.get("tool") or "") or None
            user_stopped = self._stop_requested  # hermes ignored the user's stop too
            self._expired = True
            self._stop_requested = True  # the run thread must not start or go on
            agent = self.agent
            if user_stopped:
                self.finish(RunState.STOPPED, EventType.RUN_STOPPED, final_text="")
            else:
                self.finish(
                    RunState.FAILED, EventType.RUN_FAILED, error=idle_sentence(idle_timeout_s, tool)
                )
        logger.warning(
            "run %s: no event for %.1fs (last: %s); failed by the idle watchdog",
            self.run_id,
            idle,
            last.type if last else None,
        )
        if agent is not None:
            agent.interrupt(IDLE_INTERRUPT_MESSAGE)
        return True

    # -- called from HTTP handlers ---------------------------------------------------

    def answer(self, clarify_id: str, answer: str) -> bool:
        """Wake the waiting agent; False if no such question is waiting. An approval takes
        one of its choices only (RunRejected 422 otherwise)."""
        with self._lock:
            pending = self._pending
            if pending is None or pending.resolved or pending.clarify_id != clarify_id:
                return False
            if pending.kind == "approval" and answer not in (pending.choices or []):
                raise RunRejected(
                    422, f"An approval takes one of {', '.join(pending.choices or [])}."
                )
            pending.resolved = True
            pending.answer = answer
            self._status = RunState.RUNNING
            self.buffer.emit(pending.resolved_event, clarify_id=clarify_id, answer=answer)
            pending.answered.set()
            return True

    def request_stop(self) -> None:
        with self._lock:
            if self.finished:
                return
            self._stop_requested = True
            pending = self._pending
            if pending is not None and not pending.resolved:
                pending.resolved = True
                pending.answer = pending.cancel_fields()["answer"]
                self.buffer.emit(pending.resolved_event, **pending.cancel_fields())
                pending.answered.set()
            agent = self.agent
        if agent is not None:
            agent.interrupt(STOP_MESSAGE)

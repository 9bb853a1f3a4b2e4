"""The bridge's registry of runs: admission (busy session, duplicate id, cap), buffer
retention and the inactivity watchdog thread (see bridge/runs.py for one run's life)."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from pathlib import Path

from agent_chat.bridge.approvals import forget_session
from agent_chat.bridge.execute import execute
from agent_chat.bridge.pool import AgentPool
from agent_chat.bridge.runs import Run, RunRejected
from agent_chat.bridge.sandbox import Policy
from agent_chat.bridge.schemas import StartRunRequest
from agent_chat.protocol.events import RunState

logger = logging.getLogger(__name__)


class RunRegistry:
    """Every run this process knows, with admission rules and buffer retention."""

    def __init__(
        self,
        pool: AgentPool,
        max_active_runs: int,
        clarify_max_wait_s: float,
        retention_s: float,
        idle_timeout_s: float = 600.0,
        retention_runs: int = 200,
        tool_profiles: tuple[str, ...] = ("chat",),
        workspaces_root: Path | None = None,
        hermes_home: Path | None = None,
        sandbox: Policy | None = None,
    ) -> None:
        self.pool = pool
        self.tool_profiles = tool_profiles
        self.workspaces_root = workspaces_root
        self.hermes_home = hermes_home
        self.sandbox = sandbox or Policy()
        self.max_active_runs = max_active_runs
        self.clarify_max_wait_s = clarify_max_wait_s
        self.retention_s = retention_s
        self.retention_runs = retention_runs
        self.idle_timeout_s = idle_timeout_s
        self._lock = threading.Lock()
        self._runs: dict[str, Run] = {}
        self._watchdog: threading.Thread | None = None

    def start(self, request: StartRunRequest) -> Run:
        """Admit and start a run, or raise RunRejected (409 busy/duplicate, 429 cap)."""
        self.purge_expired()
        if request.tool_profile not in self.tool_profiles:
            raise RunRejected(
                422,
                f"The tool profile {request.tool_profile!r} is not enabled on this bridge "
                f"(AGENT_CHAT_TOOL_PROFILES={','.join(self.tool_profiles)}).",
            )
        with self._lock:
            run_id = request.run_id or uuid.uuid4().hex
            if run_id in self._runs:
                raise RunRejected(409, f"A run with id {run_id!r} already exists.")
            if any(
                r.session_id == request.session_id and not r.finished for r in self._runs.values()
            ):
                raise RunRejected(409, f"Session {request.session_id!r} already has a running run.")
            working = self._working_count()
            if working >= self.max_active_runs:
                raise RunRejected(
                    429,
                    f"Too many runs at once ({working} of {self.max_active_runs}); try again later.",
                )
            run = Run(request, run_id, self.clarify_max_wait_s)
            run.workspaces_root = self.workspaces_root
            run.hermes_home = self.hermes_home
            run.sandbox = self.sandbox
            self._runs[run_id] = run
            self._ensure_watchdog()
        thread = threading.Thread(
            target=execute, args=(run, self.pool), name=f"run-{run_id}", daemon=True
        )
        thread.start()
        return run

    def _ensure_watchdog(self) -> None:
        # Under self._lock: the watchdog leaves (under the same lock) once no run is unfinished.
        if self._watchdog is None:
            self._watchdog = threading.Thread(
                target=self._watch, name="run-idle-watchdog", daemon=True
            )
            self._watchdog.start()

    def _watch(self) -> None:
        """Fail runs that went quiet; exits when every run has finished."""
        while True:
            time.sleep(max(0.05, min(1.0, self.idle_timeout_s / 10)))
            with self._lock:
                unfinished = [r for r in self._runs.values() if not r.finished]
                if not unfinished:
                    self._watchdog = None
                    return
            for run in unfinished:
                try:
                    run.expire_if_idle(self.idle_timeout_s)
                except Exception:
                    logger.exception("idle watchdog failed on run %s", run.run_id)

    def get(self, run_id: str) -> Run | None:
        self.purge_expired()
        with self._lock:
            return self._runs.get(run_id)

    def _working_count(self) -> int:
        # Runs waiting for an answer do not count: each has its own thread.
        return sum(1 for r in self._runs.values() if r.status == RunState.RUNNING)

    def counts(self) -> dict[str, int]:
        with self._lock:
            waiting = sum(1 for r in self._runs.values() if r.status == RunState.WAITING_INPUT)
            return {"active_runs": self._working_count(), "waiting_runs": waiting}

    def reset_session(self, session_id: str) -> None:
        """Drop the session's agent; RunRejected(409) while it has a run going."""
        with self._lock:
            if any(r.session_id == session_id and not r.finished for r in self._runs.values()):
                raise RunRejected(409, f"Session {session_id!r} has a running run; stop it first.")
            self.pool.drop(session_id)
        forget_session(session_id)  # "allow for this conversation" ends with its context

    def purge_expired(self) -> None:
        """Forget runs that ended more than the retention time ago, and the oldest ended
        runs beyond the retention count."""
        cutoff = time.time() - self.retention_s
        with self._lock:
            ended = sorted(
                (r.ended_at, rid) for rid, r in self._runs.items() if r.ended_at is not None
            )
            extra = max(0, len(ended) - self.retention_runs)
            for i, (ended_at, rid) in enumerate(ended):
                if i < extra or ended_at < cutoff:
                    del self._runs[rid]

    def stop_all(self) -> None:
        with self._lock:
            runs = list(self._runs.values())
        for run in runs:
            run.request_stop()

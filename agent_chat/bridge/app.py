"""The bridge's FastAPI app: HTTP + SSE around hermes-agent (docs/architecture.md §4)."""

from __future__ import annotations

import hmac
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from importlib import metadata

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_chat.bridge import cache_pruner, mcp
from agent_chat.bridge.agent_factory import build_agent
from agent_chat.bridge.approvals import always_allowed, revoke_always
from agent_chat.bridge.homes import claim_shared, home_path, user_home
from agent_chat.bridge.memory import MemoryLimitError, memory_files
from agent_chat.bridge.pool import AgentPool
from agent_chat.bridge.registry import RunRegistry
from agent_chat.bridge.runs import Run, RunRejected
from agent_chat.bridge.schemas import (
    MAX_USER_ID,
    ClaimSharedMemory,
    ClarifyAnswer,
    McpServerSpec,
    MemoryUpdate,
    PrepareRequest,
    StartRunRequest,
    SteerRequest,
)
from agent_chat.bridge.settings import BridgeSettings, load_bridge_settings, prepare_hermes_home
from agent_chat.bridge.warm_up import warm_up
from agent_chat.common.hosts import Allowed
from agent_chat.common.tool_profiles import uses_workspace
from agent_chat.protocol.bridge_auth import NONCE, token_proof

logger = logging.getLogger(__name__)

BRIDGE_VERSION = "1"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _hermes_version() -> str:
    try:
        return metadata.version("hermes-agent")
    except metadata.PackageNotFoundError:
        return "unknown"


def _readable_validation_error(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "Invalid request: " + "; ".join(parts)


class HostGuard:
    """Refuse a `Host` that is not this machine or a configured name (DNS rebinding: a foreign
    name resolving to 127.0.0.1 must not reach the agent or the memory). Pure ASGI, so the
    SSE streams pass through untouched."""

    def __init__(self, app: ASGIApp, allowed: Allowed) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = Headers(scope=scope).get("host", "")
            if not self.allowed.host_ok(host):
                logger.warning("refused a request for host %r (%s)", host, scope.get("path"))
                response = JSONResponse({"detail": f"Host {host!r} is not served here."}, 400)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _prepare_quietly(pool: AgentPool, session_id: str, body: PrepareRequest) -> None:
    try:
        pool.prepare(body.user, session_id, body.model, body.tool_profile, tuple(body.mcp_servers))
    except Exception:  # the first run will build it, and say what is wrong
        logger.warning("preparing the agent of %s failed", session_id, exc_info=True)


def create_app(settings: BridgeSettings | None = None) -> FastAPI:
    """The bridge app; ``settings`` default to the environment (read before hermes loads)."""
    settings = settings or load_bridge_settings()
    prepare_hermes_home(settings)
    pool = AgentPool(partial(build_agent, settings), settings.agent_pool_size)
    registry = RunRegistry(
        pool,
        max_active_runs=settings.max_active_runs,
        clarify_max_wait_s=settings.clarify_max_wait_s,
        retention_s=settings.buffer_retention_s,
        retention_runs=settings.buffer_retention_runs,
        idle_timeout_s=settings.run_idle_timeout_s,
        tool_profiles=settings.tool_profiles,
        workspaces_root=settings.workspaces_root,
        sandbox=settings.sandbox,
        hermes_home=settings.hermes_home,
    )

    warm = threading.Event()  # /health says when hermes is warm: first answers are fast then
    if not settings.warm_up:
        warm.set()

    def warm_up_then_say_so() -> None:
        try:
            warm_up(settings)
        finally:
            warm.set()

    # hermes' caches in every home, pruned at start (once warm) and hourly.
    pruner = cache_pruner.Pruner(settings.hermes_home, warm)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if any(uses_workspace(p) for p in settings.tool_profiles):
            say = logger.info if settings.sandbox.isolated() else logger.warning
            say("Workspace commands: %s", settings.sandbox.status())
        if settings.warm_up:
            threading.Thread(target=warm_up_then_say_so, name="hermes-warm-up", daemon=True).start()
        pruner.start()
        yield
        pruner.stop()
        registry.stop_all()  # wake waiting questions so their threads can end

    app = FastAPI(title="Agent Chat bridge", version=BRIDGE_VERSION, lifespan=lifespan)
    app.state.settings = settings
    app.state.registry = registry
    app.state.pool = pool
    app.state.pruner = pruner

    app.add_middleware(HostGuard, allowed=Allowed.from_lists(settings.allowed_hosts))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            status_code=422,
            # jsonable: a validator's ValueError sits in an error's ctx (a 500 otherwise)
            content={
                "detail": _readable_validation_error(exc),
                "errors": jsonable_encoder(exc.errors()),
            },
        )

    def require_token(authorization: str | None = Header(default=None)) -> None:
        if settings.token is None:
            return
        expected = f"Bearer {settings.token}"
        if authorization is None or not hmac.compare_digest(authorization, expected):
            raise HTTPException(
                status_code=401,
                detail="Missing or wrong bearer token.",
                headers={"WWW-Authenticate": "Bearer"},
            )

    def run_or_404(run_id: str) -> Run:
        run = registry.get(run_id)
        if run is None:
            raise HTTPException(status_code=404, detail=f"Unknown run {run_id!r}.")
        return run

    @app.get("/health")
    def health() -> dict[str, object]:
        return {
            "status": "ok",
            "version": BRIDGE_VERSION,
            "hermes_version": _hermes_version(),
            "tool_profiles": list(settings.tool_profiles),
            "warm": warm.is_set(),
            # How its Workspace commands are isolated ("" without the Workspace profile).
            "sandbox": settings.sandbox.status() if workspace_on else "",
            **registry.counts(),
        }

    authed = [Depends(require_token)]
    workspace_on = any(uses_workspace(p) for p in settings.tool_profiles)

    @app.get("/auth", dependencies=authed)
    def auth() -> dict[str, bool]:
        """200 with the token, 401 without: what a launcher checks before adopting a bridge."""
        return {"ok": True}

    @app.get("/token-proof")
    def proof(nonce: str = Query(pattern=NONCE.pattern)) -> dict[str, str]:
        """That this bridge holds the token, proved without anyone sending it
        (protocol/bridge_auth.py); 404 for a bridge without a token."""
        if settings.token is None:
            raise HTTPException(status_code=404, detail="This bridge has no token.")
        return {"proof": token_proof(settings.token, nonce)}

    @app.post("/runs", status_code=201, dependencies=authed)
    def start_run(body: StartRunRequest) -> dict[str, str]:
        try:
            run = registry.start(body)
        except RunRejected as exc:
            raise HTTPException(status_code=exc.status_code, detail=exc.message) from exc
        return {"run_id": run.run_id}

    @app.get("/runs/{run_id}", dependencies=authed)
    def get_run(run_id: str) -> dict[str, object]:
        return run_or_404(run_id).snapshot()

    @app.get("/runs/{run_id}/events", dependencies=authed)
    async def run_events(
        run_id: str,
        last_event_id: int | None = Query(default=None, ge=0),
        last_event_id_header: str | None = Header(default=None, alias="Last-Event-ID"),
    ) -> StreamingResponse:
        run = run_or_404(run_id)
        after = last_event_id or 0
        if last_event_id_header:
            try:
                after = int(last_event_id_header)
            except ValueError as exc:
                raise HTTPException(422, "Last-Event-ID must be an integer.") from exc
        stream = run.buffer.stream(after, settings.keepalive_interval_s)
        return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)

    @app.post("/runs/{run_id}/clarify", dependencies=authed)
    def answer_clarify(run_id: str, body: ClarifyAnswer) -> dict[str, object]:
        run = run_or_404(run_id)
        try:
            answered = run.answer(body.clarify_id, body.answer)
        except RunRejected as exc:
            raise HTTPException(status_code=exc.status_code, detail=exc.message) from exc
        if not answered:
            raise HTTPException(
                status_code=404,
                detail=f"No open question {body.clarify_id!r} in run {run_id!r} (unknown or already answered).",
            )
        return {"run_id": run_id, "clarify_id": body.clarify_id, "status": run.status.value}

    @app.post("/runs/{run_id}/steer", dependencies=authed)
    def steer_run(run_id: str, body: SteerRequest) -> dict[str, object]:
        run = run_or_404(run_id)
        try:
            run.steer(body.text)
        except RunRejected as exc:
            raise HTTPException(status_code=exc.status_code, detail=exc.message) from exc
        return {"run_id": run_id, "steered": True}

    @app.post("/runs/{run_id}/stop", dependencies=authed)
    def stop_run(run_id: str) -> dict[str, object]:
        run = run_or_404(run_id)
        run.request_stop()
        return {"run_id": run_id, "status": run.status.value, "stop_requested": not run.finished}

    @app.post("/sessions/{session_id}/prepare", status_code=202, dependencies=authed)
    def prepare_session(session_id: str, body: PrepareRequest) -> dict[str, object]:
        """Build the session's agent in the background; its first run then starts at once."""
        if body.tool_profile not in settings.tool_profiles:
            raise HTTPException(status_code=422, detail=f"{body.tool_profile!r} is not enabled.")
        threading.Thread(
            target=_prepare_quietly,
            args=(pool, session_id, body),
            name=f"prepare-{session_id[:8]}",
            daemon=True,
        ).start()
        return {"session_id": session_id, "preparing": True}

    @app.post("/mcp/test", dependencies=authed)
    def test_mcp_server(body: McpServerSpec) -> dict[str, object]:
        """Connect to a server once, list its tools, disconnect (Settings → Tools' Test)."""
        return mcp.test(body)

    @app.get("/mcp/status", dependencies=authed)
    def mcp_status() -> dict[str, object]:
        return {"servers": mcp.status()}

    @app.post("/sessions/{session_id}/reset", dependencies=authed)
    def reset_session(session_id: str) -> dict[str, object]:
        try:
            registry.reset_session(session_id)
        except RunRejected as exc:
            raise HTTPException(status_code=exc.status_code, detail=exc.message) from exc
        return {"session_id": session_id, "reset": True}

    @app.get("/approvals/always", dependencies=authed)
    def list_always() -> dict[str, object]:
        """The dangerous-command patterns allowed in every conversation."""
        return {"patterns": always_allowed()}

    @app.delete("/approvals/always/{pattern:path}", dependencies=authed)
    def revoke(pattern: str) -> dict[str, object]:
        if not revoke_always(pattern):
            raise HTTPException(status_code=404, detail=f"{pattern!r} is not always allowed.")
        return {"patterns": always_allowed()}

    # Whose memory: `?user=<id>`, a positive integer (422 when missing or not one).
    @app.get("/memory", dependencies=authed)
    def get_memory(user: int = Query(gt=0, le=MAX_USER_ID)) -> dict[str, object]:
        # Read only: a home is made by the first write or run, not by looking.
        return memory_files(home_path(settings.hermes_home, user)).read()

    @app.put("/memory", dependencies=authed)
    def put_memory(
        body: MemoryUpdate, user: int = Query(gt=0, le=MAX_USER_ID)
    ) -> dict[str, object]:
        try:
            result = memory_files(user_home(settings.hermes_home, user)).write(
                {"memory": body.memory, "user": body.user}
            )
        except MemoryLimitError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        # hermes freezes memory into the system prompt when an agent is built.
        pool.drop_idle(user)
        return result

    @app.post("/memory/claim-shared", dependencies=authed)
    def claim_shared_memory(body: ClaimSharedMemory) -> dict[str, object]:
        """The memory of an install from before accounts goes to this person, once."""
        try:
            result = claim_shared(settings.hermes_home, body.user)
        except MemoryLimitError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        if result["claimed"]:
            pool.drop_idle(body.user)
        return result

    return app

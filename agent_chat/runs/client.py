"""Async client for the bridge protocol (docs/architecture.md §4).

One domain error type, `BridgeError`, carries a sentence a person can read; the event
stream reconnects with `Last-Event-ID` when the connection drops.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any
from urllib.parse import quote

import httpx
from httpx_sse import SSEError, aconnect_sse

from agent_chat.protocol.events import FINISHED_STATES, RunEvent

log = logging.getLogger(__name__)


class BridgeError(Exception):
    """Any failure talking to the bridge, with a message fit for the UI."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


class BridgeUnavailable(BridgeError):
    """The bridge cannot be reached (down, restarting, wrong URL)."""


class RunNotFound(BridgeError):
    """The bridge does not know the run (it restarted, or the run expired)."""


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    detail = body.get("detail", body) if isinstance(body, dict) else body
    if isinstance(detail, list):  # FastAPI validation errors
        return "; ".join(str(item.get("msg", item)) for item in detail if isinstance(item, dict))
    return str(detail)


class BridgeClient:
    """Talks to one bridge. Create once per process; close with `aclose()`."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 15.0,
        reconnect_for: float = 30.0,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url.rstrip("/")
        # Reads on the event stream wait for keep-alives (every 15 s), so the read timeout
        # must exceed that interval; other calls are short.
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            transport=transport,
            timeout=httpx.Timeout(timeout, read=60.0),
        )
        self._reconnect_for = reconnect_for

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _request(
        self, method: str, path: str, *, missing_run: bool = True, **kwargs: Any
    ) -> httpx.Response:
        """One call; a 404 on a /runs/ path is `RunNotFound` unless `missing_run` is False."""
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise BridgeUnavailable(
                f"The agent service at {self.base_url} is not reachable ({type(exc).__name__})."
            ) from exc
        if response.status_code == 404 and missing_run and path.startswith("/runs/"):
            raise RunNotFound(
                f"The agent service does not know this run: {_detail(response)}", status_code=404
            )
        if response.status_code >= 400:
            raise BridgeError(_detail(response), status_code=response.status_code)
        return response

    async def health(self) -> dict[str, Any]:
        return (await self._request("GET", "/health")).json()

    async def start_run(
        self,
        *,
        user_id: int,
        session_id: str,
        message: str | list[dict[str, Any]],  # content parts when it carries attachments
        history: list[dict[str, str]],
        model: dict[str, Any],
        system_prompt: str | None = None,
        max_iterations: int | None = None,
        run_id: str | None = None,
        tool_profile: str = "chat",
        workspace: str | None = None,
        mcp_servers: Sequence[dict[str, Any]] = (),
    ) -> str:
        body: dict[str, Any] = {
            "user": user_id,  # whose hermes home (memory) the run works in
            "session_id": session_id,
            "message": message,
            "history": history,
            "model": model,
            "tool_profile": tool_profile,
        }
        if workspace:
            body["workspace"] = workspace
        if mcp_servers:
            body["mcp_servers"] = list(mcp_servers)  # with their secrets: for hermes only
        if system_prompt:
            body["system_prompt"] = system_prompt
        if max_iterations:
            body["max_iterations"] = max_iterations
        if run_id:
            body["run_id"] = run_id
        response = await self._request("POST", "/runs", json=body)
        return response.json()["run_id"]

    async def run_state(self, run_id: str) -> dict[str, Any]:
        return (await self._request("GET", f"/runs/{run_id}")).json()

    async def answer_clarify(self, run_id: str, clarify_id: str, answer: str) -> None:
        # A 404 here usually means the question was already answered: not a lost run.
        await self._request(
            "POST",
            f"/runs/{run_id}/clarify",
            missing_run=False,
            json={"clarify_id": clarify_id, "answer": answer},
        )

    async def prepare(
        self,
        session_id: str,
        model: dict[str, Any],
        tool_profile: str,
        *,
        user_id: int,
        mcp_servers: Sequence[dict[str, Any]] = (),
    ) -> None:
        body: dict[str, Any] = {"user": user_id, "model": model, "tool_profile": tool_profile}
        if mcp_servers:
            body["mcp_servers"] = list(mcp_servers)
        await self._request("POST", f"/sessions/{session_id}/prepare", json=body)

    async def test_mcp(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Connect to an MCP server once and list its tools (`{ok, tools, error, seconds}`);
        a connect may take its whole timeout."""
        timeout = float(spec.get("connect_timeout") or 30) + 30
        return (await self._request("POST", "/mcp/test", json=spec, timeout=timeout)).json()

    async def mcp_status(self) -> list[dict[str, Any]]:
        return (await self._request("GET", "/mcp/status")).json()["servers"]

    async def steer(self, run_id: str, text: str) -> None:
        await self._request("POST", f"/runs/{run_id}/steer", json={"text": text})

    async def stop(self, run_id: str) -> dict[str, Any]:
        return (await self._request("POST", f"/runs/{run_id}/stop")).json()

    async def reset(self, session_id: str) -> None:
        await self._request("POST", f"/sessions/{session_id}/reset")

    async def always_allowed(self) -> list[str]:
        """The dangerous-command patterns allowed in every conversation ("Always allow")."""
        return list((await self._request("GET", "/approvals/always")).json()["patterns"])

    async def revoke_always(self, pattern: str) -> list[str]:
        path = f"/approvals/always/{quote(pattern, safe='')}"
        return list((await self._request("DELETE", path, missing_run=False)).json()["patterns"])

    async def get_memory(self, *, user_id: int) -> dict[str, str]:
        """The person's long-term memory (MEMORY.md, USER.md, limits)."""
        return (await self._request("GET", "/memory", params={"user": user_id})).json()

    async def put_memory(self, *, user_id: int, memory: str, user: str) -> dict[str, str]:
        """Save the person's MEMORY.md (`memory`) and USER.md (`user`) texts."""
        body = {"memory": memory, "user": user}
        return (await self._request("PUT", "/memory", params={"user": user_id}, json=body)).json()

    async def claim_shared_memory(self, *, user_id: int) -> dict[str, Any]:
        """Give the memory of an install from before accounts to this person (once)."""
        body = {"user": user_id}
        return (await self._request("POST", "/memory/claim-shared", json=body)).json()

    async def _has_nothing_after(self, run_id: str, last: int) -> bool:
        """True if the run has ended and its last event is at or before `last`."""
        try:
            state = await self.run_state(run_id)
        except BridgeUnavailable:
            return False
        finished = state.get("status") in FINISHED_STATES
        return finished and int(state.get("last_event_id") or 0) <= last

    async def events(
        self,
        run_id: str,
        *,
        last_event_id: int = 0,
        on_connection: Callable[[bool], None] | None = None,
    ) -> AsyncIterator[RunEvent]:
        """Yield the run's events after `last_event_id`, until its terminal event (none if
        the run already ended at or before `last_event_id`).

        A dropped connection is retried with backoff and `Last-Event-ID`, so no event is
        lost or repeated; `on_connection(False)` / `(True)` report the outage. Raises
        `RunNotFound` if the bridge forgot the run, `BridgeUnavailable` after
        `reconnect_for` seconds without a connection.
        """
        last = last_event_id
        delay = 0.25
        outage_started: float | None = None
        loop = asyncio.get_running_loop()
        while True:
            try:
                headers = {"Last-Event-ID": str(last)} if last else {}
                async with aconnect_sse(
                    self._http, "GET", f"/runs/{run_id}/events", headers=headers
                ) as source:
                    if source.response.status_code == 404:
                        raise RunNotFound(
                            "The agent service no longer knows this run (it was restarted).",
                            status_code=404,
                        )
                    if source.response.status_code >= 400:
                        await source.response.aread()
                        raise BridgeError(
                            _detail(source.response), status_code=source.response.status_code
                        )
                    if outage_started is not None and on_connection:
                        on_connection(True)
                    outage_started, delay = None, 0.25
                    async for sse in source.aiter_sse():
                        if not sse.event or not sse.id:
                            continue
                        seq = int(sse.id)
                        if seq <= last:
                            continue  # replayed twice across a reconnect: already delivered
                        last = seq
                        event = RunEvent(seq=seq, type=sse.event, data=json.loads(sse.data))
                        yield event
                        if event.is_terminal:
                            return
                # The server closed the stream without a terminal event. If the run is
                # over and the caller already has its last event, nothing more will come;
                # otherwise reconnect.
                if await self._has_nothing_after(run_id, last):
                    return
                raise httpx.RemoteProtocolError("event stream ended early")
            except (httpx.TransportError, SSEError) as exc:
                now = loop.time()
                if outage_started is None:
                    outage_started = now
                    if on_connection:
                        on_connection(False)
                    log.warning("event stream of run %s dropped (%s); reconnecting", run_id, exc)
                if now - outage_started > self._reconnect_for:
                    raise BridgeUnavailable(
                        f"Lost the connection to the agent service at {self.base_url} "
                        f"for more than {self._reconnect_for:.0f} s."
                    ) from exc
                await asyncio.sleep(delay)
                delay = min(delay * 2, 4.0)

"""The CLI's HTTP client: the app's API only (httpx for requests, httpx-sse for streams)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import connect_sse

log = logging.getLogger(__name__)

TERMINAL = frozenset({"run_completed", "run_failed", "run_stopped"})
RECONNECTS = 20


class ApiError(Exception):
    """The API refused or failed; `message` is its own words."""

    def __init__(self, status: int, message: str, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Event:
    id: int | None
    type: str
    data: dict[str, Any]


def _error(response: httpx.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        return ApiError(response.status_code, response.text[:300] or response.reason_phrase)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return ApiError(response.status_code, str(error.get("message")), str(error.get("code")))
    detail = body.get("detail") if isinstance(body, dict) else body
    return ApiError(response.status_code, str(detail))


class Client:
    def __init__(self, url: str, token: str | None = None, *, timeout: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ApiError(0, f"Cannot reach {self.http.base_url}: {exc}") from exc
        if response.status_code >= 400:
            raise _error(response)
        return response

    # ---- endpoints ----------------------------------------------------------------------

    def sessions(self, *, limit: int, archived: bool) -> list[dict[str, Any]]:
        params = {"limit": limit, "archived": str(archived).lower()}
        return self.call("GET", "/api/chat/sessions", params=params).json()["sessions"]

    def new_session(self) -> str:
        return self.call("POST", "/api/chat/sessions", json={}).json()["sessionId"]

    def start_run(self, session_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.call("POST", f"/api/chat/sessions/{session_id}/runs", json=body).json()

    def upload(self, path: Path) -> dict[str, Any]:
        """One file as the form's `files` part; httpx reads the open file in chunks as it
        sends, so a large file is never held in memory."""
        with path.open("rb") as file:
            response = self.call(
                "POST",
                "/api/chat/attachments",
                files=[("files", (path.name, file))],
                # The answer comes once the server has stored the whole file.
                timeout=httpx.Timeout(30.0, read=120.0),
            )
        return response.json()["attachments"][0]

    def state(self, run_id: str) -> dict[str, Any]:
        return self.call("GET", f"/api/chat/runs/{run_id}/state").json()

    def answer(self, run_id: str, clarify_id: str, answer: str) -> None:
        body = {"clarifyId": clarify_id, "answer": answer}
        self.call("POST", f"/api/chat/runs/{run_id}/resume", json=body)

    def stop(self, run_id: str) -> None:
        self.call("POST", f"/api/chat/runs/{run_id}/stop")

    def models(self) -> list[dict[str, Any]]:
        return self.call("GET", "/api/models").json()

    def skills(self) -> list[dict[str, Any]]:
        return self.call("GET", "/api/skills").json()

    def export(self, session_id: str, fmt: str, *, files: bool = False) -> bytes:
        path = f"/api/chat/sessions/{session_id}/export"
        params = {"format": fmt, **({"files": "true"} if files else {})}
        return self.call("GET", path, params=params).content

    # ---- the stream -----------------------------------------------------------------------

    def events(self, run_id: str, after: int = 0) -> Iterator[Event]:
        """The run's events to its terminal one; a dropped stream is resumed with
        `Last-Event-ID` (the server sends only what came after it)."""
        last, failures = after, 0
        while True:
            headers = {"Last-Event-ID": str(last)} if last else {}
            try:
                with connect_sse(
                    self.http,
                    "GET",
                    f"/api/chat/runs/{run_id}/stream",
                    headers=headers,
                    timeout=httpx.Timeout(30.0, read=60.0),
                ) as source:
                    if source.response.status_code >= 400:
                        source.response.read()
                        raise _error(source.response)
                    for sse in source.iter_sse():
                        if not sse.event or not sse.data:
                            continue
                        event = Event(
                            int(sse.id) if sse.id else None, sse.event, json.loads(sse.data)
                        )
                        if event.id is not None:
                            last, failures = event.id, 0
                        yield event
                        if event.type in TERMINAL:
                            return
            except (httpx.TransportError, httpx.RemoteProtocolError) as exc:
                failures += 1
                if failures > RECONNECTS:
                    raise ApiError(0, f"The stream was lost: {exc}") from exc
                log.debug("stream lost (%s); resuming after %d", exc, last)
                yield Event(None, "reconnecting", {"after": last})
                time.sleep(min(5.0, 0.5 * failures))
                continue
            # The server closed without a terminal event (it restarted): resume.
            failures += 1
            if failures > RECONNECTS:
                raise ApiError(0, "The stream ended before the run did.")
            time.sleep(min(5.0, 0.5 * failures))

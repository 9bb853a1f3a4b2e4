"""Reading the bridge's SSE stream in tests (raw lines, so keep-alive comments are seen)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

TERMINAL = {"run_completed", "run_failed", "run_stopped"}


@dataclass
class Received:
    seq: int
    type: str
    data: dict[str, Any]


@dataclass
class Stream:
    events: list[Received] = field(default_factory=list)
    keepalives: int = 0

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, type_: str) -> list[Received]:
        return [e for e in self.events if e.type == type_]

    def first(self, type_: str) -> Received:
        found = self.of(type_)
        assert found, f"no {type_} event in {self.types()}"
        return found[0]

    def text(self) -> str:
        return "".join(e.data["text"] for e in self.of("text_delta"))


OnEvent = Callable[[Received], Awaitable[bool | None]]


async def read_events(
    client: httpx.AsyncClient,
    run_id: str,
    *,
    headers: dict[str, str] | None = None,
    params: dict[str, Any] | None = None,
    on_event: OnEvent | None = None,
) -> Stream:
    """Read a run's events until the server closes the stream, or ``on_event`` returns True."""
    stream = Stream()
    seq, type_, data = 0, "", ""
    async with client.stream(
        "GET", f"/runs/{run_id}/events", headers=headers, params=params
    ) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith(":"):
                stream.keepalives += 1
            elif line.startswith("id: "):
                seq = int(line[4:])
            elif line.startswith("event: "):
                type_ = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif line == "" and type_:
                event = Received(seq=seq, type=type_, data=json.loads(data))
                stream.events.append(event)
                type_ = ""
                if on_event is not None and await on_event(event):
                    break
    return stream


async def start_run(client: httpx.AsyncClient, body: dict[str, Any]) -> str:
    response = await client.post("/runs", json=body)
    assert response.status_code == 201, response.text
    return response.json()["run_id"]


# The person a test run is for (the bridge keeps a hermes home per user id).
TEST_USER = 1


def run_body(model: dict[str, Any], message: str, session_id: str, **extra: Any) -> dict[str, Any]:
    """A `POST /runs` body for TEST_USER (`user=` in `extra` for another person)."""
    body = {"user": TEST_USER, "session_id": session_id, "message": message, "history": []}
    return {**body, "model": model, **extra}


async def run_answering(
    client: httpx.AsyncClient, body: dict[str, Any], answers: list[str] | None = None
) -> Stream:
    """Start a run and read it to its end, answering its approvals in order from `answers`
    (one it did not expect, or one never asked, fails the test); it must complete."""
    pending = list(answers or [])
    run_id = await start_run(client, body)

    async def answer(event: Received) -> None:
        if event.type == "approval_request":
            assert pending, f"an unexpected approval: {event.data}"
            reply = {"clarify_id": event.data["clarify_id"], "answer": pending.pop(0)}
            response = await client.post(f"/runs/{run_id}/clarify", json=reply)
            assert response.status_code == 200, response.text

    stream = await read_events(client, run_id, on_event=answer)
    assert not pending, f"approvals never asked: {pending}"
    assert stream.events[-1].type == "run_completed", stream.events[-1]
    return stream

"""Driving the app's HTTP API in tests: a session, a run, its SSE stream read with httpx-sse."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from agent_chat.db import api_tokens, users
from agent_chat.db.engine import make_engine, open_session
from tests.support.accounts import ADMIN_USER
from tests.support.stack import Stack, ensure_fake_model
from tests.support.users import user_named

TERMINAL = {"run_completed", "run_failed", "run_stopped"}


@dataclass
class Event:
    id: int | None
    type: str
    data: dict[str, Any]


@dataclass
class Read:
    events: list[Event] = field(default_factory=list)
    status: int = 0
    content_type: str = ""

    def ids(self) -> list[int]:
        return [e.id for e in self.events if e.id is not None]

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def text(self) -> str:
        return "".join(e.data.get("text", "") for e in self.events if e.type == "text_delta")

    def last(self) -> Event:
        return self.events[-1]

    def first(self, type_: str) -> Event:
        found = [e for e in self.events if e.type == type_]
        assert found, f"no {type_} in {self.types()}"
        return found[0]


def read_stream(
    client: httpx.Client,
    run_id: str,
    *,
    last_event_id: int | None = None,
    query: int | None = None,
    until: str | None = None,
    max_events: int | None = None,
) -> Read:
    """Read the run's stream until it ends (or `until` came, or `max_events` were read:
    then the connection is dropped, as a client that goes away)."""
    headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
    params = {"lastEventId": str(query)} if query is not None else {}
    read = Read()
    url = f"/api/chat/runs/{run_id}/stream"
    with connect_sse(client, "GET", url, headers=headers, params=params) as source:
        read.status = source.response.status_code
        read.content_type = source.response.headers.get("content-type", "")
        if read.status != 200:
            return read
        for sse in source.iter_sse():
            event = Event(int(sse.id) if sse.id else None, sse.event, json.loads(sse.data))
            read.events.append(event)
            if event.type == until or (max_events and len(read.events) >= max_events):
                break
    return read


def new_session(client: httpx.Client, **body: Any) -> str:
    response = client.post("/api/chat/sessions", json=body)
    assert response.status_code == 201, response.text
    return response.json()["sessionId"]


def start_run(client: httpx.Client, session_id: str, message: str, **body: Any) -> dict:
    response = client.post(
        f"/api/chat/sessions/{session_id}/runs", json={"message": message, **body}
    )
    assert response.status_code == 201, response.text
    return response.json()


def ask(client: httpx.Client, session_id: str, message: str) -> tuple[dict, Read]:
    """Start a run and read its stream to the end."""
    run = start_run(client, session_id, message)
    return run, read_stream(client, run["runId"])


def wait_state(client: httpx.Client, run_id: str, status: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        state = client.get(f"/api/chat/runs/{run_id}/state").json()
        if state["status"] == status:
            return state
        assert time.monotonic() < deadline, f"run {run_id} is {state}, not {status}"
        time.sleep(0.1)


def wait_idle(client: httpx.Client, session_id: str, timeout: float = 60) -> None:
    """Until the session has no run any more (the app finalised the last one)."""
    deadline = time.monotonic() + timeout
    while client.get(f"/api/chat/sessions/{session_id}").json()["session"]["hasActiveRun"]:
        assert time.monotonic() < deadline, f"session {session_id} still has a run"
        time.sleep(0.1)


# --- the shared stack, as tests/api and tests/cli use it ---------------------------------------


@pytest.fixture(scope="session")
def api_stack_and_token(shared_stack: Stack) -> tuple[Stack, str]:
    """The test process's one stack (tests/support/stack.py: every request goes through the
    login gate, here with a personal API token) with the fake model as its default model.
    Registered once for the whole suite by tests/conftest.py."""
    ensure_fake_model(None, shared_stack)
    engine = make_engine(shared_stack.db_url)
    try:
        with open_session(engine) as session:
            admin = user_named(session=session, username=ADMIN_USER)
            token = api_tokens.create_token(session=session, user_id=admin, name="tests").token
    finally:
        engine.dispose()
    return shared_stack, token


@pytest.fixture(scope="session")
def api_stack(api_stack_and_token: tuple[Stack, str]) -> Stack:
    return api_stack_and_token[0]


@pytest.fixture(scope="session")
def api_token(api_stack_and_token: tuple[Stack, str]) -> str:
    return api_stack_and_token[1]


def api_client(stack: Stack, token: str, *, timeout: float = 60) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=stack.url, headers=headers, timeout=timeout)


def member_with_token(stack: Stack, username: str, password: str) -> tuple[int, str]:
    """A member on the stack (made unless it exists: the stack keeps its accounts between
    files) and a new personal API token of theirs: (id, token)."""
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            row = users.find_user(session=session, username=username) or users.create_user(
                session=session, username=username, password=password
            )
            assert row.id is not None
            return row.id, api_tokens.create_token(
                session=session, user_id=row.id, name=username
            ).token
    finally:
        engine.dispose()

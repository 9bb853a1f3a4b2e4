"""A gate process for the cross-process rate-limit test: the real `LoginGate` in front of a
stand-in app, on the database `GATE_TEST_DB_URL` (each process its own engine and gate, so
nothing is shared but the database). `uvicorn --factory tests.auth.gate_server:app`."""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from agent_chat.auth import GateConfig, LoginGate
from agent_chat.db.engine import make_engine
from agent_chat.runs.storage import Storage


def app() -> LoginGate:
    from pwdlib import PasswordHash
    from pwdlib.hashers.argon2 import Argon2Hasher

    from agent_chat.db import passwords

    cheap = PasswordHash((Argon2Hasher(time_cost=1, memory_cost=1024, parallelism=1),))
    dummy = cheap.hash("dummy")
    passwords._hasher = lambda: cheap  # type: ignore[assignment]
    passwords._dummy_hash = lambda: dummy  # type: ignore[assignment]
    storage = Storage(make_engine(os.environ["GATE_TEST_DB_URL"]))
    inner = Starlette(routes=[Route("/ping", lambda request: PlainTextResponse("pong"))])
    return LoginGate(
        inner, storage=lambda: storage, config_loader=lambda: GateConfig(session_seconds=3600)
    )

"""The store's refusals in the API's error format (api/errors.py): a store function that
refuses a non-administrator answers 403, the last administrator 409, each with the store's
message (for routes that call db/user_admin.py or check `user_admin.active_admin`)."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from agent_chat.api import errors
from agent_chat.db.errors import Forbidden, LastAdministrator
from agent_chat.db.user_admin import ADMINS_ONLY


def _api() -> FastAPI:
    api = FastAPI()
    errors.install(api)

    @api.post("/api/forbidden")
    async def forbidden() -> None:
        raise Forbidden(ADMINS_ONLY)

    @api.post("/api/last-admin")
    async def last_admin() -> None:
        raise LastAdministrator("ada is the last active administrator")

    return api


async def test_store_refusals_become_403_and_409() -> None:
    transport = httpx.ASGITransport(app=_api())
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        refused = await client.post("/api/forbidden")
        assert refused.status_code == 403
        assert refused.json() == {
            "error": {"code": "forbidden", "message": ADMINS_ONLY},
            "detail": ADMINS_ONLY,
        }
        kept = await client.post("/api/last-admin")
        assert kept.status_code == 409
        assert kept.json()["error"] == {
            "code": "last_administrator",
            "message": "ada is the last active administrator",
        }


async def test_a_refused_start_is_429_at_the_limit_and_409_otherwise() -> None:
    """Whichever check refused (the API's, the manager's, or the turn's transaction when
    several workers race): the person's run limit is 429 with Retry-After, the rest 409."""
    from agent_chat.api.runs import started
    from agent_chat.db.running import RUN_ACTIVE, STILL_RUNNING, TOO_MANY_RUNS, too_many_runs
    from agent_chat.runs.manager import RunRefused

    api = FastAPI()
    errors.install(api)

    @api.post("/api/start/{code}")
    async def start(code: str) -> None:
        message = too_many_runs(2, 2) if code == TOO_MANY_RUNS else STILL_RUNNING

        async def refused():
            raise RunRefused(message, code)

        await started(refused(), new_version="user")

    transport = httpx.ASGITransport(app=api)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        limit = await client.post(f"/api/start/{TOO_MANY_RUNS}")
        assert limit.status_code == 429 and limit.headers["retry-after"] == "5"
        assert limit.json()["error"] == {"code": TOO_MANY_RUNS, "message": too_many_runs(2, 2)}
        busy = await client.post(f"/api/start/{RUN_ACTIVE}")
        assert busy.status_code == 409 and busy.json()["error"]["code"] == RUN_ACTIVE
        other = await client.post("/api/start/refused")
        assert other.status_code == 409 and other.json()["error"]["code"] == "refused"

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

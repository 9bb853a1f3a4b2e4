"""Bearer token, /health and the long-term memory endpoints (in-process via ASGITransport);
memory per person: tests/bridge/test_memory_per_user.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx

from agent_chat.bridge.app import create_app
from agent_chat.bridge.settings import BridgeSettings


def _client(hermes_home: Path, **overrides: object) -> httpx.AsyncClient:
    app = create_app(replace(BridgeSettings(hermes_home=hermes_home), **overrides))
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://127.0.0.1:18731",
        params={"user": USER},  # whose memory: every request here is this person's
    )


USER = 7


async def test_bearer_token_is_required_everywhere_but_health(hermes_home: Path) -> None:
    async with _client(hermes_home, token="s3cret") as client:
        health = await client.get("/health")
        anonymous = [
            await client.get("/memory"),
            await client.get("/runs/x"),
            await client.post("/runs", json={}),
            await client.post("/sessions/s/reset"),
        ]
        wrong = await client.get("/memory", headers={"Authorization": "Bearer nope"})
        right = await client.get("/memory", headers={"Authorization": "Bearer s3cret"})
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert [r.status_code for r in anonymous] == [401, 401, 401, 401]
    assert wrong.status_code == 401
    assert right.status_code == 200


async def test_health_reports_version_and_active_runs(hermes_home: Path) -> None:
    async with _client(hermes_home) as client:
        body = (await client.get("/health")).json()
    assert body["status"] == "ok" and body["version"] and body["active_runs"] == 0


async def test_memory_put_then_get_round_trips_in_hermes_format(hermes_home: Path) -> None:
    async with _client(hermes_home) as client:
        put = await client.put(
            "/memory", json={"memory": "likes tea\n§\n  works at night  ", "user": "Ada"}
        )
        got = (await client.get("/memory")).json()
        untouched = await client.put("/memory", json={"user": "Ada Lovelace"})
        await client.put("/memory", json={"memory": "", "user": ""})
    assert put.status_code == 200
    assert got["memory"] == "likes tea\n§\nworks at night" and got["user"] == "Ada"
    assert got["limits"] == {"memory": 2200, "user": 1375}
    assert (hermes_home / "users" / "7" / "memories" / "MEMORY.md").read_text("utf-8") == ""
    assert untouched.json()["memory"] == "likes tea\n§\nworks at night"


async def test_memory_over_hermes_limits_is_422_and_writes_nothing(hermes_home: Path) -> None:
    async with _client(hermes_home) as client:
        too_long = await client.put("/memory", json={"memory": "ok", "user": "x" * 1376})
        got = (await client.get("/memory")).json()
        at_limit = await client.put("/memory", json={"memory": "y" * 2200})
        await client.put("/memory", json={"memory": ""})
    assert too_long.status_code == 422 and "1375" in too_long.json()["detail"]
    assert got["memory"] == "" and got["user"] == ""
    assert at_limit.status_code == 200

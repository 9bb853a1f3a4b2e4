"""The bridge answers only this machine's names, and `serve` gives it a token only the app
knows unless the operator set one."""

from __future__ import annotations

import httpx

from agent_chat.bridge.app import create_app
from agent_chat.bridge.settings import BridgeSettings
from agent_chat.serve import bridge_token


async def _bridge_get(app, path: str, **headers) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:18731") as client:
        return await client.get(path, headers=headers)


async def test_the_bridge_refuses_a_rebinding_host(tmp_path) -> None:
    app = create_app(BridgeSettings(hermes_home=tmp_path / "hermes"))
    assert (await _bridge_get(app, "/health")).status_code == 200
    refused = await _bridge_get(app, "/memory", host="attacker.example:18731")
    assert refused.status_code == 400
    assert "memory" not in refused.text.lower()
    assert (await _bridge_get(app, "/health", host="attacker.example")).status_code == 400


async def test_a_configured_bridge_host_is_answered(tmp_path) -> None:
    app = create_app(
        BridgeSettings(hermes_home=tmp_path / "hermes", allowed_hosts=("bridge.internal",))
    )
    assert (await _bridge_get(app, "/health", host="bridge.internal:18731")).status_code == 200


async def test_the_bridge_refuses_a_request_without_its_token(tmp_path) -> None:
    app = create_app(BridgeSettings(hermes_home=tmp_path / "hermes", token="s3cret"))
    assert (await _bridge_get(app, "/memory")).status_code == 401
    assert (await _bridge_get(app, "/memory", authorization="Bearer wrong")).status_code == 401
    assert (await _bridge_get(app, "/health")).status_code == 200


def test_serve_makes_a_random_token_unless_one_is_set() -> None:
    environ: dict[str, str] = {}
    first = bridge_token(environ)
    assert len(first) >= 40 and environ["AGENT_CHAT_BRIDGE_TOKEN"] == first
    assert bridge_token({}) != first
    assert bridge_token({"AGENT_CHAT_BRIDGE_TOKEN": "mine"}) == "mine"

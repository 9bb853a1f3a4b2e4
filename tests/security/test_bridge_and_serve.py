"""The bridge answers only this machine's names, and `serve` gives it a token only the app
knows unless the operator set one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from agent_chat.bridge.__main__ import token_refusal
from agent_chat.bridge.app import create_app
from agent_chat.bridge.settings import BridgeSettings
from agent_chat.launch.serve import bridge_token, start_bridge
from agent_chat.launch.supervisor import bridge_refusal
from agent_chat.protocol.bridge_auth import proof_ok
from tests.fakes.model_server import free_port, serve_in_thread
from tests.support.http_stub import StubHandler, serving


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


# ---- a bridge without a token listens on loopback only ------------------------------------


def test_the_bridge_refuses_to_listen_beyond_loopback_without_a_token(tmp_path) -> None:
    assert token_refusal("127.0.0.1", None) is None and token_refusal("::1", None) is None
    assert token_refusal("0.0.0.0", "s3cret") is None
    assert "AGENT_CHAT_BRIDGE_TOKEN" in (token_refusal("0.0.0.0", None) or "")
    # The real entry point: it exits with the sentence before it listens.
    env = {k: v for k, v in os.environ.items() if k != "AGENT_CHAT_BRIDGE_TOKEN"}
    env["HERMES_HOME"] = str(tmp_path / "hermes")
    port = free_port()
    done = subprocess.run(
        [sys.executable, "-m", "agent_chat.bridge", "--host", "0.0.0.0", "--port", str(port)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "without a token: set AGENT_CHAT_BRIDGE_TOKEN" in done.stderr
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)


async def test_the_bridge_proves_its_token_without_receiving_it(tmp_path) -> None:
    app = create_app(BridgeSettings(hermes_home=tmp_path / "hermes", token="s3cret"))
    assert (await _bridge_get(app, "/auth")).status_code == 401
    assert (await _bridge_get(app, "/auth", authorization="Bearer s3cret")).status_code == 200
    nonce = "ab" * 16
    proof = (await _bridge_get(app, f"/token-proof?nonce={nonce}")).json()["proof"]
    assert proof_ok("s3cret", nonce, proof) and not proof_ok("other", nonce, proof)
    assert "s3cret" not in proof
    assert (await _bridge_get(app, "/token-proof?nonce=short")).status_code == 422
    tokenless = create_app(BridgeSettings(hermes_home=tmp_path / "hermes2"))
    assert (await _bridge_get(tokenless, f"/token-proof?nonce={nonce}")).status_code == 404


def _stranger(answer, authorizations: list[str]) -> type[StubHandler]:
    """A server on the bridge's port that is not our bridge: it answers every GET with
    `answer(path)` and keeps every Authorization header it is sent."""

    class Handler(StubHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.headers.get("Authorization"):
                authorizations.append(self.headers["Authorization"])
            status, body = answer(self.path)
            self.answer(status, "application/json", json.dumps(body))

    return Handler


def _all_ok(path: str) -> tuple[int, dict]:
    return 200, {"status": "ok", "ok": True}


def _mimic(path: str) -> tuple[int, dict]:
    # Looks like a bridge from outside: health, 401 without a token, a made-up proof.
    if path.startswith("/auth"):
        return 401, {"detail": "Missing or wrong bearer token."}
    if path.startswith("/token-proof"):
        return 200, {"proof": "0" * 64}
    return 200, {"status": "ok"}


@pytest.mark.parametrize(
    ("answer", "reason"),
    [(_all_ok, "answers without a token"), (_mimic, "does not hold this app's token")],
)
def test_the_launcher_never_gives_the_token_to_a_stranger_on_the_port(
    monkeypatch: pytest.MonkeyPatch, answer, reason: str
) -> None:
    monkeypatch.setenv("AGENT_CHAT_BRIDGE_TOKEN", "the-apps-own-token")
    authorizations: list[str] = []
    with serving(_stranger(answer, authorizations)) as url, pytest.raises(SystemExit, match=reason):
        start_bridge(url)
    assert authorizations == []  # never sent, in any header


def test_the_launcher_adopts_a_bridge_that_holds_its_token(tmp_path) -> None:
    app = create_app(BridgeSettings(hermes_home=tmp_path / "hermes", token="s3cret"))
    with serve_in_thread(app) as port:
        url = f"http://127.0.0.1:{port}"
        assert bridge_refusal(url, "s3cret") is None
        assert bridge_refusal(url, "another app's token") == "it does not hold this app's token"

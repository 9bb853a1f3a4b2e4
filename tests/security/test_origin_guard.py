"""The app's Host/Origin guard (agent_chat/auth/origins.py) and the shared allow-lists
(agent_chat/common/hosts.py): a foreign page or a rebinding host name gets nothing, the app's own
page and configured public origins get everything, pages carry the security headers."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from agent_chat.auth.origins import OriginGuard, allowed_from_environment
from agent_chat.common.hosts import Allowed, host_name, normalize_origin

reached: list[str] = []


async def page(request):
    reached.append(request.url.path)
    return HTMLResponse("<p>page</p>")


async def api(request):
    reached.append(request.url.path)
    return JSONResponse({"secret": "export"})


async def events(websocket: WebSocket):
    reached.append("ws")
    await websocket.accept()
    await websocket.send_text("hello")
    await websocket.close()


def guarded(allowed: Allowed | None = None) -> OriginGuard:
    inner = Starlette(
        routes=[
            Route("/", page),
            Route("/api/x", api, methods=["GET", "POST"]),
            WebSocketRoute("/_event/", events),
        ]
    )
    return OriginGuard(inner, allowed or Allowed())


@pytest.fixture(autouse=True)
def _clear() -> None:
    reached.clear()


async def _get(app, path="/", **headers):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:3000") as client:
        return await client.get(path, headers=headers)


async def test_the_apps_own_page_and_scripts_without_origin_pass() -> None:
    app = guarded()
    assert (await _get(app)).status_code == 200
    assert (await _get(app, "/api/x", origin="http://127.0.0.1:3000")).status_code == 200
    assert (
        await _get(app, host="localhost:3000", origin="http://localhost:3000")
    ).status_code == 200
    assert (await _get(app, host="[::1]:3000", origin="http://[::1]:3000")).status_code == 200
    assert reached == ["/", "/api/x", "/", "/"]


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "http://127.0.0.1:8080",
        "http://localhost:3000",
        "null",
        "https://127.0.0.1:3000",
    ],
)
async def test_a_foreign_origin_is_refused_before_anything_runs(origin: str) -> None:
    response = await _get(guarded(), "/api/x", origin=origin)
    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers
    assert reached == []


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "attacker.example:3000",
        "127.0.0.1.nip.io:3000",
        "",
        "[::1]evil.com",
        "localhost@evil.com",
        "127.0.0.1:3000/x",
    ],
)
async def test_a_rebinding_host_is_refused(host: str) -> None:
    response = await _get(guarded(), "/", host=host)
    assert response.status_code == 400
    assert reached == []


async def test_a_configured_public_origin_and_host_pass() -> None:
    allowed = Allowed.from_env("", "https://chat.example.com")
    app = guarded(allowed)
    # Behind a proxy that rewrites Host to the upstream, the page's Origin is the public one.
    ok = await _get(app, "/api/x", origin="https://chat.example.com")
    assert ok.status_code == 200
    direct = await _get(app, "/", host="chat.example.com", origin="https://chat.example.com")
    assert direct.status_code == 200
    assert (await _get(app, "/", host="other.example.com")).status_code == 400


async def test_pages_carry_the_security_headers() -> None:
    response = await _get(guarded())
    csp = response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
    assert "ws://127.0.0.1:3000" in csp
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"


async def _websocket(app, *, host: str, origin: str | None) -> list[dict]:
    """Open a websocket on the ASGI app as a server would; what the app sent back."""
    headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin else [])
    scope = {
        "type": "websocket",
        "path": "/_event/",
        "raw_path": b"/_event/",
        "query_string": b"EIO=4&transport=websocket",
        "headers": headers,
        "scheme": "ws",
        "server": ("127.0.0.1", 3000),
        "client": ("127.0.0.1", 5555),
        "subprotocols": [],
    }
    incoming = [{"type": "websocket.connect"}, {"type": "websocket.disconnect", "code": 1000}]
    sent: list[dict] = []

    async def receive() -> dict:
        return incoming.pop(0) if incoming else {"type": "websocket.disconnect", "code": 1000}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


async def test_a_foreign_origin_websocket_is_refused_at_the_handshake() -> None:
    app = guarded()
    refused = await _websocket(app, host="127.0.0.1:3000", origin="http://evil.example")
    assert refused == [{"type": "websocket.close", "code": 1008}]  # before accept: HTTP 403
    assert reached == []
    accepted = await _websocket(app, host="127.0.0.1:3000", origin="http://127.0.0.1:3000")
    assert accepted[0]["type"] == "websocket.accept"
    assert reached == ["ws"]


async def test_a_rebinding_host_websocket_is_refused() -> None:
    refused = await _websocket(guarded(), host="attacker.example:3000", origin=None)
    assert refused == [{"type": "websocket.close", "code": 1008}]
    assert reached == []


def test_allow_lists_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "AGENT_CHAT_ALLOWED_ORIGINS", "https://Chat.Example.com:443, http://lan-box:3000"
    )
    monkeypatch.setenv("AGENT_CHAT_ALLOWED_HOSTS", "*.corp.example")
    allowed = allowed_from_environment()
    assert allowed.origins == {"https://chat.example.com", "http://lan-box:3000"}
    assert allowed.host_ok("lan-box:3000") and allowed.host_ok("a.corp.example")
    assert not allowed.host_ok("corp.example.evil")
    monkeypatch.setenv("AGENT_CHAT_ALLOWED_ORIGINS", "chat.example.com")
    with pytest.raises(ValueError, match="is not an origin"):
        allowed_from_environment()


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("[::1]:3000", "::1"),
        ("[::1]", "::1"),
        ("LOCALHOST", "localhost"),
        ("127.0.0.1:3000", "127.0.0.1"),
        (" localhost:80 ", "localhost"),
        ("chat.example.com", "chat.example.com"),
        ("agent_chat:3000", "agent_chat"),  # a container's name
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
        # Not a host: refused (""), whatever follows or precedes a loopback name.
        ("[::1]evil.com", ""),
        ("[::1]:3000evil.com", ""),
        ("[::1", ""),
        ("[evil.com]", ""),
        ("::1", ""),  # IPv6 needs its brackets in a Host header
        ("user@localhost", ""),
        ("localhost@evil.com", ""),
        ("localhost:3000/path", ""),
        ("localhost:3000?x", ""),
        ("localhost#frag", ""),
        ("localhost:", ""),
        ("localhost:99999", ""),
        ("localhost:３０００", ""),  # full-width digits
        ("127.0.0.1:3000:1", ""),
        ("local host", ""),
        ("localhost.", ""),
        ("-evil.example", ""),
        ("ünicode.example", ""),
        ("", ""),
    ],
)
def test_host_parsing_table(header: str, name: str) -> None:
    assert host_name(header) == name
    everyone = Allowed.from_lists(hosts=["*"])
    assert everyone.host_ok(header) is bool(name)  # even "*" takes only a valid host


def test_origin_parsing() -> None:
    assert normalize_origin("http://127.0.0.1:80") == "http://127.0.0.1"
    assert normalize_origin("https://Chat.Example.com:443") == "https://chat.example.com"
    assert normalize_origin("http://[::1]:3000") == "http://[::1]:3000"
    for bad in (
        "http://x.example/path",
        "javascript:alert(1)",
        "http://[::1]evil.com",
        "http://[::1",
        "http://user@localhost:3000",
        "http://localhost:3000?x=1",
        "http://localhost:3000#x",
        "http://localhost:port",
    ):
        assert normalize_origin(bad) is None, bad

"""Cross-origin and DNS-rebinding attacks, tried against the running app and bridge (real
processes, real chromium): any web page the user visits, or a foreign name rebound to
127.0.0.1, must get nothing from the app, while the app's own page keeps working on 127.0.0.1 and localhost.

Each attack has its control: the same request from the app's own origin succeeds, so a test
fails if the guard (agent_chat/auth/origins.py), the empty CORS list (rxconfig.py), the
framing headers or the bridge's HostGuard went away. "Foreign pages" are served by a small
http.server on another port of 127.0.0.1 (another origin, the same machine).
"""

from __future__ import annotations

import http.server
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from playwright.sync_api import Page, expect
from websockets.exceptions import InvalidStatus

from tests.fakes.model_server import free_port
from tests.support.attacks import (
    ATTACK_SCRIPT,
    attack_args,
    event_url,
    handshake,
    raw_handshake,
    replay_new_session,
    session_uuids,
    wait_for_log,
)
from tests.support.browser import new_chat, send
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e


class ForeignSite:
    """Pages of another origin (http://127.0.0.1:<its own port>), served from a dict."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {"/blank.html": "<!doctype html><title>elsewhere</title>"}
        pages = self.pages

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                body = pages.get(self.path, "").encode()
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture(scope="module")
def foreign() -> Iterator[ForeignSite]:
    site = ForeignSite()
    try:
        yield site
    finally:
        site.close()


@pytest.fixture(scope="module")
def session_uuid(stack: Stack) -> str:
    """A real conversation, made the way the page makes one (own origin)."""
    ensure_fake_model(None, stack)  # the first message needs a model to be accepted
    path = replay_new_session(event_url(stack.url), origin=stack.url, cookie=stack.session_cookie)
    return path.rsplit("/", 1)[1]


def _app_log(stack: Stack) -> Path:
    return stack.tmp / "app.log"


# --- 1. a foreign-origin websocket is refused before any event runs -------------------------


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "http://127.0.0.1:1", "null", "http://localhost:{port}"],
    ids=["evil.example", "another-local-port", "null", "localhost-for-127.0.0.1"],
)
def test_a_foreign_origin_websocket_and_polling_are_refused(stack: Stack, origin: str) -> None:
    origin = origin.format(port=stack.app_port)
    assert handshake(event_url(stack.url), origin=origin, cookie=stack.session_cookie) == 403
    polling = httpx.get(
        f"{stack.url}/_event/?EIO=4&transport=polling", headers={"Origin": origin}, timeout=10
    )
    assert polling.status_code == 403, polling.text
    assert "access-control-allow-origin" not in polling.headers
    assert wait_for_log(_app_log(stack), f"refused a request from origin {origin!r} (/_event/)")
    # The control: the app's own origin (and a script sending none) gets the websocket.
    assert handshake(event_url(stack.url), origin=stack.url, cookie=stack.session_cookie) == 101
    assert handshake(event_url(stack.url), origin=None, cookie=stack.session_cookie) == 101


def test_replayed_frames_create_a_conversation_only_from_the_apps_own_origin(
    stack: Stack,
) -> None:
    ensure_fake_model(None, stack)  # a first message is accepted only with a model
    db_url = stack.db_url
    before = session_uuids(db_url)
    # The control: the frames a page sends create a conversation from the app's own origin.
    path = replay_new_session(event_url(stack.url), origin=stack.url, cookie=stack.session_cookie)
    created = path.rsplit("/", 1)[1]
    assert session_uuids(db_url) == before | {created}
    # A foreign origin cannot send one frame: the handshake itself is refused.
    with pytest.raises(InvalidStatus) as refused:
        replay_new_session(
            event_url(stack.url), origin="http://evil.example", cookie=stack.session_cookie
        )
    assert refused.value.response.status_code == 403
    time.sleep(1)
    assert session_uuids(db_url) == before | {created}


def test_a_foreign_page_cannot_drive_the_websocket(
    page: Page, stack: Stack, foreign: ForeignSite
) -> None:
    ensure_fake_model(None, stack)  # a first message is accepted only with a model
    db_url = stack.db_url
    before = session_uuids(db_url)
    page.goto(f"{foreign.origin}/blank.html")
    assert page.evaluate(ATTACK_SCRIPT, attack_args(stack.url)) == "refused"
    assert wait_for_log(_app_log(stack), f"refused a request from origin {foreign.origin!r}")
    assert session_uuids(db_url) == before
    # The control: the same script on the app's own page creates a conversation.
    page.goto(f"{stack.url}/settings/models")
    expect(page.get_by_role("heading", name="Models")).to_be_visible()
    outcome = page.evaluate(ATTACK_SCRIPT, attack_args(stack.url))
    assert re.fullmatch(r"created /chat/[0-9a-f-]{36}", outcome), outcome
    assert session_uuids(db_url) == before | {outcome.rsplit("/", 1)[1]}


# --- 2. a foreign page cannot read an export -----------------------------------------------

FETCH_PAGE = """<!doctype html><title>reader</title><pre id="outcome">pending</pre><script>
fetch("{url}", {{credentials: "include"}})
  .then(async response => {{
    document.getElementById("outcome").textContent =
      "status " + response.status + ": " + await response.text();
  }})
  .catch(error => {{
    document.getElementById("outcome").textContent = "error " + error.name + ": " + error.message;
  }});
</script>"""


def test_a_foreign_page_cannot_read_an_export(
    page: Page, stack: Stack, foreign: ForeignSite, session_uuid: str
) -> None:
    export = f"{stack.url}/api/chat/sessions/{session_uuid}/export?format=json"
    foreign.pages["/reader.html"] = FETCH_PAGE.format(url=export)
    page.goto(f"{foreign.origin}/reader.html")
    outcome = page.locator("#outcome")
    expect(outcome).not_to_have_text("pending")
    assert outcome.text_content() == "error TypeError: Failed to fetch"
    assert "agent-chat-export" not in page.content()  # the export's "format" field
    # Refused by the app itself, not only unreadable for the browser.
    assert wait_for_log(
        _app_log(stack),
        f"refused a request from origin {foreign.origin!r} (/api/chat/sessions/{session_uuid}/export)",
    )
    # The control: the app's own page reads it.
    page.goto(f"{stack.url}/settings/models")
    status, body = page.evaluate(
        """async url => {
            const response = await fetch(url, {credentials: "include"});
            return [response.status, await response.text()];
        }""",
        export,
    )
    assert status == 200 and '"agent-chat-export"' in body and f'"uuid": "{session_uuid}"' in body


# --- 3. a rebinding Host is refused by the app and by the bridge ----------------------------


def test_a_rebinding_host_is_refused_by_the_app_and_the_bridge(
    stack: Stack, session_uuid: str
) -> None:
    paths = ["/", "/settings/models/", f"/api/chat/sessions/{session_uuid}/export?format=json"]
    paths += ["/ping", "/_event/?EIO=4&transport=polling"]
    rebound = f"attacker.example:{stack.app_port}"
    for path in paths:
        headers = {"Host": rebound, **stack.auth_headers}  # even signed in
        response = httpx.get(f"{stack.url}{path}", headers=headers, timeout=10)
        assert response.status_code == 400, (path, response.status_code, response.text[:200])
        assert session_uuid not in response.text
    # The websocket: refused at its handshake (an ASGI app closing before accepting gets
    # 403, the server's answer to a refused handshake; there is no way to say 400 there).
    assert raw_handshake(stack.app_port, rebound, cookie=stack.session_cookie) == 403
    assert (
        raw_handshake(stack.app_port, f"127.0.0.1:{stack.app_port}", cookie=stack.session_cookie)
        == 101
    )
    # The control: this machine's names are served.
    for host in (f"127.0.0.1:{stack.app_port}", f"localhost:{stack.app_port}"):
        own = httpx.get(f"{stack.url}/", headers={"Host": host, **stack.auth_headers}, timeout=10)
        assert own.status_code == 200

    bridge = f"http://127.0.0.1:{stack.bridge_port}"
    for path, host in [("/memory", "attacker.example"), ("/health", "attacker.example:80")]:
        response = httpx.get(f"{bridge}{path}", headers={"Host": host}, timeout=10)
        assert response.status_code == 400, (path, response.status_code, response.text)
        assert response.json() == {"detail": f"Host {host!r} is not served here."}
    # The control (the e2e bridge runs without a token).
    assert httpx.get(f"{bridge}/memory", params={"user": 1}, timeout=10).status_code == 200
    own = httpx.get(f"{bridge}/health", headers={"Host": "localhost"}, timeout=10)
    assert own.status_code == 200


# --- 4. the app's own page works on 127.0.0.1 and on localhost ------------------------------


def test_the_apps_own_page_works_on_localhost(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    at_localhost = SimpleNamespace(url=f"http://localhost:{stack.app_port}")
    stack.sign_in(page.context, at_localhost.url)  # cookies are per host name
    new_chat(page, at_localhost)
    assert page.url == f"http://localhost:{stack.app_port}/chat"
    send(page, "Hello from localhost")
    answer = page.get_by_test_id("message-assistant")
    expect(answer).to_contain_text("Echo: Hello from localhost")
    expect(answer).to_have_attribute("data-status", "SUCCESS")
    assert sockets and all(s.startswith(f"ws://localhost:{stack.app_port}/_event") for s in sockets)


# --- 5. the page cannot be framed -----------------------------------------------------------


def test_the_page_cannot_be_framed(
    page: Page, stack: Stack, foreign: ForeignSite, session_uuid: str
) -> None:
    for path in ("/", f"/chat/{session_uuid}", "/settings/models/"):
        response = httpx.get(f"{stack.url}{path}", headers=stack.auth_headers, timeout=10)
        assert response.status_code == 200, path
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"], path
        assert response.headers["x-frame-options"] == "DENY", path

    foreign.pages["/framer.html"] = (
        "<!doctype html><title>framer</title>"
        f'<iframe id="app" src="{stack.url}/" width="900" height="600"></iframe>'
        '<iframe id="own" src="/blank.html"></iframe>'
    )
    page.goto(f"{foreign.origin}/framer.html")
    # The control: the foreign page's own frame loads.
    expect(page.frame_locator("#own").locator("title")).to_have_count(1)
    page.wait_for_timeout(3000)  # the app's page would have rendered its composer by now
    app_frame = page.locator("#app").element_handle().content_frame()
    assert app_frame is not None
    assert app_frame.url.startswith("chrome-error://"), app_frame.url
    assert page.frame_locator("#app").get_by_test_id("composer-input").count() == 0
    assert page.frame_locator("#app").get_by_test_id("new-session").count() == 0


def test_no_credentials_header_and_hashed_assets_are_kept_a_year(stack: Stack) -> None:
    """What browser-security scanners look at: no response says
    `Access-Control-Allow-Credentials` (Reflex's own CORS layer sends it to any request
    with an Origin, allowed or not); Vite's hashed files are immutable, the rest is not."""
    own = stack.url
    with httpx.Client(base_url=stack.url, timeout=20) as client:
        for path, origin in (("/ping", own), ("/ping", "http://elsewhere.example"), ("/", own)):
            reply = client.get(path, headers={"Origin": origin, **stack.auth_headers})
            assert "access-control-allow-credentials" not in reply.headers, (path, origin)
        page = client.get("/chat", headers=stack.auth_headers).text
        assets = re.findall(r'"(/assets/[^"]+-[A-Za-z0-9_-]{8}\.(?:js|css))"', page)
        assert assets, "no hashed asset named in the page"
        for path in assets[:3]:
            reply = client.get(path)
            assert reply.status_code == 200, path
            assert reply.headers["cache-control"] == "public, max-age=31536000, immutable"
        plain = client.get("/styles.css")
        assert plain.status_code == 200 and "immutable" not in plain.headers.get(
            "cache-control", ""
        )

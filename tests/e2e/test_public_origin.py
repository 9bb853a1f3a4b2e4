"""A configured public origin works through a reverse proxy that rewrites `Host` to the
upstream, like nginx's default (`proxy_set_header Host $proxy_host`): the app then sees
`Host: 127.0.0.1:<app port>` with the page's `Origin: http://127.0.0.1:<proxy port>`, not its
own origin, so only `AGENT_CHAT_ALLOWED_ORIGINS` lets the page's websocket in (README,
"Security model").

This module starts a stack of its own (fake model, bridge, app) with that origin configured
and `REFLEX_API_URL` on the proxy: the built page keeps the backend's port in its websocket URL
on plain http (on https it drops the port, so there the proxy's port 443 is used anyway), and
without it the page would open its websocket straight to the app's port.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.fakes.model_server import free_port
from tests.support.attacks import ATTACK_SCRIPT, attack_args, event_url, handshake
from tests.support.browser import fresh_page, new_chat, send
from tests.support.stack import Stack, ensure_fake_model, running_stack

pytestmark = pytest.mark.e2e


class HostRewritingProxy:
    """A reverse proxy on 127.0.0.1:<port> in a thread of its own, forwarding to the app like
    nginx's defaults: `Host` becomes the upstream's, a plain request goes on a connection of
    its own (`Connection: close`, so every request's head is rewritten), an `Upgrade` request
    becomes a byte pipe after its head, and a redirect to the upstream's address points back
    at the proxy (`proxy_redirect default`). `seen` records (request line, Host, upgrade)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.upstream_port = 0  # the app's, set once it has one
        self.seen: list[tuple[str, str, bool]] = []
        self.loop = asyncio.new_event_loop()
        self.tasks: set[asyncio.Task] = set()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(self._listen(), self.loop).result(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def upstream(self) -> str:
        return f"127.0.0.1:{self.upstream_port}"

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self.tasks.add(task)
        upstream_w = sending = None
        try:
            head = await client_r.readuntil(b"\r\n\r\n")
            request_line, *lines = head[:-4].decode("latin-1").split("\r\n")
            headers = [tuple(part.strip() for part in line.split(":", 1)) for line in lines]
            names = {name.lower(): value for name, value in headers}
            upgrade = "upgrade" in names
            self.seen.append((request_line, names.get("host", ""), upgrade))
            dropped = {"host"} | (set() if upgrade else {"connection", "keep-alive"})
            kept = [(n, v) for n, v in headers if n.lower() not in dropped]
            kept = [("Host", self.upstream), *kept]
            if not upgrade:
                kept.append(("Connection", "close"))
            upstream_r, upstream_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
            upstream_w.write(
                (request_line + "\r\n" + "".join(f"{n}: {v}\r\n" for n, v in kept) + "\r\n").encode(
                    "latin-1"
                )
            )
            if upgrade:
                sending = asyncio.ensure_future(self._pipe(client_r, upstream_w))
            elif length := int(names.get("content-length", "0") or 0):
                upstream_w.write(await client_r.readexactly(length))
            await upstream_w.drain()
            response_head = await upstream_r.readuntil(b"\r\n\r\n")
            public = f"http://127.0.0.1:{self.port}/"
            response_head = re.sub(
                rb"(?im)^(location:\s*)http://" + re.escape(self.upstream.encode()) + rb"/",
                lambda m: m.group(1) + public.encode(),
                response_head,
            )
            client_w.write(response_head)
            await self._pipe(upstream_r, client_w)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            if sending is not None:
                sending.cancel()
            for writer in (client_w, upstream_w):
                if writer is not None:
                    writer.close()
            self.tasks.discard(task)

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            if writer.can_write_eof():
                with contextlib.suppress(OSError):
                    writer.write_eof()

    def close(self) -> None:
        async def stop() -> None:
            self.server.close()
            for task in list(self.tasks):
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)
            await self.server.wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture(scope="module")
def public(
    tmp_path_factory: pytest.TempPathFactory, shared_stack: Stack
) -> Iterator[SimpleNamespace]:
    """An app of this module's own (on the shared stack's bridge) with
    `AGENT_CHAT_ALLOWED_ORIGINS` = the proxy's origin, and the proxy in front of it."""
    proxy = HostRewritingProxy()
    settings = {
        "AGENT_CHAT_ALLOWED_ORIGINS": proxy.url,
        "AGENT_CHAT_ALLOWED_HOSTS": "",
        "REFLEX_API_URL": proxy.url,
    }
    try:
        tmp = tmp_path_factory.mktemp("e2e-public-origin")
        with running_stack(tmp, token_delay=0.01, env=settings, bridge_of=shared_stack) as stack:
            proxy.upstream_port = stack.app_port
            yield SimpleNamespace(stack=stack, proxy=proxy)
    finally:
        proxy.close()


@pytest.fixture
def page(browser: Browser, public: SimpleNamespace, request: pytest.FixtureRequest):
    """A fresh browser context for each test (this module's stack, not the session's)."""
    with fresh_page(browser, request, public.stack) as page:
        yield page


def test_the_page_works_through_the_proxy(page: Page, public: SimpleNamespace) -> None:
    proxy, stack = public.proxy, public.stack
    requests: list[str] = []
    sockets: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("websocket", lambda ws: sockets.append(ws.url))
    ensure_fake_model(page, stack)
    new_chat(page, SimpleNamespace(url=proxy.url))
    send(page, "Hello through the proxy")
    answer = page.get_by_test_id("message-assistant")
    # The first answer of a fresh stack waits for hermes to build its first agent.
    expect(answer).to_contain_text("Echo: Hello through the proxy", timeout=60_000)
    expect(answer).to_have_attribute("data-status", "SUCCESS")
    assert page.url.startswith(f"{proxy.url}/chat/")

    # Everything went through the proxy, and the app saw its own address as Host.
    direct = [url for url in requests + sockets if f":{stack.app_port}" in url]
    assert not direct, direct
    assert sockets and all(s.startswith(f"ws://127.0.0.1:{proxy.port}/_event/") for s in sockets)
    upgrades = [line for line, host, upgrade in proxy.seen if upgrade]
    assert any(line.startswith("GET /_event/") for line in upgrades), proxy.seen
    assert {host for _, host, _ in proxy.seen} == {f"127.0.0.1:{proxy.port}"}


def test_only_the_configured_origin_is_let_in(page: Page, public: SimpleNamespace) -> None:
    proxy, stack = public.proxy, public.stack
    elsewhere = f"http://127.0.0.1:{free_port()}"
    # Straight to the app (Host 127.0.0.1:<app port>): the proxy's origin is not the app's
    # own, it is let in because it is configured; another origin of this machine is not.
    assert handshake(event_url(stack.url), origin=proxy.url, cookie=stack.session_cookie) == 101
    assert handshake(event_url(stack.url), origin=elsewhere, cookie=stack.session_cookie) == 403
    # Through the proxy (Host rewritten): the same.
    assert handshake(event_url(proxy.url), origin=proxy.url, cookie=stack.session_cookie) == 101
    assert handshake(event_url(proxy.url), origin=elsewhere, cookie=stack.session_cookie) == 403
    assert (
        handshake(event_url(proxy.url), origin="http://evil.example", cookie=stack.session_cookie)
        == 403
    )
    # And the page behind the proxy can drive the websocket with the frames a page sends.
    page.goto(f"{proxy.url}/settings/models")
    expect(page.get_by_role("heading", name="Models")).to_be_visible()
    outcome = page.evaluate(ATTACK_SCRIPT, attack_args(proxy.url))
    assert re.fullmatch(r"created /chat/[0-9a-f-]{36}", outcome), outcome

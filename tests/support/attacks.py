"""What an attacker does to the running app, for tests/e2e/test_attacks.py and
test_public_origin.py: a websocket handshake with a chosen `Origin` or `Host`, the frames a page
sends to create a conversation (replayed by a program or by a foreign web page's script), and
a count of the conversations in the stack's database to prove whether anything ran."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

# The page's socket.io namespace and the event handlers a page calls by name (Reflex's full
# state names: reflex___state____state.<module path>___<class>.<handler>).
NAMESPACE = "/_event"
ROUTER_DATA = {"pathname": "/settings/models/", "asPath": "/settings/models/"}
REDIRECT_TO_CHAT = re.compile(r'"_redirect".*?"path":"(/chat/[0-9a-f-]{36})"')


# The state-changing frame: the first message of a new conversation (it creates the row).
FIRST_MESSAGE = {"form": {"message": "A conversation made by replayed frames"}}


def event_names() -> tuple[str, str]:
    """The full names of the first event a page sends and of the composer's send (the first
    message of a new conversation stores it: needs a model)."""
    import reflex as rx

    from agent_chat.state.live import LiveState

    return (
        f"{rx.State.get_full_name()}.hydrate_and_load",
        f"{LiveState.get_full_name()}.send",
    )


def event_url(base_url: str) -> str:
    """The websocket URL a page opens, with a new tab token."""
    ws = base_url.replace("http://", "ws://", 1)
    return f"{ws}/_event/?token={uuid.uuid4()}&EIO=4&transport=websocket"


def _cookie(cookie: str | None) -> dict[str, str] | None:
    return {"Cookie": f"agent_chat_session={cookie}"} if cookie else None


def handshake(url: str, origin: str | None, cookie: str | None = None) -> int:
    """The HTTP status of a websocket handshake (101 when accepted); `cookie` is a session
    (a browser sends it to a same-site socket whatever page opens it)."""
    try:
        with connect(
            url, origin=origin, open_timeout=10, additional_headers=_cookie(cookie)
        ) as client:
            return client.response.status_code
    except InvalidStatus as refused:
        return refused.response.status_code


def raw_handshake(
    port: int, host: str, origin: str | None = None, cookie: str | None = None
) -> int:
    """A handshake written by hand, to send a `Host` of our choice (DNS rebinding)."""
    key = base64.b64encode(os.urandom(16)).decode()
    head = (
        f"GET /_event/?token={uuid.uuid4()}&EIO=4&transport=websocket HTTP/1.1\r\n"
        f"Host: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        + (f"Origin: {origin}\r\n" if origin else "")
        + (f"Cookie: agent_chat_session={cookie}\r\n" if cookie else "")
        + "\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(head.encode())
        status_line = conn.recv(4096).split(b"\r\n", 1)[0].decode()
    return int(status_line.split()[1])


@contextlib.contextmanager
def _booted(
    url: str, router: dict, *, origin: str | None = None, cookie: str | None = None
) -> Iterator[ClientConnection]:
    """The event websocket opened as a page opens it: the Engine.IO open packet, then the
    namespace connect carrying the hydrate event for `router`'s page."""
    boot = {"event": {"name": event_names()[0], "payload": {}, "router_data": router}}
    with connect(url, origin=origin, open_timeout=10, additional_headers=_cookie(cookie)) as client:
        assert client.recv(timeout=10).startswith("0{"), "no Engine.IO open packet"
        client.send(f"40{NAMESPACE},{json.dumps(boot)}")
        yield client


def replay_new_session(
    url: str, origin: str | None, timeout: float = 20, cookie: str | None = None
) -> str:
    """Open the event websocket as a page would and send a first message by name: the
    Engine.IO open packet, the namespace connect carrying the hydrate event, then the event.
    The new conversation's path, from the redirect the app answers with."""
    send = event_names()[1]
    deadline = time.monotonic() + timeout
    with _booted(url, ROUTER_DATA, origin=origin, cookie=cookie) as client:
        event = ["event", {"name": send, "payload": FIRST_MESSAGE, "router_data": ROUTER_DATA}]
        client.send(f"42{NAMESPACE},{json.dumps(event)}")
        while (left := deadline - time.monotonic()) > 0:
            frame = client.recv(timeout=left)
            if frame == "2":  # Engine.IO ping
                client.send("3")
            elif found := REDIRECT_TO_CHAT.search(frame):
                return found.group(1)
    raise AssertionError(f"no redirect to a new conversation within {timeout} s")


# The same frames from a web page's script: what any page the user visits could run.
# Resolves to "created /chat/<uuid>", "refused" (the handshake failed) or "no answer".
ATTACK_SCRIPT = r"""([url, hydrate, send, payload, routerData]) => new Promise(resolve => {
    const socket = new WebSocket(url);
    const done = outcome => { try { socket.close(); } catch (e) {} resolve(outcome); };
    socket.onmessage = message => {
        const frame = String(message.data);
        if (frame.startsWith("0{")) {
            const boot = {event: {name: hydrate, payload: {}, router_data: routerData}};
            socket.send("40/_event," + JSON.stringify(boot));
        } else if (frame.startsWith("40/_event,")) {
            socket.send("42/_event," + JSON.stringify(
                ["event", {name: send, payload: payload, router_data: routerData}]));
        } else if (frame === "2") {
            socket.send("3");
        } else {
            const found = /"_redirect".*?"path":"(\/chat\/[0-9a-f-]{36})"/.exec(frame);
            if (found) done("created " + found[1]);
        }
    };
    socket.onerror = () => done("refused");
    socket.onclose = () => done("refused");
    setTimeout(() => done("no answer"), 15000);
})"""


def attack_args(base_url: str) -> list:
    return [event_url(base_url), *event_names(), FIRST_MESSAGE, ROUTER_DATA]


def session_uuids(db_url: str) -> set[str]:
    """The conversations in the stack's database (SQLite or PostgreSQL)."""
    engine = sa.create_engine(db_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as connection:
            rows = connection.execute(sa.text("SELECT session_uuid FROM chat_session"))
            return {row[0] for row in rows}
    finally:
        engine.dispose()


def wait_for_log(log: Path, text: str, timeout: float = 5) -> bool:
    """Whether `text` shows up in a process's log within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if log.exists() and text in log.read_text(encoding="utf-8", errors="replace"):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def drive_events(
    url: str,
    cookie: str,
    pathname: str,
    events: list[tuple[str, dict]],
    quiet: float = 3.0,
    timeout: float = 30,
) -> str:
    """Open the event websocket with `cookie` as a page of `pathname` would, send `events`
    (full handler name, payload) one after the other, and return every frame the app sent
    until it has been quiet for `quiet` seconds: what a person driving the page's socket by
    hand (no page, no on_load) gets back."""
    router = {"pathname": pathname, "asPath": pathname, "query": {}}
    frames: list[str] = []
    deadline = time.monotonic() + timeout
    with _booted(url, router, cookie=cookie) as client:
        for name, payload in events:
            event = ["event", {"name": name, "payload": payload, "router_data": router}]
            client.send(f"42{NAMESPACE},{json.dumps(event)}")
        while (left := deadline - time.monotonic()) > 0:
            try:
                frame = client.recv(timeout=min(quiet, left))
            except TimeoutError:
                break
            if frame == "2":  # Engine.IO ping
                client.send("3")
            else:
                frames.append(frame)
    return "\n".join(frames)

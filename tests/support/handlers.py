"""Calling a page's event handler by name over the app's websocket, as a page would (or as a
person with the browser's developer tools would): the Engine.IO open, the namespace connect
carrying the hydrate event, then the event. For tests that a handler refuses on the server
whatever the page shows (tests/e2e/test_26_user_admin.py)."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from websockets.sync.client import connect

from agent_chat.auth import COOKIE_NAME

NAMESPACE = "/_event"


def call_handler(
    base_url: str,
    cookie: str,
    handler: str,
    payload: dict[str, Any],
    *,
    path: str = "/settings/models/",
    until: str,
    timeout: float = 20,
) -> str:
    """Send `handler` (a full event name, e.g. `f"{ModelsState.get_full_name()}.delete"`)
    with `payload` from a tab on `path`, signed in with the session `cookie`; the frames the
    app answered, up to the first that contains `until` (AssertionError if none does)."""
    import reflex as rx

    ws = base_url.replace("http://", "ws://", 1)
    url = f"{ws}/_event/?token={uuid.uuid4()}&EIO=4&transport=websocket"
    router = {"pathname": path, "asPath": path}
    boot = {
        "event": {
            "name": f"{rx.State.get_full_name()}.hydrate_and_load",
            "payload": {},
            "router_data": router,
        }
    }
    event = ["event", {"name": handler, "payload": payload, "router_data": router}]
    frames: list[str] = []
    deadline = time.monotonic() + timeout
    with connect(
        url,
        origin=base_url,
        open_timeout=10,
        additional_headers={"Cookie": f"{COOKIE_NAME}={cookie}"},
    ) as client:
        assert client.recv(timeout=10).startswith("0{"), "no Engine.IO open packet"
        client.send(f"40{NAMESPACE},{json.dumps(boot)}")
        client.send(f"42{NAMESPACE},{json.dumps(event)}")
        while (left := deadline - time.monotonic()) > 0:
            try:
                frame = str(client.recv(timeout=left))
            except TimeoutError:
                break
            if frame == "2":  # Engine.IO ping
                client.send("3")
                continue
            frames.append(frame)
            if until in frame:
                return "\n".join(frames)
    raise AssertionError(f"no frame with {until!r} within {timeout} s: {frames}")

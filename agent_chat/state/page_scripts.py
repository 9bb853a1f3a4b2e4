"""Scripts the live state sends to the page: emptying the composer after a send, and the
browser notifications and tab title count (assets/notify.js)."""

from __future__ import annotations

import json

import reflex as rx

from agent_chat import routes
from agent_chat.display.notices import Notice
from agent_chat.state.chat import COMPOSER_ID


def clear_composer(sent: str) -> rx.event.EventSpec:
    """Empty the composer if it still holds what was sent: text typed since (the person
    goes on typing while the server answers) is never wiped."""
    return rx.call_script(
        f"(el => {{ if (el && el.value === {json.dumps(sent)}) {{ el.value = ''; "
        "el.dispatchEvent(new Event('input', { bubbles: true })); } })"
        f"(document.getElementById({json.dumps(COMPOSER_ID)}))"
    )


def notify_script(found: list[Notice], count: int) -> rx.event.EventSpec:
    calls = [f"n.count({count});"] + [
        f"n.notify({json.dumps(x.title)}, {json.dumps(x.body)}, "
        f"{json.dumps(routes.chat_url(x.session_uuid))});"
        for x in found
    ]
    return rx.call_script(
        "(() => { const n = window.agentChatNotify; if (n) { " + " ".join(calls) + " } })()"
    )

"""Scripts the live state sends to the page: emptying the composer after a send (its text
and the chips of the files it carried, assets/attach.jsx), and the browser notifications
and tab title count (assets/notify.js)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import reflex as rx

from agent_chat import routes
from agent_chat.display.notices import Notice
from agent_chat.state.chat import COMPOSER_ID

BAD_ATTACHMENTS = "The attached files could not be read: remove them and attach them again."
MAX_FIELD = 200  # characters of the hidden field: 10 ids of at most 11 digits, and commas


def attached_ids(form: dict) -> list[int] | None:
    """The uploaded files' ids the composer's hidden field `attachments` carries ("12,13"),
    or None when it is not a list of ids (a raw client's form): the service checks whose
    they are."""
    raw = str(form.get("attachments") or "").strip()
    if not raw:
        return []
    parts = raw.split(",") if len(raw) <= MAX_FIELD else []
    if not parts or not all(_is_id(p.strip()) for p in parts):
        return None
    return [int(p) for p in parts]


def kept_ids(form: dict) -> list[int] | None:
    """The files an edit keeps (the edit form's ticked `keep-<id>` boxes, in order), or None
    when the form lists none (the message has no files): the edit keeps what it has."""
    if not form.get("files_listed"):
        return None
    return [int(v) for k, v in form.items() if k.startswith("keep-") and _is_id(str(v))]


def edited_ids(form: dict, added: list[int]) -> list[int] | None:
    """An edit's files: the ticked old ones, then those added in the edit form (each once);
    None when the form lists no old files and adds none: the edit keeps what it has."""
    kept = kept_ids(form)
    if kept is None and not added:
        return None
    return list(dict.fromkeys([*(kept or []), *added]))


def _is_id(part: str) -> bool:
    return part.isascii() and part.isdigit() and len(part) <= 11


def clear_composer(sent: str, files: Sequence[int] = ()) -> rx.event.EventSpec:
    """Empty the composer if it still holds what was sent: text typed since (the person
    goes on typing while the server answers) is never wiped, nor a file attached since."""
    return rx.call_script(
        f"(el => {{ if (el && el.value === {json.dumps(sent)}) {{ el.value = ''; "
        "el.dispatchEvent(new Event('input', { bubbles: true })); } })"
        f"(document.getElementById({json.dumps(COMPOSER_ID)}));"
        f"window.agentChatAttach && window.agentChatAttach.sent({json.dumps(list(files))})"
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

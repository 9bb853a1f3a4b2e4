"""Files in the composer (assets/attach.jsx): the paperclip button and the tray of chips.

The browser uploads each file to the HTTP API as soon as it is chosen, dropped or pasted
and shows its progress; the form sends only the uploaded ids (hidden field `attachments`),
which `LiveState.send` hands to the same use case as the API's `attachmentIds`.
"""

from __future__ import annotations

import reflex as rx

from agent_chat.services.attachments import MAX_PER_MESSAGE
from agent_chat.state.chat import ChatState


class AttachButton(rx.Component):
    library = "$/public/attach.jsx"
    tag = "AttachButton"

    label: rx.Var[str]


class AttachTray(rx.Component):
    library = "$/public/attach.jsx"
    tag = "AttachTray"

    max_bytes: rx.Var[int]
    max_files: rx.Var[int]


def attach_button() -> rx.Component:
    return AttachButton.create(label="Attach files")


def attach_tray() -> rx.Component:
    return AttachTray.create(
        max_bytes=ChatState.max_upload_mb * 1024 * 1024, max_files=MAX_PER_MESSAGE
    )

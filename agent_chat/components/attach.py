"""Files attached to a message (assets/attach.jsx): the paperclip button and the tray of
chips, in the composer and in a sent message's edit form (each its own `scope`).

The browser uploads each file to the HTTP API as soon as it is chosen, dropped or pasted
and shows its progress; the form sends only the uploaded ids (hidden field `attachments`),
which `LiveState.send` and `EditState.submit_edit` hand to the same use cases as the API's
`attachmentIds`.
"""

from __future__ import annotations

import reflex as rx

from agent_chat.services.attachments import MAX_PER_MESSAGE
from agent_chat.state.chat import ChatState

COMPOSER = "composer"  # the scope that takes files dropped or pasted anywhere on the page
EDIT = "edit"  # the edit form's; its test ids are prefixed: `edit-attach-button`


class AttachButton(rx.Component):
    library = "$/public/attach.jsx"
    tag = "AttachButton"

    label: rx.Var[str]
    scope: rx.Var[str]


class AttachTray(rx.Component):
    library = "$/public/attach.jsx"
    tag = "AttachTray"

    max_bytes: rx.Var[int]
    max_files: rx.Var[int]
    scope: rx.Var[str]


def attach_button(scope: str = COMPOSER) -> rx.Component:
    return AttachButton.create(label="Attach files", scope=scope)


def attach_tray(scope: str = COMPOSER) -> rx.Component:
    return AttachTray.create(
        max_bytes=ChatState.max_upload_mb * 1024 * 1024, max_files=MAX_PER_MESSAGE, scope=scope
    )

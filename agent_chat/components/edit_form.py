"""The edit form under a sent user message: its text, its files (each kept unless unticked)
and new files added with the form's own paperclip or pasted into its text box (the
composer's chips, `components/attach.py` with the `edit` scope)."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.attach import EDIT, attach_button, attach_tray
from agent_chat.components.common import tid
from agent_chat.display.rows import FileRow, MessageRow
from agent_chat.state.chat import ChatState
from agent_chat.state.edit import EditState


def _kept_file(file: FileRow) -> rx.Component:
    """A file of the message, kept unless unticked."""
    return rx.el.label(
        rx.el.input(
            type="checkbox",
            name="keep-" + file["id"].to_string(),
            value=file["id"].to_string(),
            default_checked=True,
        ),
        rx.el.span(file["name"], class_name="attachment-name"),
        rx.el.span(file["size"], class_name="attachment-meta"),
        class_name="kept-file",
        custom_attrs={"data-testid": "edit-file", "data-name": file["name"]},
    )


def edit_form(row: MessageRow) -> rx.Component:
    return rx.form(
        rx.vstack(
            rx.cond(
                row["files"].length() > 0,
                rx.el.div(
                    # Its presence says the form lists the files (none ticked: none kept).
                    rx.el.input(type="hidden", name="files_listed", value="1"),
                    rx.foreach(row["files"], _kept_file),
                    class_name="kept-files",
                ),
            ),
            attach_tray(EDIT),
            rx.text_area(
                name="text",
                default_value=row["content"],
                auto_focus=True,
                auto_height=True,
                width="100%",
                custom_attrs=tid("edit-input"),
            ),
            rx.cond(
                ChatState.edit_error != "",
                rx.text(
                    ChatState.edit_error,
                    size="2",
                    color_scheme="red",
                    custom_attrs=tid("edit-error"),
                ),
            ),
            rx.hstack(
                attach_button(EDIT),
                rx.spacer(),
                rx.button(
                    "Cancel",
                    type="button",
                    variant="soft",
                    color_scheme="gray",
                    on_click=ChatState.cancel_edit,
                ),
                rx.button("Send", type="submit", custom_attrs=tid("edit-submit")),
                align="center",
                width="100%",
            ),
            width="100%",
        ),
        on_submit=EditState.submit_edit,
        class_name="edit-form",
        width="100%",
        max_width="80%",
    )

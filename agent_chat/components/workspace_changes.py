"""Under a Workspace answer: "N files changed", which opens what it changed (added,
changed, deleted; text as a diff, binaries by size) and "Undo these changes" behind a
confirm (state/workspace_changes.py)."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.display.rows import MessageRow
from agent_chat.state.chat import ChatState
from agent_chat.state.workspace_changes import ChangeRow, ChangesState

S = ChangesState


def changes_link(row: MessageRow) -> rx.Component:
    """The answer's footer part: its label, a link while something is listed."""
    label = ChatState.answer_changes.get(row["id"].to_string(), "")
    return rx.cond(
        label != "",
        rx.link(
            rx.icon("file-diff", size=13),
            label,
            size="1",
            color_scheme="gray",
            on_click=S.open_changes(row["id"]),
            class_name="ws-changes-link",
            display="inline-flex",
            align_items="center",
            gap="4px",
            white_space="nowrap",
            custom_attrs={**tid("workspace-changes"), "data-message-id": row["id"]},
        ),
    )


def _change(row: ChangeRow) -> rx.Component:
    return rx.box(
        rx.hstack(
            rx.match(
                row["change"],
                ("added", rx.badge("added", color_scheme="green", variant="soft")),
                ("deleted", rx.badge("deleted", color_scheme="red", variant="soft")),
                rx.badge("changed", color_scheme="amber", variant="soft"),
            ),
            rx.code(row["path"], variant="ghost"),
            rx.cond(row["sizes"] != "", rx.text(row["sizes"], size="1", color_scheme="gray")),
            align="center",
            spacing="2",
            wrap="wrap",
        ),
        rx.cond(
            row["diff"] != "",
            rx.el.pre(
                row["diff"],
                class_name="ws-code ws-plain ws-diff",
                max_height="320px",
                overflow="auto",
                font_size="12px",
            ),
        ),
        class_name="ws-change",
        custom_attrs={"data-testid": "workspace-change", "data-path": row["path"]},
    )


def _confirm() -> rx.Component:
    return rx.callout.root(
        rx.callout.text(
            "Put the files back as they were before this answer? What it added goes, what "
            "it changed or deleted comes back. The answer itself stays."
        ),
        rx.hstack(
            rx.button("Cancel", variant="soft", color_scheme="gray", on_click=S.cancel_undo),
            rx.button(
                "Undo",
                color_scheme="red",
                on_click=S.undo,
                custom_attrs=tid("workspace-undo-confirm"),
            ),
            spacing="2",
            justify="end",
        ),
        color_scheme="amber",
        size="1",
    )


def changes_dialog() -> rx.Component:
    """One for the page (mounted with the workspace drawer)."""
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("What this answer changed"),
            rx.cond(
                S.wc_undone,
                rx.text(
                    "Undone: the files are back as before this answer.",
                    size="2",
                    custom_attrs=tid("workspace-undone"),
                ),
            ),
            rx.box(rx.foreach(S.wc_rows, _change), class_name="ws-changes"),
            rx.cond(
                S.wc_error != "",
                rx.callout.root(rx.callout.text(S.wc_error), color_scheme="red", size="1"),
            ),
            rx.cond(S.wc_confirm, _confirm()),
            rx.hstack(
                rx.cond(
                    S.wc_can_undo & ~S.wc_confirm,
                    rx.button(
                        rx.icon("undo-2", size=14),
                        "Undo these changes",
                        variant="soft",
                        color_scheme="red",
                        on_click=S.ask_undo,
                        custom_attrs=tid("workspace-undo"),
                    ),
                ),
                rx.dialog.close(rx.button("Close", variant="soft", color_scheme="gray")),
                spacing="2",
                justify="end",
            ),
            max_width="min(900px, 96vw)",
            custom_attrs=tid("workspace-changes-dialog"),
        ),
        open=S.wc_open,
        on_open_change=S.set_wc_open,
    )

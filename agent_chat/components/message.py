"""A message of the conversation: user bubble, assistant answer (live or finished)."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.askfor import askfor_panel
from agent_chat.components.common import safe_markdown, tid
from agent_chat.components.edit_form import edit_form
from agent_chat.components.stream_text import copy_stream, stream_text
from agent_chat.components.thinking import (
    answered_questions,
    current_tool,
    live_status,
    live_thinking_stream,
    thinking_stream,
    todo_list,
    tool_history,
)
from agent_chat.components.workspace_changes import changes_link
from agent_chat.display.rows import FileRow, MessageRow
from agent_chat.state.chat import ChatState
from agent_chat.state.live import LiveState


def _copy_button(on_click) -> rx.Component:
    """Copy to the clipboard, in the page: no server round trip."""
    return rx.tooltip(
        rx.icon_button(
            rx.icon("copy", size=14),
            variant="ghost",
            size="1",
            color_scheme="gray",
            on_click=on_click,
            aria_label="Copy message",
            custom_attrs=tid("copy-message"),
        ),
        content="Copy",
    )


def _icon_action(icon: str, label: str, test_id: str, on_click) -> rx.Component:
    return rx.tooltip(
        rx.icon_button(
            rx.icon(icon, size=14),
            variant="ghost",
            size="1",
            color_scheme="gray",
            on_click=on_click,
            aria_label=label,
            custom_attrs=tid(test_id),
        ),
        content=label,
    )


def version_switcher(row: MessageRow) -> rx.Component:
    """`< 2/3 >` between the versions of a message (shown when it has siblings)."""
    return rx.cond(
        row["versions"] > 1,
        rx.hstack(
            rx.icon_button(
                rx.icon("chevron-left", size=14),
                variant="ghost",
                size="1",
                color_scheme="gray",
                disabled=row["version"] <= 1,
                on_click=ChatState.switch_version(row["id"], -1),
                aria_label="Previous version",
                custom_attrs=tid("version-prev"),
            ),
            rx.text(
                row["version"].to_string() + "/" + row["versions"].to_string(),
                size="1",
                color_scheme="gray",
                custom_attrs=tid("version-label"),
            ),
            rx.icon_button(
                rx.icon("chevron-right", size=14),
                variant="ghost",
                size="1",
                color_scheme="gray",
                disabled=row["version"] >= row["versions"],
                on_click=ChatState.switch_version(row["id"], 1),
                aria_label="Next version",
                custom_attrs=tid("version-next"),
            ),
            align="center",
            spacing="1",
        ),
    )


def _file(file: FileRow) -> rx.Component:
    """A picture's thumbnail (made on the server; lazy: a long conversation loads those it
    scrolls to), which opens the full picture over the page, or a card; each link is the
    download (the server never serves a file as a page)."""
    return rx.el.a(
        rx.cond(
            file["image"],
            rx.el.img(src=file["thumb"], alt=file["name"], loading="lazy", class_name="file-thumb"),
            rx.fragment(
                rx.el.span(file["kind"], class_name="attachment-icon"),
                rx.el.span(
                    rx.el.span(file["name"], class_name="attachment-name"),
                    rx.el.span(file["size"], class_name="attachment-meta"),
                    class_name="attachment-text",
                ),
            ),
        ),
        href=file["url"],
        download=file["name"],
        title=file["name"] + " · " + file["size"],
        class_name=rx.cond(file["image"], "message-file message-image", "message-file"),
        # A picture opens over the page (assets/attach.jsx listens for this mark).
        custom_attrs={
            # Reflex makes this a React Router link, which would open the file as a page.
            "reloadDocument": True,
            "data-testid": "message-file",
            "data-name": file["name"],
            "data-view": rx.cond(file["image"], "picture", ""),
        },
    )


def user_message(row: MessageRow) -> rx.Component:
    return rx.vstack(
        rx.cond(
            row["files"].length() > 0,
            rx.el.div(rx.foreach(row["files"], _file), class_name="message-files"),
        ),
        rx.cond(
            ChatState.editing_id == row["id"],
            edit_form(row),
            rx.box(
                rx.text(
                    row["content"], white_space="pre-wrap", custom_attrs=tid("message-content")
                ),
                class_name="bubble-user",
            ),
        ),
        rx.hstack(
            version_switcher(row),
            rx.hstack(
                _copy_button([rx.set_clipboard(row["content"]), rx.toast("Copied", duration=1500)]),
                _icon_action("pencil", "Edit", "edit-message", ChatState.start_edit(row["id"])),
                class_name="message-actions",
                spacing="1",
            ),
            align="center",
            spacing="2",
        ),
        align="end",
        spacing="1",
        width="100%",
        custom_attrs={"data-testid": "message-user", "data-message-id": row["id"]},
    )


def _live_body() -> rx.Component:
    """A run in progress: the question first (impossible to miss), then what the agent does."""
    return rx.vstack(
        askfor_panel(),
        rx.cond(
            LiveState.reconnecting,
            rx.badge(
                "Reconnecting to the agent…",
                color_scheme="amber",
                custom_attrs=tid("reconnect-badge"),
            ),
        ),
        live_status(LiveState.status),
        # Hidden while the agent itself waits; a child's wait keeps its delegate_task cards.
        rx.cond(~LiveState.waiting | (LiveState.asker != ""), current_tool(LiveState.tool)),
        todo_list(LiveState.todos),
        live_thinking_stream(),
        tool_history(LiveState.tools),
        rx.box(
            stream_text(stream_id=LiveState.answer_stream, text="", markdown=True, class_name="md"),
            class_name="live-answer",
            custom_attrs=tid("message-content"),
            width="100%",
        ),
        spacing="2",
        width="100%",
        # assets/styles.css stops the panel's animations while its text streams:
        # each one repaints every frame.
        class_name="live-body",
    )


def _summary_toggle(row: MessageRow) -> rx.Component:
    """The folded panel: one line; a click unfolds it (rebuilt from the message's log)."""
    return rx.cond(
        row["summary"] != "",
        rx.hstack(
            rx.text(row["summary"], size="1", color_scheme="gray"),
            rx.cond(
                row["has_panel"],
                # Two static icons: an icon named by a var bundles the whole icon set.
                rx.cond(
                    row["expanded"],
                    rx.icon("chevron-up", size=14, color=rx.color("gray", 9)),
                    rx.icon("chevron-down", size=14, color=rx.color("gray", 9)),
                ),
            ),
            align="center",
            spacing="1",
            class_name=rx.cond(row["has_panel"], "summary-toggle clickable", "summary-toggle"),
            on_click=rx.cond(row["has_panel"], ChatState.toggle_panel(row["id"]), rx.noop()),
            custom_attrs=tid("thinking-toggle"),
        ),
    )


def _unfolded_panel(row: MessageRow) -> rx.Component:
    return rx.cond(
        row["expanded"],
        rx.vstack(
            todo_list(row["todos"]),
            thinking_stream(row["thinking"], open_=True),
            tool_history(row["tools"], open_=True),
            answered_questions(row["answers"]),
            spacing="2",
            width="100%",
            class_name="unfolded-panel",
        ),
    )


def _final_body(row: MessageRow) -> rx.Component:
    return rx.vstack(
        _summary_toggle(row),
        _unfolded_panel(row),
        rx.cond(
            (row["content"] != "") | (row["stream_id"] != ""),
            rx.box(
                stream_text(
                    stream_id=row["stream_id"],
                    text=row["content"],
                    markdown=True,
                    class_name="md",
                ),
                custom_attrs=tid("message-content"),
                width="100%",
            ),
        ),
        rx.cond(
            row["status"] == "STOPPED",
            rx.text("Stopped.", size="1", color_scheme="gray"),
        ),
        rx.cond(
            row["error"] != "",
            rx.callout.root(
                rx.callout.icon(rx.icon("circle-alert")),
                rx.callout.text(row["error"]),
                color_scheme="red",
                size="1",
                custom_attrs=tid("message-error"),
            ),
        ),
        rx.hstack(
            version_switcher(row),
            rx.hstack(
                _copy_button(copy_stream(row["stream_id"])),
                _icon_action(
                    "refresh-cw", "Regenerate", "regenerate", LiveState.regenerate(row["id"])
                ),
                class_name="message-actions",
                spacing="1",
            ),
            rx.cond(
                row["usage"] != "",
                rx.text(
                    row["usage"], size="1", color_scheme="gray", custom_attrs=tid("message-usage")
                ),
            ),
            changes_link(row),
            align="center",
            spacing="2",
            wrap="wrap",
        ),
        spacing="2",
        width="100%",
    )


def assistant_message(row: MessageRow) -> rx.Component:
    return rx.hstack(
        rx.avatar(fallback="H", size="2", radius="full", color_scheme="violet"),
        rx.cond(row["id"] == LiveState.message_id, _live_body(), _final_body(row)),
        align="start",
        spacing="3",
        width="100%",
        custom_attrs={
            "data-testid": "message-assistant",
            "data-message-id": row["id"],
            "data-status": row["status"],
        },
    )


def system_divider(row: MessageRow) -> rx.Component:
    """A context reset marker, or a summary that stands for earlier messages."""
    return rx.cond(
        row["status"] == "RESET",
        rx.hstack(
            rx.separator(size="4", flex="1"),
            rx.text(
                "Context reset: the agent does not see the messages above",
                size="1",
                color_scheme="gray",
            ),
            rx.separator(size="4", flex="1"),
            align="center",
            width="100%",
            custom_attrs={"data-testid": "message-reset", "data-message-id": row["id"]},
        ),
        rx.el.details(
            rx.el.summary(
                rx.text(
                    "Earlier messages were summarised", size="1", color_scheme="gray", as_="span"
                )
            ),
            rx.box(safe_markdown(row["content"]), class_name="summary-body"),
            class_name="system-divider",
            custom_attrs={"data-testid": "message-summary", "data-message-id": row["id"]},
        ),
    )


def message(row: MessageRow) -> rx.Component:
    return rx.match(
        row["role"],
        ("user", user_message(row)),
        ("assistant", assistant_message(row)),
        system_divider(row),
    )

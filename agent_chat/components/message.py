"""A message of the conversation: user bubble, assistant answer (live or finished)."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.askfor import askfor_panel
from agent_chat.components.common import safe_markdown, tid
from agent_chat.components.thinking import (
    answered_questions,
    current_tool,
    live_status,
    thinking_stream,
    todo_list,
    tool_history,
)
from agent_chat.state.chat import ChatState
from agent_chat.state.rows import MessageRow


def _copy_button(text: rx.Var) -> rx.Component:
    return rx.tooltip(
        rx.icon_button(
            rx.icon("copy", size=14),
            variant="ghost",
            size="1",
            color_scheme="gray",
            on_click=[rx.set_clipboard(text), rx.toast("Copied", duration=1500)],
            aria_label="Copy message",
            custom_attrs=tid("copy-message"),
        ),
        content="Copy",
    )


def user_message(row: MessageRow) -> rx.Component:
    return rx.vstack(
        rx.box(
            rx.text(row["content"], white_space="pre-wrap", custom_attrs=tid("message-content")),
            class_name="bubble-user",
        ),
        rx.hstack(_copy_button(row["content"]), class_name="message-actions"),
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
            ChatState.live_reconnecting,
            rx.badge(
                "Reconnecting to the agent…",
                color_scheme="amber",
                custom_attrs=tid("reconnect-badge"),
            ),
        ),
        live_status(ChatState.live_status),
        rx.cond(~ChatState.live_waiting, current_tool(ChatState.live_tool)),
        todo_list(ChatState.live_todos),
        thinking_stream(ChatState.live_thinking, open_=True),
        tool_history(ChatState.live_tools),
        rx.cond(
            ChatState.live_answer != "",
            rx.box(
                safe_markdown(ChatState.live_answer),
                custom_attrs=tid("message-content"),
                width="100%",
            ),
        ),
        spacing="2",
        width="100%",
    )


def _summary_toggle(row: MessageRow) -> rx.Component:
    """The folded panel: one line; a click unfolds it (rebuilt from the message's log)."""
    return rx.cond(
        row["summary"] != "",
        rx.hstack(
            rx.text(row["summary"], size="1", color_scheme="gray"),
            rx.cond(
                row["has_panel"],
                rx.icon(
                    rx.cond(row["expanded"], "chevron-up", "chevron-down"),
                    size=14,
                    color=rx.color("gray", 9),
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
            row["content"] != "",
            rx.box(
                safe_markdown(row["content"]), custom_attrs=tid("message-content"), width="100%"
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
        rx.hstack(_copy_button(row["content"]), class_name="message-actions"),
        spacing="2",
        width="100%",
    )


def assistant_message(row: MessageRow) -> rx.Component:
    return rx.hstack(
        rx.avatar(fallback="H", size="2", radius="full", color_scheme="violet"),
        rx.cond(row["id"] == ChatState.live_message_id, _live_body(), _final_body(row)),
        align="start",
        spacing="3",
        width="100%",
        custom_attrs={
            "data-testid": "message-assistant",
            "data-message-id": row["id"],
            "data-status": row["status"],
        },
    )


def message(row: MessageRow) -> rx.Component:
    return rx.match(
        row["role"],
        ("user", user_message(row)),
        ("assistant", assistant_message(row)),
        rx.box(
            rx.text(row["content"], size="1", color_scheme="gray"),
            class_name="system-divider",
            custom_attrs=tid("message-summary"),
        ),
    )

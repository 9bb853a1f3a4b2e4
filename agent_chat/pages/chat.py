"""The conversation page (`/` and `/chat/[session_id]`)."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.composer import composer
from agent_chat.components.layout import app_frame
from agent_chat.components.memory import memory_drawer
from agent_chat.components.message import message
from agent_chat.components.workspace import workspace_drawer
from agent_chat.state.chat import ChatState


def _reset_button() -> rx.Component:
    return rx.cond(
        ChatState.messages.length() > 0,
        rx.tooltip(
            rx.icon_button(
                rx.icon("eraser", size=16),
                variant="ghost",
                color_scheme="gray",
                on_click=ChatState.reset_session,
                aria_label="Reset the agent's context",
                custom_attrs={"data-testid": "reset-session"},
            ),
            content="Reset context: the agent forgets this conversation (messages stay visible)",
        ),
    )


def _export_button(fmt: str, icon: str, label: str) -> rx.Component:
    """A download link for the export of the open conversation (the server names the file)."""
    return rx.tooltip(
        rx.icon_button(
            rx.link(
                rx.icon(icon, size=16),
                href=routes.export_url(ChatState.current_uuid, fmt),
                is_external=True,
                custom_attrs={"download": "", "data-testid": f"export-{fmt}"},
            ),
            as_child=True,
            variant="ghost",
            color_scheme="gray",
            aria_label=label,
        ),
        content=label,
    )


def _export_buttons() -> rx.Component:
    return rx.cond(
        ChatState.current_uuid != "",
        rx.hstack(
            _export_button("md", "file-text", "Export as Markdown"),
            _export_button("json", "file-json", "Export as JSON"),
            spacing="3",
        ),
    )


def _header() -> rx.Component:
    return rx.hstack(
        rx.heading(
            rx.cond(ChatState.title != "", ChatState.title, "New conversation"),
            size="3",
            truncate=True,
            flex="1",
        ),
        _export_buttons(),
        workspace_drawer(),
        memory_drawer(),
        _reset_button(),
        align="center",
        class_name="chat-header",
    )


def _empty_start() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.icon("sparkles", size=32, color=rx.color("violet", 9)),
            rx.heading("What can Hermes do for you?", size="6"),
            rx.text(
                "Ask a question; you will see the agent think, use tools and ask back.",
                color_scheme="gray",
            ),
            align="center",
            spacing="2",
        ),
        flex="1",
        width="100%",
    )


def _not_found() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.heading("Conversation not found", size="5"),
            rx.text("It may have been deleted, or the link is wrong.", color_scheme="gray"),
            rx.link(rx.button("Start a new conversation"), href=routes.INDEX),
            align="center",
            spacing="3",
            custom_attrs={"data-testid": "not-found"},
        ),
        flex="1",
        width="100%",
    )


def _conversation() -> rx.Component:
    return rx.cond(
        ChatState.messages.length() == 0,
        _empty_start(),
        rx.auto_scroll(
            rx.vstack(
                rx.cond(
                    ChatState.has_earlier,
                    rx.button(
                        "Show earlier messages",
                        variant="soft",
                        size="1",
                        align_self="center",
                        on_click=ChatState.load_earlier,
                        custom_attrs={"data-testid": "load-earlier"},
                    ),
                ),
                rx.foreach(ChatState.messages, message),
                class_name="message-column",
                spacing="5",
            ),
            class_name="message-scroll",
        ),
    )


def chat_page() -> rx.Component:
    return app_frame(
        rx.cond(
            ChatState.not_found,
            _not_found(),
            rx.fragment(
                _header(),
                _conversation(),
                composer(),
            ),
        ),
    )

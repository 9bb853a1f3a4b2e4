"""The conversation page (`/chat` for a new one, `/chat/<uuid>`), and `/`, which opens one."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.composer import composer
from agent_chat.components.layout import app_frame, phone_bar, sidebar_toggle
from agent_chat.components.memory import memory_drawer
from agent_chat.components.message import message
from agent_chat.components.share import share_button, share_header_item
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


def _export_button(fmt: str, icon: str, label: str, *, files: bool = False) -> rx.Component:
    """A download link for the export of the open conversation (the server names the file);
    `files`: the JSON with the attached files' bytes, which an import restores."""
    test_id = f"export-{fmt}" + ("-files" if files else "")
    return rx.tooltip(
        rx.icon_button(
            rx.link(
                rx.icon(icon, size=16),
                href=routes.export_url(ChatState.current_uuid, fmt, files=files),
                is_external=True,
                custom_attrs={"download": "", "data-testid": test_id},
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
            _export_button("json", "file-archive", "Export as JSON with files", files=True),
            share_button(),
            spacing="3",
        ),
    )


def _menu_link(label: str, fmt: str, *, files: bool = False) -> rx.Component:
    test_id = f"menu-export-{fmt}" + ("-files" if files else "")
    return rx.dropdown_menu.item(
        rx.link(
            label,
            href=routes.export_url(ChatState.current_uuid, fmt, files=files),
            is_external=True,
            underline="none",
            color="inherit",
            custom_attrs={"download": ""},
        ),
        as_child=True,
        custom_attrs={"data-testid": test_id},
    )


def _phone_menu() -> rx.Component:
    """Below 768 px the exports and the reset fold into one "more" menu (assets/styles.css)."""
    return rx.cond(
        ChatState.current_uuid != "",
        rx.dropdown_menu.root(
            rx.dropdown_menu.trigger(
                rx.icon_button(
                    rx.icon("ellipsis-vertical", size=18),
                    variant="ghost",
                    color_scheme="gray",
                    aria_label="More actions",
                    custom_attrs={"data-testid": "header-more"},
                ),
            ),
            rx.dropdown_menu.content(
                _menu_link("Export as Markdown", "md"),
                _menu_link("Export as JSON", "json"),
                _menu_link("Export as JSON with files", "json", files=True),
                share_header_item(),
                rx.cond(
                    ChatState.messages.length() > 0,
                    rx.fragment(
                        rx.dropdown_menu.separator(),
                        rx.dropdown_menu.item(
                            "Reset context",
                            on_click=ChatState.reset_session,
                            custom_attrs={"data-testid": "menu-reset-session"},
                        ),
                    ),
                ),
                align="end",
            ),
        ),
    )


def _header() -> rx.Component:
    return rx.hstack(
        sidebar_toggle(),
        rx.heading(
            rx.cond(ChatState.title != "", ChatState.title, "New conversation"),
            size="3",
            truncate=True,
            flex="1",
            min_width="0",
            class_name="chat-title",
        ),
        rx.box(_export_buttons(), class_name="header-wide"),
        workspace_drawer(),
        memory_drawer(),
        rx.box(_reset_button(), class_name="header-wide"),
        rx.box(_phone_menu(), class_name="header-narrow"),
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
        class_name="empty-start",
    )


def _not_found() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.heading("Conversation not found", size="5"),
            rx.text("It may have been deleted, or the link is wrong.", color_scheme="gray"),
            rx.link(rx.button("Start a new conversation"), href=routes.NEW_CHAT),
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
            rx.fragment(phone_bar(), _not_found()),
            rx.fragment(
                _header(),
                _conversation(),
                composer(),
            ),
        ),
        with_phone_bar=False,
    )


def index_page() -> rx.Component:
    """`/`: nothing to type into (its load moves on to the latest or a new conversation, and
    text typed on a page that is then replaced would be lost)."""
    return rx.center(rx.spinner(size="3"), height="100vh", width="100%")

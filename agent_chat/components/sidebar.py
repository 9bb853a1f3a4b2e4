"""The session sidebar: new, list by last activity, rename, delete, badges."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.account import account_footer
from agent_chat.components.common import row_menu_trigger, tid
from agent_chat.components.folders import (
    folder_block,
    move_menu,
    new_folder_button,
    new_folder_form,
    pin_item,
)
from agent_chat.components.search_results import search_results
from agent_chat.components.share import import_button, share_menu_item
from agent_chat.display.rows import FolderRow, SessionRow
from agent_chat.state.search import SearchState
from agent_chat.state.sidebar import SidebarState


def _badge(row: SessionRow) -> rx.Component:
    return rx.match(
        row["state"],
        # Static (no spinner): a CSS animation restyles and repaints the page every frame
        # while an answer streams (assets/styles.css "Running markers").
        (
            "running",
            rx.tooltip(
                rx.icon(
                    "activity",
                    size=14,
                    class_name="running-mark",
                    aria_label="Running",
                    role="img",
                    custom_attrs=tid("session-running"),
                ),
                content="Running",
            ),
        ),
        (
            "waiting",
            rx.tooltip(
                rx.badge(
                    "answer", color_scheme="amber", size="1", custom_attrs=tid("session-waiting")
                ),
                content="Waiting for your answer",
            ),
        ),
        (
            "unread",
            rx.tooltip(
                rx.box(class_name="unread-dot", custom_attrs=tid("session-unread")),
                content="Finished while you were away",
            ),
        ),
        rx.fragment(),
    )


def _menu(row: SessionRow) -> rx.Component:
    return rx.dropdown_menu.root(
        row_menu_trigger("Conversation actions"),
        rx.dropdown_menu.content(
            pin_item(row),
            move_menu(row),
            rx.dropdown_menu.item(
                "Rename",
                on_click=SidebarState.start_rename(row["uuid"]),
                custom_attrs=tid("session-rename"),
            ),
            share_menu_item(row["uuid"]),
            rx.dropdown_menu.item(
                "Schedule…",
                on_click=rx.redirect(routes.SCHEDULES + "?conversation=" + row["uuid"]),
                custom_attrs=tid("session-schedule"),
            ),
            rx.cond(
                row["archived"],
                rx.dropdown_menu.item(
                    "Unarchive",
                    on_click=SidebarState.set_archived(row["uuid"], False),
                    custom_attrs=tid("session-unarchive"),
                ),
                rx.dropdown_menu.item(
                    "Archive",
                    on_click=SidebarState.set_archived(row["uuid"], True),
                    custom_attrs=tid("session-archive"),
                ),
            ),
            rx.dropdown_menu.separator(),
            rx.dropdown_menu.item(
                "Delete",
                color="red",
                on_click=SidebarState.delete(row["uuid"]),
                custom_attrs=tid("session-delete"),
            ),
            # Radix gives the focus back to the ⋯ button when the menu's closing animation
            # ends: by then the person may be typing in a field opened since (rename, a new
            # folder), whose blur closes it. The field keeps the focus.
            on_close_auto_focus=rx.prevent_default,
        ),
    )


def _rename_form(row: SessionRow) -> rx.Component:
    return rx.form(
        rx.input(
            name="title",
            default_value=row["title"],
            auto_focus=True,
            size="1",
            width="100%",
            on_blur=SidebarState.cancel_rename,
            custom_attrs=tid("session-rename-input"),
        ),
        on_submit=SidebarState.rename,
        width="100%",
    )


def session_item(row: SessionRow) -> rx.Component:
    """One conversation in the list; the open one is highlighted."""
    selected = SidebarState.current_uuid == row["uuid"]
    return rx.cond(
        SidebarState.renaming_uuid == row["uuid"],
        _rename_form(row),
        rx.hstack(
            rx.link(
                rx.text(row["title"], size="2", truncate=True, custom_attrs=tid("session-title")),
                href="/chat/" + row["uuid"],
                underline="none",
                color="inherit",
                flex="1",
                min_width="0",
                on_double_click=SidebarState.start_rename(row["uuid"]),
            ),
            rx.cond(
                row["pinned"],
                rx.icon("pin", size=12, color=rx.color("gray", 9), custom_attrs=tid("pinned-icon")),
            ),
            rx.cond(row["archived"], rx.icon("archive", size=12, color=rx.color("gray", 9))),
            rx.cond(
                row["scheduled"],
                rx.tooltip(
                    rx.icon(
                        "alarm-clock",
                        size=12,
                        color=rx.color("gray", 9),
                        aria_label="Scheduled",
                        role="img",
                        custom_attrs=tid("scheduled-mark"),
                    ),
                    content="A schedule runs here",
                ),
            ),
            _badge(row),
            _menu(row),
            align="center",
            spacing="1",
            class_name=rx.cond(selected, "session-item selected", "session-item"),
            custom_attrs={"data-testid": "session-item", "data-session-id": row["uuid"]},
        ),
    )


def _section_label(text: str) -> rx.Component:
    return rx.text(text, size="1", weight="medium", color_scheme="gray", class_name="sidebar-label")


def _folder(folder: FolderRow) -> rx.Component:
    return folder_block(folder, session_item)


def _conversations() -> rx.Component:
    """Pinned first, then the folders, then the other conversations (paged)."""
    return rx.vstack(
        rx.cond(
            SidebarState.pinned.length() > 0,
            rx.vstack(
                _section_label("Pinned"),
                rx.foreach(SidebarState.pinned, session_item),
                spacing="1",
                width="100%",
                custom_attrs=tid("pinned-sessions"),
            ),
        ),
        new_folder_form(),
        rx.foreach(SidebarState.folders, _folder),
        rx.cond(
            (SidebarState.pinned.length() > 0) | (SidebarState.folders.length() > 0),
            _section_label("Conversations"),
        ),
        rx.foreach(SidebarState.sessions, session_item),
        rx.cond(
            SidebarState.has_more,
            rx.button("Show more", variant="ghost", size="1", on_click=SidebarState.load_more),
        ),
        rx.cond(
            (SidebarState.sessions.length() == 0)
            & (SidebarState.pinned.length() == 0)
            & (SidebarState.folders.length() == 0),
            rx.text("No conversations yet.", size="2", color_scheme="gray"),
        ),
        spacing="1",
        width="100%",
    )


def sidebar() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.link(
                rx.heading("Agent Chat", size="4"),
                href=routes.INDEX,
                underline="none",
                color="inherit",
            ),
            rx.spacer(),
            rx.tooltip(
                rx.link(
                    rx.icon_button(
                        rx.icon("settings", size=16),
                        variant="ghost",
                        size="2",
                        aria_label="Model settings",
                    ),
                    href=routes.SETTINGS_MODELS,
                ),
                content="Model settings",
            ),
            rx.tooltip(
                rx.link(
                    rx.icon_button(
                        rx.icon("calendar-clock", size=16),
                        variant="ghost",
                        size="2",
                        aria_label="Schedules",
                    ),
                    href=routes.SCHEDULES,
                    custom_attrs=tid("schedules-link"),
                ),
                content="Schedules: prompts that run at set times",
            ),
            rx.icon_button(
                rx.icon("x", size=18),
                variant="ghost",
                color_scheme="gray",
                size="2",
                class_name="sidebar-close",
                aria_label="Close the conversation list",
                custom_attrs=tid("sidebar-close"),
            ),
            width="100%",
            align="center",
        ),
        rx.hstack(
            rx.button(
                rx.icon("square-pen", size=16),
                "New conversation",
                on_click=SidebarState.new_session,
                flex="1",
                variant="soft",
                custom_attrs=tid("new-session"),
            ),
            new_folder_button(),
            width="100%",
            spacing="2",
        ),
        rx.input(
            rx.input.slot(rx.icon("search", size=14)),
            rx.cond(
                SearchState.query != "",
                rx.input.slot(
                    rx.icon_button(
                        rx.icon("x", size=12),
                        variant="ghost",
                        size="1",
                        color_scheme="gray",
                        on_click=SearchState.clear_query,
                        aria_label="Clear the search",
                        custom_attrs=tid("search-clear"),
                    ),
                ),
            ),
            placeholder="Search messages and titles",
            value=SearchState.query,
            on_change=SearchState.set_query,
            debounce_timeout=250,
            size="2",
            width="100%",
            custom_attrs=tid("session-search"),
        ),
        rx.scroll_area(
            rx.cond(SearchState.query != "", search_results(), _conversations()),
            type="hover",
            scrollbars="vertical",
            flex="1",
        ),
        rx.hstack(
            rx.button(
                rx.icon("archive", size=14),
                rx.cond(SidebarState.show_archived, "Hide archived", "Show archived"),
                variant="ghost",
                size="1",
                color_scheme="gray",
                on_click=SidebarState.toggle_archived,
                custom_attrs=tid("toggle-archived"),
            ),
            rx.spacer(),
            import_button(),
            rx.tooltip(
                rx.icon_button(
                    rx.icon("keyboard", size=14),
                    variant="ghost",
                    size="1",
                    color_scheme="gray",
                    class_name="shortcuts-button",
                    aria_label="Keyboard shortcuts",
                    custom_attrs=tid("shortcuts-button"),  # assets/app_frame.jsx opens the list
                ),
                content="Keyboard shortcuts (?)",
            ),
            align="center",
            width="100%",
        ),
        account_footer(),
        class_name="sidebar",
        spacing="3",
    )

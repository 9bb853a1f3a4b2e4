"""Small shared pieces: test ids, the error banner, safe markdown, a side sheet's header, a
sidebar row's menu button and a Delete button that asks first."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.stream_text import stream_text
from agent_chat.state.base import AppState


def tid(test_id: str) -> dict[str, str]:
    """`custom_attrs` giving a component its stable `data-testid`, the name tests find it by."""
    return {"data-testid": test_id}


def safe_markdown(text: rx.Var | str, **props) -> rx.Component:
    """Agent output as markdown, through the app's one renderer (components/stream_text.py):
    no raw HTML, no `javascript:` links, images only on click."""
    return stream_text(stream_id="", text=text, markdown=True, class_name="md", **props)


def error_banner() -> rx.Component:
    return rx.cond(
        AppState.banner != "",
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle-alert")),
            rx.hstack(
                rx.callout.text(AppState.banner, flex="1"),
                rx.icon_button(
                    rx.icon("x", size=14),
                    variant="ghost",
                    size="1",
                    on_click=AppState.dismiss_banner,
                    aria_label="Dismiss",
                ),
                align="center",
                width="100%",
            ),
            color_scheme="red",
            role="alert",
            width="100%",
            custom_attrs=tid("error-banner"),
        ),
    )


def sheet_header(
    icon: str,
    title: str,
    *extra: rx.Component,
    on_refresh: rx.EventHandler,
    refresh_title: str,
    name: str,
    class_prefix: str,
) -> rx.Component:
    """The header of a side sheet (memory, workspace): icon, title, `extra` (a spinner, a
    count), then Refresh and Close. Test ids are `{name}-refresh` and `{name}-close`; CSS
    classes are `{class_prefix}-header`, `-header-icon` and `-title`."""
    return rx.hstack(
        rx.icon(icon, size=18, class_name=f"{class_prefix}-header-icon"),
        rx.dialog.title(title, class_name=f"{class_prefix}-title"),
        *extra,
        rx.spacer(),
        rx.icon_button(
            rx.icon("refresh-cw", size=14),
            variant="ghost",
            color_scheme="gray",
            on_click=on_refresh,
            aria_label="Refresh",
            title=refresh_title,
            custom_attrs=tid(f"{name}-refresh"),
        ),
        rx.dialog.close(
            rx.icon_button(
                rx.icon("x", size=16),
                variant="ghost",
                color_scheme="gray",
                aria_label="Close",
                custom_attrs=tid(f"{name}-close"),
            ),
        ),
        align="center",
        spacing="3",
        width="100%",
        class_name=f"{class_prefix}-header",
    )


def row_menu_trigger(aria_label: str) -> rx.Component:
    """The `…` button opening a sidebar row's menu (a conversation's, a folder's); styles.css
    shows it on hover and on the selected row."""
    return rx.dropdown_menu.trigger(
        rx.icon_button(
            rx.icon("ellipsis", size=14),
            variant="ghost",
            size="1",
            class_name="session-menu",
            aria_label=aria_label,
        ),
    )


def delete_with_confirm(
    *, title: str, description: list, on_confirm: rx.event.EventSpec, test_id: str
) -> rx.Component:
    """A small red Delete button (`test_id`) that asks `title` with `description` (texts and
    vars) first; "Delete" (`<test_id>-confirm`) runs `on_confirm`, "Keep it" closes."""
    return rx.alert_dialog.root(
        rx.alert_dialog.trigger(
            rx.button(
                rx.icon("trash-2", size=14),
                "Delete",
                size="1",
                variant="soft",
                color_scheme="red",
                custom_attrs=tid(test_id),
            ),
        ),
        rx.alert_dialog.content(
            rx.alert_dialog.title(title),
            rx.alert_dialog.description(*description),
            rx.hstack(
                rx.alert_dialog.cancel(rx.button("Keep it", variant="soft", color_scheme="gray")),
                rx.alert_dialog.action(
                    rx.button(
                        "Delete",
                        color_scheme="red",
                        on_click=on_confirm,
                        custom_attrs=tid(f"{test_id}-confirm"),
                    ),
                ),
                spacing="3",
                justify="end",
                margin_top="16px",
            ),
            max_width="420px",
        ),
    )

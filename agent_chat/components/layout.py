"""The two-pane page frame: sidebar left, content right. Below 768 px the sidebar is a drawer
behind a menu button (`sidebar_toggle`); assets/app_frame.jsx opens and closes it in the
page and owns the keyboard shortcuts, assets/styles.css ("Phone layout") the look."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import error_banner, tid
from agent_chat.components.sidebar import sidebar


class FrameBehaviour(rx.Component):
    """The drawer's open/close, the keyboard shortcuts and their dialog (no server state)."""

    library = "$/public/app_frame.jsx"
    tag = "FrameBehaviour"


def sidebar_toggle() -> rx.Component:
    """The menu button that opens the sidebar drawer (shown below 768 px only)."""
    return rx.icon_button(
        rx.icon("menu", size=20),
        variant="ghost",
        color_scheme="gray",
        size="2",
        class_name="sidebar-toggle",
        aria_label="Conversations",
        custom_attrs={**tid("sidebar-toggle"), "aria-expanded": "false"},
    )


def phone_bar() -> rx.Component:
    """The top bar of a page without a header of its own (settings): menu button and name."""
    return rx.hstack(
        sidebar_toggle(),
        rx.heading("Agent Chat", size="3"),
        align="center",
        spacing="2",
        class_name="phone-bar",
    )


def app_frame(*content: rx.Component, with_phone_bar: bool = True) -> rx.Component:
    """`with_phone_bar=False` when the page's own header holds `sidebar_toggle()`."""
    bar = [phone_bar()] if with_phone_bar else []
    return rx.hstack(
        sidebar(),
        rx.vstack(*bar, error_banner(), *content, class_name="main-pane", spacing="0"),
        FrameBehaviour.create(),
        spacing="0",
        class_name="app-frame",
    )

"""The two-pane page frame: sidebar left, content right."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import error_banner
from agent_chat.components.sidebar import sidebar


def app_frame(*content: rx.Component) -> rx.Component:
    return rx.hstack(
        sidebar(),
        rx.vstack(error_banner(), *content, class_name="main-pane", spacing="0"),
        spacing="0",
        class_name="app-frame",
    )

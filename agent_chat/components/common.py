"""Small shared pieces: test ids, the error banner, safe markdown."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.stream_text import stream_text
from agent_chat.state.base import AppState


def tid(test_id: str) -> dict[str, str]:
    """`custom_attrs` giving a component its stable `data-testid` (DESIGN.md §6)."""
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

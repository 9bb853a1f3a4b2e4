"""Small shared pieces: test ids, the error banner, markdown without raw HTML."""

from __future__ import annotations

import reflex as rx

from agent_chat.state.base import AppState


def tid(test_id: str) -> dict[str, str]:
    """`custom_attrs` giving a component its stable `data-testid` (DESIGN.md §6)."""
    return {"data-testid": test_id}


def _image_as_link(*children, **props) -> rx.Component:
    """A model's image becomes a link: nothing remote loads until the person clicks."""
    return rx.el.a(
        "🖼 ",
        rx.Var("(props.alt || 'image')"),
        " (open)",
        href=rx.Var("props.src"),
        target="_blank",
        rel="noopener noreferrer nofollow",
        class_name="md-image-link",
    )


def safe_markdown(text: rx.Var | str, **props) -> rx.Component:
    """Agent output as markdown. Raw HTML is not rendered (`use_raw=False`),
    react-markdown's URL filter drops `javascript:` links, and images do not load."""
    return rx.markdown(
        text, use_raw=False, class_name="md", component_map={"img": _image_as_link}, **props
    )


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

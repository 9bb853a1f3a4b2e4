"""Settings: the command patterns the person chose to "Always allow", each revocable."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.state.approvals import AlwaysAllowedState


def _rule(pattern: rx.Var) -> rx.Component:
    return rx.hstack(
        rx.code(pattern, flex="1", min_width="0", class_name="always-pattern"),
        rx.button(
            "Revoke",
            size="1",
            variant="soft",
            color_scheme="red",
            on_click=AlwaysAllowedState.revoke(pattern),
            custom_attrs=tid("always-revoke"),
        ),
        align="center",
        width="100%",
        custom_attrs={"data-testid": "always-rule", "data-pattern": pattern},
    )


def always_allowed_section() -> rx.Component:
    return rx.cond(
        AlwaysAllowedState.shown,
        rx.card(
            rx.vstack(
                rx.heading("Always-allowed commands", size="4"),
                rx.text(
                    "Kinds of dangerous command you chose to allow in every conversation. "
                    "Revoke one and the agent asks again.",
                    size="2",
                    color_scheme="gray",
                ),
                rx.foreach(AlwaysAllowedState.patterns, _rule),
                rx.cond(
                    AlwaysAllowedState.patterns.length() == 0,
                    rx.text("None: every dangerous command asks first.", size="2"),
                ),
                rx.cond(
                    AlwaysAllowedState.error != "",
                    rx.text(AlwaysAllowedState.error, size="2", color_scheme="red"),
                ),
                spacing="2",
                width="100%",
            ),
            width="100%",
            custom_attrs=tid("always-allowed"),
        ),
    )

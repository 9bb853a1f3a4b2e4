"""Settings sections: the commands the person chose to "Always allow" (each revocable), and
browser notifications."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.state.approvals import AlwaysAllowedState
from agent_chat.state.notify_settings import NotifySettingsState


def _rule(pattern: rx.Var) -> rx.Component:
    return rx.hstack(
        rx.code(pattern, flex="1", min_width="0", class_name="always-pattern"),
        rx.cond(
            AlwaysAllowedState.can_revoke,
            rx.button(
                "Revoke",
                size="1",
                variant="soft",
                color_scheme="red",
                on_click=AlwaysAllowedState.revoke(pattern),
                custom_attrs=tid("always-revoke"),
            ),
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
                    rx.cond(
                        AlwaysAllowedState.can_revoke,
                        "Kinds of dangerous command allowed in every conversation, for "
                        "everyone. Revoke one and the agent asks again.",
                        "Kinds of dangerous command allowed in every conversation, for "
                        "everyone. Only an administrator can revoke them.",
                    ),
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


def notifications_section() -> rx.Component:
    on = NotifySettingsState.notify == "on"
    return rx.card(
        rx.vstack(
            rx.heading("Notifications", size="4"),
            rx.text(
                "Tell me in this browser when a conversation I am not looking at finishes or "
                "needs an answer or an approval (the tab title counts them too).",
                size="2",
                color_scheme="gray",
            ),
            rx.hstack(
                rx.cond(
                    on,
                    rx.button(
                        "Turn off",
                        variant="soft",
                        on_click=NotifySettingsState.turn_off,
                        custom_attrs=tid("notify-off"),
                    ),
                    rx.button(
                        "Turn on",
                        on_click=NotifySettingsState.turn_on,
                        custom_attrs=tid("notify-on"),
                    ),
                ),
                rx.text(
                    rx.cond(
                        on,
                        "On in this browser.",
                        rx.cond(
                            NotifySettingsState.notify == "off", "Off.", NotifySettingsState.notify
                        ),
                    ),
                    size="2",
                    custom_attrs=tid("notify-status"),
                ),
                align="center",
                spacing="3",
            ),
            spacing="2",
            width="100%",
        ),
        width="100%",
    )

"""The settings page's note on one-service hosting (AGENT_CHAT_BRIDGE=embedded): what a
restart of the web app costs. Nothing is shown when the bridge is a process of its own."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.state.hosting import HostingState


def hosting_section() -> rx.Component:
    return rx.cond(
        HostingState.embedded_bridge,
        rx.callout.root(
            rx.callout.icon(rx.icon("info")),
            rx.callout.text(
                rx.text.strong("Agents run inside this web app. "),
                "Restarting or redeploying the app stops every answer still being written: "
                "it ends as failed, keeping what it wrote, and can be sent again. Hermes' "
                "long-term memory lives on this server's disk: on a host without a "
                "persistent disk it starts empty after a restart.",
            ),
            color_scheme="gray",
            variant="surface",
            width="100%",
            custom_attrs=tid("hosting-note"),
        ),
    )

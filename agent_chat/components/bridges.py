"""The settings page's "Agent services" section (administrators only): every bridge the
app uses, healthy or not since when, its last error, its active and waiting runs."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.state.bridges import BridgesState


def _bridge_row(row: rx.Var) -> rx.Component:
    healthy = row["state"] == "healthy"
    return rx.box(
        rx.vstack(
            rx.hstack(
                rx.badge(
                    row["state"],
                    color_scheme=rx.cond(
                        healthy, "green", rx.cond(row["since"] == "", "gray", "red")
                    ),
                    custom_attrs=tid("bridge-state"),
                ),
                rx.code(row["url"], custom_attrs=tid("bridge-url"), word_break="break-all"),
                rx.spacer(),
                rx.text(
                    row["active"],
                    " active · ",
                    row["waiting"],
                    " waiting",
                    size="2",
                    color_scheme="gray",
                    custom_attrs=tid("bridge-runs"),
                ),
                align="center",
                width="100%",
                wrap="wrap",
            ),
            rx.cond(row["since"] != "", rx.text(row["since"], size="1", color_scheme="gray")),
            rx.cond(
                row["sandbox"] != "",
                rx.text(
                    "Workspace commands: ",
                    row["sandbox"],
                    size="1",
                    color_scheme=rx.cond(row["sandbox_ok"] != "", "gray", "orange"),
                    weight=rx.cond(row["sandbox_ok"] != "", "regular", "medium"),
                    custom_attrs=tid("bridge-sandbox"),
                ),
            ),
            rx.cond(
                row["error"] != "",
                rx.text(
                    row["error"], size="1", color_scheme="red", custom_attrs=tid("bridge-error")
                ),
            ),
            spacing="1",
            width="100%",
        ),
        width="100%",
        padding="8px 10px",
        border="1px solid var(--gray-a5)",
        border_radius="var(--radius-3)",
        custom_attrs=tid("bridge-row"),
    )


def bridges_section() -> rx.Component:
    return rx.cond(
        BridgesState.is_admin,
        rx.card(
            rx.vstack(
                rx.hstack(
                    rx.heading("Agent services", size="4"),
                    rx.spacer(),
                    rx.button(
                        rx.icon("refresh-cw", size=14),
                        "Check now",
                        size="1",
                        variant="soft",
                        on_click=BridgesState.refresh,
                        custom_attrs=tid("bridges-refresh"),
                    ),
                    width="100%",
                    align="center",
                ),
                rx.text(
                    "The bridges that run the agents. A new conversation goes to the least "
                    "busy healthy one and stays there; a run whose bridge stops answering "
                    "fails. Only administrators see this.",
                    size="2",
                    color_scheme="gray",
                ),
                rx.foreach(BridgesState.bridges, _bridge_row),
                spacing="2",
                width="100%",
            ),
            width="100%",
            custom_attrs=tid("bridges-section"),
        ),
    )

"""Settings → Tools' list of MCP servers (state/mcp.py): each one's name, where it runs,
its status on the agent services, and Test, Edit, Enable/Disable, Delete."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import delete_with_confirm, tid
from agent_chat.components.mcp_form import test_result
from agent_chat.state.mcp import McpState
from agent_chat.state.mcp_form import McpRow


def _delete(row: McpRow) -> rx.Component:
    return delete_with_confirm(
        title="Delete this MCP server?",
        description=[
            "“",
            row["name"],
            "” and its settings go; the next answers do not get its tools.",
        ],
        on_confirm=McpState.delete(row["id"]),
        test_id="mcp-delete",
    )


def _button(icon: str, label, on_click, test_id: str, **props) -> rx.Component:
    return rx.button(
        rx.icon(icon, size=14),
        label,
        size="1",
        variant="soft",
        color_scheme=props.pop("color_scheme", "gray"),
        on_click=on_click,
        custom_attrs=tid(test_id),
        **props,
    )


def mcp_row(row: McpRow) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.text(row["name"], weight="bold", custom_attrs=tid("mcp-row-name")),
                rx.badge(row["transport"], color_scheme="gray"),
                rx.cond(row["ask"], rx.badge("asks before each call", color_scheme="amber")),
                rx.cond(
                    ~row["enabled"],
                    rx.badge("disabled", color_scheme="gray", custom_attrs=tid("mcp-disabled")),
                ),
                align="center",
                wrap="wrap",
                width="100%",
            ),
            rx.code(row["target"], size="1", word_break="break-all"),
            rx.text(
                row["profiles"],
                rx.cond(row["tools_rule"] != "", rx.text.span(" · ", row["tools_rule"])),
                rx.cond(row["secrets"] != "", rx.text.span(" · secrets: ", row["secrets"])),
                size="1",
                color_scheme="gray",
            ),
            rx.text(
                row["status"],
                size="1",
                color_scheme=rx.cond(row["status_ok"], "gray", "red"),
                custom_attrs=tid("mcp-status"),
            ),
            rx.cond(McpState.test_for == row["name"], test_result()),
            rx.flex(
                _button(
                    "plug",
                    "Test",
                    McpState.test_row(row["id"], row["name"]),
                    "mcp-row-test",
                    color_scheme="blue",
                ),
                _button("pencil", "Edit", McpState.edit(row["id"]), "mcp-edit"),
                rx.button(
                    rx.cond(
                        row["enabled"],
                        rx.icon("circle-pause", size=14),
                        rx.icon("circle-play", size=14),
                    ),
                    rx.cond(row["enabled"], "Disable", "Enable"),
                    size="1",
                    variant="soft",
                    color_scheme="gray",
                    on_click=McpState.set_enabled(row["id"], ~row["enabled"]),
                    custom_attrs=tid("mcp-toggle"),
                ),
                _delete(row),
                spacing="2",
                wrap="wrap",
            ),
            spacing="2",
            width="100%",
        ),
        width="100%",
        custom_attrs={"data-testid": "mcp-row", "data-name": row["name"]},
    )

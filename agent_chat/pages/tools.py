"""`/settings/tools` (administrators): the MCP servers the agent may use (state/mcp.py)."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.common import tid
from agent_chat.components.layout import app_frame
from agent_chat.components.mcp import mcp_row
from agent_chat.components.mcp_form import mcp_form
from agent_chat.components.settings_nav import settings_nav
from agent_chat.state.mcp import McpState


def _servers() -> rx.Component:
    return rx.vstack(
        rx.text(
            "MCP servers give the agent your team's own tools. A run gets the enabled servers "
            "of its conversation's tool profile; a change reaches the next answer. Secrets "
            "(environment values, headers, tokens) stay on the server.",
            color_scheme="gray",
        ),
        rx.cond(
            ~McpState.form_open,
            rx.button(
                rx.icon("plus", size=16),
                "Add MCP server",
                on_click=McpState.new,
                custom_attrs=tid("mcp-new"),
            ),
        ),
        rx.cond(McpState.form_open, mcp_form()),
        rx.foreach(McpState.servers, mcp_row),
        rx.cond(
            McpState.loaded & (McpState.servers.length() == 0) & ~McpState.form_open,
            rx.text("No MCP server yet.", color_scheme="gray", custom_attrs=tid("mcp-empty")),
        ),
        spacing="3",
        width="100%",
    )


def tools_page() -> rx.Component:
    return app_frame(
        rx.scroll_area(
            rx.vstack(
                settings_nav(routes.SETTINGS_TOOLS),
                rx.heading("Tools", size="6"),
                rx.cond(
                    McpState.forbidden,
                    rx.callout(
                        "Administrators only.",
                        color_scheme="gray",
                        custom_attrs=tid("mcp-forbidden"),
                    ),
                    _servers(),
                ),
                class_name="settings-column",
                spacing="4",
            ),
            flex="1",
        ),
    )

"""Settings → Tools' form (state/mcp.py): add or change an MCP server; a refusal shows under
its field and the form keeps what was typed; Test shows the tools it offers or why not."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.state.mcp import PROFILE_CHOICES, McpState
from agent_chat.state.mcp_form import TOOLS_ALL, TOOLS_EXCEPT, TOOLS_ONLY

NOT_LIVE = ~rx.State.is_hydrated  # the prerendered page shows the form before its scripts run
FORM = McpState.form
STDIO = FORM.get("transport", "stdio") != "http"


def _error(name: str) -> rx.Component:
    message = McpState.field_errors.get(name, "")
    return rx.cond(
        message != "",
        rx.text(
            message,
            size="1",
            color_scheme="red",
            role="alert",
            custom_attrs=tid(f"mcp-{name}-error"),
        ),
    )


def _field(label: str, name: str, box: rx.Component, hint: str = "") -> rx.Component:
    return rx.vstack(
        rx.text(label, size="2", weight="medium"),
        box,
        _error(name),
        rx.cond(hint != "", rx.text(hint, size="1", color_scheme="gray")),
        spacing="1",
        width="100%",
    )


def _input(name: str, **props) -> rx.Component:
    return rx.input(
        value=FORM.get(name, ""),
        on_change=lambda v: McpState.set_field(name, v),
        disabled=NOT_LIVE,
        custom_attrs=tid(f"mcp-{name}"),
        width="100%",
        **props,
    )


def _lines(name: str, placeholder: str) -> rx.Component:
    return rx.text_area(
        value=FORM.get(name, ""),
        on_change=lambda v: McpState.set_field(name, v),
        placeholder=placeholder,
        rows="3",
        disabled=NOT_LIVE,
        width="100%",
        font_family="var(--code-font-family)",
        custom_attrs=tid(f"mcp-{name}"),
    )


def _check(name: str, label: str) -> rx.Component:
    return rx.text(
        rx.flex(
            rx.checkbox(
                checked=FORM.get(name, "") != "",
                on_change=lambda v: McpState.set_field(name, v),
                disabled=NOT_LIVE,
                custom_attrs=tid(f"mcp-{name}"),
            ),
            label,
            spacing="2",
            align="center",
        ),
        as_="label",
        size="2",
    )


def _transport() -> rx.Component:
    return rx.select.root(
        rx.select.trigger(custom_attrs=tid("mcp-transport"), aria_label="Transport"),
        rx.select.content(
            rx.select.item("Command on this machine (stdio)", value="stdio"),
            rx.select.item("Remote server (streamable HTTP)", value="http"),
        ),
        value=FORM.get("transport", "stdio"),
        on_change=lambda v: McpState.set_field("transport", v),
        disabled=NOT_LIVE,
    )


def _tools() -> rx.Component:
    return rx.flex(
        rx.select.root(
            rx.select.trigger(custom_attrs=tid("mcp-tools-mode"), aria_label="Which tools"),
            rx.select.content(
                rx.select.item("All its tools", value=TOOLS_ALL),
                rx.select.item("Only these tools", value=TOOLS_ONLY),
                rx.select.item("All but these tools", value=TOOLS_EXCEPT),
            ),
            value=FORM.get("tools_mode", TOOLS_ALL),
            on_change=lambda v: McpState.set_field("tools_mode", v),
            disabled=NOT_LIVE,
        ),
        rx.cond(
            FORM.get("tools_mode", TOOLS_ALL) != TOOLS_ALL,
            _input("tools", placeholder="tool names, e.g. get_current_time, convert_time"),
        ),
        spacing="2",
        direction="column",
        width="100%",
    )


def _profiles() -> rx.Component:
    chosen = FORM.get("profiles", "")
    return rx.flex(
        *[
            rx.text(
                rx.flex(
                    rx.checkbox(
                        checked=chosen.contains(value),
                        on_change=lambda on, v=value: McpState.toggle_profile(v, on),
                        disabled=NOT_LIVE,
                        custom_attrs=tid(f"mcp-profile-{value}"),
                    ),
                    label,
                    spacing="2",
                    align="center",
                ),
                as_="label",
                size="2",
            )
            for value, label in PROFILE_CHOICES
        ],
        spacing="4",
        wrap="wrap",
    )


def test_result() -> rx.Component:
    """What the last Test found (`data-ok` true or false)."""
    return rx.cond(
        McpState.testing,
        rx.hstack(rx.spinner(size="1"), rx.text("Connecting…", size="2"), align="center"),
        rx.cond(
            (McpState.test_error != "") | McpState.test_ok,  # "Connected: 0 tools" too
            rx.callout.root(
                rx.callout.text(
                    rx.cond(
                        McpState.test_ok,
                        rx.fragment(
                            rx.text(
                                "Connected: ",
                                McpState.test_tools.length(),
                                " tools",
                                weight="medium",
                            ),
                            rx.foreach(
                                McpState.test_tools,
                                lambda t: rx.text(
                                    rx.code(t["name"]),
                                    " ",
                                    t["description"],
                                    size="1",
                                    custom_attrs=tid("mcp-test-tool"),
                                ),
                            ),
                        ),
                        rx.text(McpState.test_error, white_space="pre-wrap", size="2"),
                    ),
                ),
                color_scheme=rx.cond(McpState.test_ok, "green", "red"),
                role="status",
                width="100%",
                custom_attrs={"data-testid": "mcp-test-result", "data-ok": McpState.test_ok},
            ),
        ),
    )


def mcp_form() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.heading(
                rx.cond(McpState.editing_id == 0, "New MCP server", "Edit MCP server"), size="4"
            ),
            _field(
                "Name",
                "name",
                _input("name", placeholder="e.g. time"),
                "Lower-case letters, digits, - and _; its tools are named mcp__<name>__<tool>.",
            ),
            _field("Transport", "transport", _transport()),
            rx.cond(
                STDIO,
                rx.fragment(
                    _field(
                        "Command",
                        "command",
                        _input("command", placeholder="uvx mcp-server-time"),
                        "Run by each agent service, as its own user.",
                    ),
                    _field(
                        "Environment",
                        "env",
                        _lines("env", "NAME=value, one a line"),
                        "Secrets stay on the server: a stored value shows as NAME= "
                        "(leave it so to keep it; delete the line to remove it).",
                    ),
                ),
                rx.fragment(
                    _field(
                        "URL", "url", _input("url", placeholder="https://tools.example.com/mcp")
                    ),
                    _field(
                        "Bearer token",
                        "bearer",
                        _input(
                            "bearer",
                            type="password",
                            auto_complete="off",
                            placeholder=rx.cond(
                                FORM.get("bearer_stored", "") != "",
                                "stored: leave empty to keep it",
                                "none",
                            ),
                        ),
                    ),
                    _field("Headers", "headers", _lines("headers", "Name=value, one a line")),
                ),
            ),
            _field("Tools", "tools", _tools()),
            _field(
                "Profiles",
                "profiles",
                _profiles(),
                "Which tool profiles' conversations get it (none ticked: all).",
            ),
            _check("ask", "Ask before each call (like a dangerous command)"),
            _check("enabled", "Enabled"),
            _field("Call timeout (seconds)", "timeout", _input("timeout", type="number")),
            rx.cond(
                McpState.form_error != "",
                rx.text(
                    McpState.form_error,
                    color_scheme="red",
                    size="2",
                    role="alert",
                    custom_attrs=tid("mcp-form-error"),
                ),
            ),
            rx.cond(McpState.test_for == "form", test_result()),
            rx.hstack(
                rx.button(
                    "Save", on_click=McpState.save, disabled=NOT_LIVE, custom_attrs=tid("mcp-save")
                ),
                rx.button(
                    "Test",
                    variant="soft",
                    on_click=McpState.test_form,
                    loading=McpState.testing,
                    disabled=NOT_LIVE,
                    custom_attrs=tid("mcp-test"),
                ),
                rx.button(
                    "Cancel",
                    variant="soft",
                    color_scheme="gray",
                    on_click=McpState.cancel,
                    custom_attrs=tid("mcp-cancel"),
                ),
                spacing="2",
            ),
            spacing="3",
            width="100%",
        ),
        width="100%",
        custom_attrs=tid("mcp-form"),
    )

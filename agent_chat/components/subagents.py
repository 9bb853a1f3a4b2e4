"""Child agents' cards under their delegate_task call (display/subagent_rows.py shapes them):
goal, live status line, current tool, tool history, TODO list, summary or error, tokens.
Cards sit side by side while there is room (about 280 px each) and stack on a phone."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.components.tool_view import tool_name
from agent_chat.display.subagent_rows import SubagentRow, SubTodoRow, SubToolRow

_STATUS_COLOR = {"running": "blue", "completed": "green", "failed": "red", "stopped": "gray"}
_TODO_MARK = {"completed": "✓", "in_progress": "›", "cancelled": "×"}


def _tool(tool: SubToolRow) -> rx.Component:
    mark = rx.match(
        tool["state"],
        ("error", rx.icon("circle-x", size=12, color=rx.color("red", 10))),
        ("ok", rx.icon("circle-check", size=12, color=rx.color("green", 10))),
        rx.spinner(size="1"),
    )
    return rx.hstack(
        mark,
        tool_name(tool["name"], tool["server"], size="1"),
        rx.text(tool["label"], size="1", color_scheme="gray", class_name="sa-label"),
        rx.text(tool["duration"], size="1", color_scheme="gray"),
        align="center",
        spacing="1",
        class_name="sa-tool",
        custom_attrs={"data-testid": "subagent-tool", "data-tool": tool["tool"]},
    )


def _todo(todo: SubTodoRow) -> rx.Component:
    return rx.text(
        rx.match(todo["status"], *_TODO_MARK.items(), "○"),
        " ",
        todo["content"],
        size="1",
        custom_attrs={"data-testid": "subagent-todo", "data-status": todo["status"]},
    )


def _current(row: rx.Var) -> rx.Component:
    return rx.cond(
        row["current"] != "",
        rx.hstack(
            rx.spinner(size="1"),
            tool_name(row["current"], row["current_server"], size="1"),
            rx.text(row["current_label"], size="1", color_scheme="gray", class_name="sa-label"),
            align="center",
            spacing="1",
            custom_attrs=tid("subagent-current"),
        ),
    )


def subagent_card(row: SubagentRow) -> rx.Component:
    status = row["status"]
    return rx.vstack(
        rx.hstack(
            rx.badge(
                status,
                color_scheme=rx.match(status, *_STATUS_COLOR.items(), "gray"),
                size="1",
                custom_attrs=tid("subagent-state"),
            ),
            rx.text(row["seconds"], size="1", color_scheme="gray"),
            rx.spacer(),
            rx.text(
                row["usage"], size="1", color_scheme="gray", custom_attrs=tid("subagent-usage")
            ),
            align="center",
            spacing="2",
            width="100%",
        ),
        rx.text(
            row["goal"],
            size="2",
            weight="medium",
            class_name="sa-goal",
            custom_attrs=tid("subagent-goal"),
        ),
        rx.cond(
            row["line"] != "",
            rx.text(
                row["line"], size="1", color_scheme="gray", custom_attrs=tid("subagent-status")
            ),
        ),
        _current(row),
        rx.cond(
            row["todos"].length() > 0,
            rx.vstack(rx.foreach(row["todos"], _todo), spacing="0", width="100%"),
        ),
        rx.cond(
            row["tools"].length() > 0,
            rx.el.details(
                rx.el.summary(
                    rx.text(
                        "Tools (",
                        row["tools"].length() + row["earlier"],
                        ")",
                        size="1",
                        as_="span",
                        color_scheme="gray",
                    ),
                ),
                rx.cond(
                    row["earlier"] > 0,
                    rx.text("… ", row["earlier"], " earlier", size="1", color_scheme="gray"),
                ),
                rx.vstack(rx.foreach(row["tools"], _tool), spacing="0", width="100%"),
                open=status == "running",
                custom_attrs=tid("subagent-tools"),
            ),
        ),
        rx.cond(
            row["summary"] != "",
            rx.text(
                row["summary"],
                size="1",
                white_space="pre-wrap",
                class_name="sa-summary",
                custom_attrs=tid("subagent-summary"),
            ),
        ),
        rx.cond(
            row["error"] != "",
            rx.text(row["error"], size="1", color_scheme="red", custom_attrs=tid("subagent-error")),
        ),
        spacing="1",
        padding="8px",
        border=f"1px solid {rx.color('gray', 6)}",
        border_radius="8px",
        flex="1 1 260px",
        min_width="0",
        max_width="100%",
        overflow_wrap="anywhere",
        custom_attrs={
            "data-testid": "subagent-card",
            "data-status": status,
            "data-subagent": row["id"],
        },
    )


def subagent_cards(children: rx.Var) -> rx.Component:
    """The cards of one delegate_task call, side by side while they fit."""
    return rx.cond(
        children.length() > 0,
        rx.flex(
            rx.foreach(children, subagent_card),
            wrap="wrap",
            gap="8px",
            width="100%",
            custom_attrs=tid("subagent-cards"),
        ),
    )


def folded_subagents(children: rx.Var, line: rx.Var) -> rx.Component:
    """A finished delegate_task call's children: one line that unfolds to the cards."""
    return rx.cond(
        children.length() > 0,
        rx.el.details(
            rx.el.summary(
                rx.text(
                    line,
                    size="1",
                    color_scheme="gray",
                    as_="span",
                    custom_attrs=tid("subagents-fold"),
                ),
            ),
            subagent_cards(children),
            class_name="subagents-fold",
            width="100%",
        ),
    )

"""Child agents' cards under their delegate_task call (display/subagent_rows.py shapes them):
goal, live status line, current tool, tool history, TODO list, summary or error, tokens.
Cards sit side by side while there is room (about 280 px each) and stack on a phone."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.components.tool_view import tool_name
from agent_chat.display.subagent_rows import SubagentRow, SubTodoRow, SubToolRow

_STATUS_COLOR = {
    "running": "blue",
    "waiting": "amber",
    "completed": "green",
    "failed": "red",
    "stopped": "gray",
}
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
    """`row`: a SubLine's fields (a finished card's own row has them too)."""
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


def subagent_card(
    row: SubagentRow,
    line: rx.Var | None = None,
    tools: rx.Var | None = None,
    todos: rx.Var | None = None,
) -> rx.Component:
    """A card; a live one takes its changing parts from their own vars (`line`: its SubLine
    with the usage,
    `tools`: its SubTools, `todos`), a finished one from its row."""
    status = row["status"]
    line = row if line is None else line
    tools = row if tools is None else tools
    todos = row["todos"] if todos is None else todos
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
                line["usage"], size="1", color_scheme="gray", custom_attrs=tid("subagent-usage")
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
            line["line"] != "",
            rx.text(
                line["line"], size="1", color_scheme="gray", custom_attrs=tid("subagent-status")
            ),
        ),
        _current(line),
        rx.cond(
            todos.length() > 0,
            rx.vstack(rx.foreach(todos, _todo), spacing="0", width="100%"),
        ),
        rx.cond(
            tools["tools"].length() > 0,
            rx.el.details(
                rx.el.summary(
                    rx.text(
                        "Tools (",
                        tools["tools"].length() + tools["earlier"],
                        ")",
                        size="1",
                        as_="span",
                        color_scheme="gray",
                    ),
                ),
                rx.cond(
                    tools["earlier"] > 0,
                    rx.text("… ", tools["earlier"], " earlier", size="1", color_scheme="gray"),
                ),
                rx.vstack(rx.foreach(tools["tools"], _tool), spacing="0", width="100%"),
                open=(status == "running") | (status == "waiting"),
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


def _cards(children: rx.Var, card) -> rx.Component:
    return rx.cond(
        children.length() > 0,
        rx.flex(
            rx.foreach(children, card),
            wrap="wrap",
            gap="8px",
            width="100%",
            custom_attrs=tid("subagent-cards"),
        ),
    )


def subagent_cards(children: rx.Var) -> rx.Component:
    """A finished delegate_task call's cards, side by side while they fit."""
    return _cards(children, lambda row: subagent_card(row))


def live_subagent_cards(children: rx.Var, lines: rx.Var, tools: rx.Var, todos: rx.Var):
    """The running call's cards: `children` (the parts that change at a child's start and
    end) with each child's line, calls and TODOs from the vars of the same order."""
    return _cards(
        children,
        lambda row, i: subagent_card(row, lines[i], tools[i], todos[i]),
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

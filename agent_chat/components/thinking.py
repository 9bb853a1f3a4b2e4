"""The five-area thinking panel: ① thinking stream, ② live status, ③ current
tool and tool history, ④ TODO list; ⑤ AskFor lives in askfor.py."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.components.stream_text import stream_text
from agent_chat.components.subagents import folded_subagents, live_subagent_cards
from agent_chat.components.tool_view import (
    labelled_code,
    summary_exit,
    tool_body,
    tool_label,
    tool_name,
)
from agent_chat.display.rows import AnswerRow, TodoRow, ToolRow
from agent_chat.state.live import LiveState

_TODO_ICONS = {
    "completed": ("circle-check", "green"),
    "in_progress": ("loader-circle", "blue"),
    "pending": ("circle", "gray"),
    "cancelled": ("circle-x", "gray"),
}


def todo_item(todo: TodoRow) -> rx.Component:
    def icon(name: str, color: str) -> rx.Component:
        return rx.icon(name, size=15, color=rx.color(color, 10), class_name=f"todo-icon-{name}")

    return rx.hstack(
        rx.match(
            todo["status"],
            *[(status, icon(name, color)) for status, (name, color) in _TODO_ICONS.items()],
            icon("circle", "gray"),
        ),
        rx.text(todo["content"], size="2", class_name="todo-text"),
        align="center",
        spacing="2",
        class_name="todo-item",
        custom_attrs={"data-testid": "todo-item", "data-status": todo["status"]},
    )


def todo_list(todos: rx.Var) -> rx.Component:
    return rx.cond(
        todos.length() > 0,
        rx.vstack(
            rx.text("Tasks", size="1", weight="bold", color_scheme="gray"),
            rx.foreach(todos, todo_item),
            spacing="1",
            class_name="panel-block",
        ),
    )


def _generic(tool: ToolRow | rx.Var) -> rx.Component:
    return rx.vstack(
        labelled_code("Arguments", tool["args"]),
        labelled_code("Result", tool["result"]),
        spacing="2",
        width="100%",
    )


def tool_history_item(tool: ToolRow) -> rx.Component:
    status_icon = rx.cond(
        tool["done"],
        rx.cond(
            tool["is_error"],
            rx.icon("circle-x", size=14, color=rx.color("red", 10)),
            rx.icon("circle-check", size=14, color=rx.color("green", 10)),
        ),
        rx.spinner(size="1"),
    )
    view = tool["view"]
    item = rx.el.details(
        rx.el.summary(
            rx.hstack(
                status_icon,
                tool_name(tool["name"], tool["server"]),
                tool_label(view),
                summary_exit(view),
                rx.text(tool["duration"], size="1", color_scheme="gray", class_name="tv-time"),
                align="center",
                spacing="2",
                class_name="tv-summary",
            ),
        ),
        tool_body(view, _generic(tool)),
        class_name="tool-item",
        custom_attrs={"data-testid": "tool-history-item", "data-tool": tool["tool"]},
    )
    # A delegate_task call's child agents: one line under it that unfolds to their cards.
    return rx.fragment(item, folded_subagents(tool["children"], tool["fold"]))


def tool_history(tools: rx.Var, open_: bool | rx.Var = False) -> rx.Component:
    return rx.cond(
        tools.length() > 0,
        rx.el.details(
            rx.el.summary(
                rx.text(
                    "Tools used (",
                    tools.length(),
                    ")",
                    size="1",
                    weight="bold",
                    color_scheme="gray",
                    as_="span",
                ),
            ),
            rx.vstack(rx.foreach(tools, tool_history_item), spacing="1", padding_top="4px"),
            open=open_,
            class_name="panel-block",
        ),
    )


def thinking_stream(text: rx.Var, open_: bool | rx.Var = False) -> rx.Component:
    return rx.cond(
        text != "",
        rx.el.details(
            rx.el.summary(
                rx.text("Thinking", size="1", weight="bold", color_scheme="gray", as_="span")
            ),
            rx.auto_scroll(
                rx.text(text, size="2", white_space="pre-wrap", color_scheme="gray"),
                class_name="thinking-scroll",
                custom_attrs=tid("thinking-stream"),
            ),
            open=open_,
            class_name="panel-block",
        ),
    )


def live_thinking_stream() -> rx.Component:
    """① while the run goes: open, scrolled to its end, fed with deltas."""
    return rx.el.details(
        rx.el.summary(
            rx.text("Thinking", size="1", weight="bold", color_scheme="gray", as_="span")
        ),
        rx.auto_scroll(
            stream_text(
                stream_id=LiveState.thinking_stream,
                text="",
                markdown=False,
                class_name="thinking-text",
            ),
            class_name="thinking-scroll",
            custom_attrs=tid("thinking-stream"),
        ),
        open=True,
        class_name="panel-block live-thinking",
    )


def live_status(text: rx.Var) -> rx.Component:
    """② the accent dot and what the agent does now. The dot pulses only until the run's
    first words arrive; from then on it is static and the streaming text is the sign of life
    (assets/styles.css, "Running markers": an animation costs a frame's work 60 times a second
    while the answer streams)."""
    return rx.hstack(
        rx.box(class_name="pulse-dot", custom_attrs=tid("live-dot")),
        rx.text(
            rx.cond(text != "", text, "Thinking…"),
            size="2",
            color_scheme="gray",
            custom_attrs=tid("live-status"),
        ),
        align="center",
        spacing="2",
    )


def current_tool(tool: rx.Var) -> rx.Component:
    """③ the tool running now: its name, what it works on, and what it is about to do."""
    row = tool.to(ToolRow)
    return rx.cond(
        tool,
        rx.vstack(
            rx.hstack(
                rx.spinner(size="2"),
                rx.text("Running ", size="2", class_name="tv-running"),
                tool_name(row["name"], row["server"]),
                # A console or code block below shows the command whole.
                rx.cond(
                    (row["view"]["kind"] != "terminal") & (row["view"]["kind"] != "code"),
                    tool_label(row["view"]),
                ),
                align="center",
                spacing="2",
                class_name="tv-summary",
            ),
            rx.cond(
                row["progress"] != "",
                rx.text(row["progress"], size="1", color_scheme="gray"),
            ),
            rx.cond(row["view"]["kind"] != "generic", tool_body(row["view"], rx.fragment())),
            # The running delegate_task call's child agents, live (display/feed.py).
            live_subagent_cards(
                LiveState.subagents,
                LiveState.subagent_lines,
                LiveState.subagent_tools,
                LiveState.subagent_todos,
            ),
            spacing="1",
            width="100%",
            class_name="current-tool",
            custom_attrs=tid("current-tool"),
        ),
    )


def answered_questions(answers: rx.Var) -> rx.Component:
    def item(qa: AnswerRow) -> rx.Component:
        return rx.text(
            rx.text.strong("Asked: "),
            qa["question"],
            " — ",
            rx.text.strong("Answer: "),
            qa["answer"],
            size="2",
        )

    return rx.cond(
        answers.length() > 0,
        rx.vstack(rx.foreach(answers, item), spacing="1", class_name="panel-block"),
    )

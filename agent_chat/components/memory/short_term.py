"""The Short-term tab: the newest tool calls on the active branch."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.components.memory.parts import chevron, empty, hint
from agent_chat.components.thinking import labelled_code
from agent_chat.state.memory import MemoryState, ShortTermRow


def tool_item(row: ShortTermRow) -> rx.Component:
    """A tool call, folded to its name, duration and outcome."""
    outcome = rx.cond(
        row["done"],
        rx.cond(
            row["is_error"],
            rx.badge("error", color_scheme="red", size="1"),
            rx.icon("circle-check", size=14, class_name="memory-tool-ok"),
        ),
        rx.badge("running", color_scheme="blue", size="1"),
    )
    return rx.el.details(
        rx.el.summary(
            rx.hstack(
                chevron(),
                outcome,
                rx.code(row["tool"], variant="ghost", size="2"),
                rx.text(row["duration"], size="1", color_scheme="gray"),
                rx.spacer(),
                rx.text(row["when"], size="1", color_scheme="gray"),
                align="center",
                spacing="2",
                width="100%",
            ),
            class_name="memory-fold-head",
        ),
        rx.vstack(
            labelled_code("Arguments", row["args"]),
            labelled_code("Result", row["result"]),
            spacing="2",
            class_name="memory-tool-body",
        ),
        width="100%",
        class_name="memory-fold memory-tool-item",
        custom_attrs={
            "data-testid": "memory-tool-item",
            "data-tool": row["tool"],
            "data-error": row["is_error"].to_string(),
        },
    )


def short_term_view() -> rx.Component:
    """The newest tool calls on the active branch."""
    return rx.vstack(
        hint("The newest tool calls on this branch (at most 20), newest first."),
        rx.cond(
            MemoryState.short_term.length() == 0,
            empty("No tool calls on this branch yet."),
            rx.vstack(rx.foreach(MemoryState.short_term, tool_item), spacing="0", width="100%"),
        ),
        spacing="3",
        width="100%",
        custom_attrs=tid("memory-short-term"),
    )

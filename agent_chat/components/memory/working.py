"""The Working tab: the messages the next run sends, with a token estimate."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.components.memory.parts import chevron, empty, hint
from agent_chat.state.memory import MemoryState, WorkingRow


def _role_badge(role: rx.Var) -> rx.Component:
    return rx.badge(
        role,
        color_scheme=rx.cond(role == "user", "violet", "gray"),
        variant="soft",
        size="1",
        class_name="memory-role",
    )


def working_item(row: WorkingRow) -> rx.Component:
    """One message the next run sends; a long one folded to its first line."""
    return rx.hstack(
        _role_badge(row["role"]),
        rx.cond(
            row["folded"],
            rx.el.details(
                rx.el.summary(
                    rx.hstack(
                        chevron(),
                        rx.text(
                            row["preview"],
                            " ",
                            rx.text(
                                row["chars"], " chars", size="1", color_scheme="gray", as_="span"
                            ),
                            size="2",
                            class_name="memory-text",
                        ),
                        align="start",
                        spacing="1",
                    ),
                    class_name="memory-fold-head",
                ),
                rx.el.pre(row["content"], class_name="tool-code memory-fold-body"),
                class_name="memory-fold memory-grow",
            ),
            rx.text(row["content"], size="2", class_name="memory-text memory-grow"),
        ),
        align="start",
        spacing="2",
        width="100%",
        class_name="memory-working-item",
        custom_attrs={"data-testid": "memory-working-item", "data-role": row["role"]},
    )


def working_view() -> rx.Component:
    """What the next run will send, with a token estimate."""
    return rx.vstack(
        rx.callout.root(
            rx.callout.text(
                rx.text.strong(MemoryState.working_count, " messages"),
                ", about ",
                rx.text.strong(MemoryState.working_tokens, " tokens"),
                " (",
                MemoryState.working_chars,
                " characters ÷ ",
                MemoryState.chars_per_token,
                ", an estimate; the system prompt, skill and tool definitions come on top).",
            ),
            size="1",
            variant="surface",
            width="100%",
            custom_attrs=tid("memory-token-estimate"),
        ),
        rx.cond(
            MemoryState.working_hidden > 0,
            hint(MemoryState.working_hidden, " older messages are sent too but not listed here."),
        ),
        rx.cond(
            MemoryState.working_count == 0,
            empty("Nothing yet: the next run starts from an empty context."),
            rx.vstack(rx.foreach(MemoryState.working, working_item), spacing="0", width="100%"),
        ),
        spacing="3",
        width="100%",
        custom_attrs=tid("memory-working"),
    )

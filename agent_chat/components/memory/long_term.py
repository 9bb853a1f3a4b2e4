"""The Long-term tab: the signed-in person's MEMORY.md and USER.md, shared by their
conversations, editable."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.components.memory.parts import hint
from agent_chat.state.memory import MemoryState


def _counter(length: rx.Var, limit: rx.Var, over: rx.Var, test_id: str) -> rx.Component:
    return rx.text(
        length,
        " / ",
        limit,
        " characters",
        size="1",
        color_scheme=rx.cond(over, "red", "gray"),
        weight=rx.cond(over, "bold", "regular"),
        custom_attrs=tid(test_id),
    )


def _memory_field(
    label: str, note: str, name: str, value: rx.Var, on_change, counter: rx.Component
) -> rx.Component:
    """One long-term file: its label, a text area and a counter against hermes' limit."""
    return rx.vstack(
        rx.hstack(
            rx.text(label, size="2", weight="bold"),
            rx.spacer(),
            counter,
            align="baseline",
            width="100%",
        ),
        hint(note),
        rx.text_area(
            name=name,
            value=value,
            on_change=on_change,
            rows="6",
            resize="vertical",
            width="100%",
            disabled=~MemoryState.long_term_loaded,
            custom_attrs=tid(f"memory-text-{name}"),
        ),
        spacing="1",
        width="100%",
    )


def _save_message() -> rx.Component:
    return rx.cond(
        MemoryState.save_message != "",
        rx.callout.root(
            rx.callout.icon(
                rx.cond(MemoryState.save_ok, rx.icon("check"), rx.icon("triangle-alert"))
            ),
            rx.callout.text(MemoryState.save_message),
            color_scheme=rx.cond(MemoryState.save_ok, "green", "red"),
            size="1",
            width="100%",
            role=rx.cond(MemoryState.save_ok, "status", "alert"),
            custom_attrs=tid("memory-save-message"),
        ),
    )


def long_term_view() -> rx.Component:
    """MEMORY.md and USER.md, editable, saved through the agent service."""
    return rx.vstack(
        hint(
            "Yours: shared by every conversation of yours, never shown to anyone else. Hermes "
            "reads these files when an agent starts and may add to them itself. Entries are "
            "separated by a line holding only §."
        ),
        rx.cond(
            MemoryState.long_term_error != "",
            rx.callout.root(
                rx.callout.icon(rx.icon("plug-zap")),
                rx.callout.text(MemoryState.long_term_error),
                color_scheme="amber",
                size="1",
                width="100%",
                custom_attrs=tid("memory-long-term-error"),
            ),
        ),
        rx.form(
            rx.vstack(
                _memory_field(
                    "MEMORY.md",
                    "The agent's notes: facts, conventions, lessons learned.",
                    "memory",
                    MemoryState.memory_text,
                    MemoryState.set_memory_text,
                    _counter(
                        MemoryState.memory_text.length(),
                        MemoryState.memory_limit,
                        MemoryState.memory_over,
                        "memory-count-memory",
                    ),
                ),
                _memory_field(
                    "USER.md",
                    "What the agent knows about you: preferences, background.",
                    "user",
                    MemoryState.user_text,
                    MemoryState.set_user_text,
                    _counter(
                        MemoryState.user_text.length(),
                        MemoryState.user_limit,
                        MemoryState.user_over,
                        "memory-count-user",
                    ),
                ),
                _save_message(),
                rx.hstack(
                    rx.cond(
                        MemoryState.has_edits,
                        rx.button(
                            "Discard changes",
                            type="button",
                            variant="soft",
                            color_scheme="gray",
                            on_click=MemoryState.discard_edits,
                            custom_attrs=tid("memory-discard"),
                        ),
                    ),
                    rx.button(
                        rx.cond(MemoryState.saving, rx.spinner(size="1"), rx.icon("save", size=14)),
                        "Save",
                        type="submit",
                        disabled=~MemoryState.long_term_loaded | MemoryState.saving,
                        custom_attrs=tid("memory-save"),
                    ),
                    justify="end",
                    spacing="2",
                    width="100%",
                ),
                spacing="3",
                width="100%",
            ),
            on_submit=MemoryState.save_long_term,
            reset_on_submit=False,
            width="100%",
        ),
        spacing="3",
        width="100%",
        custom_attrs=tid("memory-long-term"),
    )

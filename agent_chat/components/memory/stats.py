"""The statistics band above the tabs: messages, tokens and compressions."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.state.memory import MemoryState


def _stat(label: str, value: rx.Var | str | rx.Component, test_id: str, hint: str) -> rx.Component:
    """One figure of the statistics row; `hint` explains it on hover."""
    return rx.vstack(
        rx.text(label, size="1", color_scheme="gray", class_name="memory-stat-label"),
        rx.text(value, size="2", weight="medium", custom_attrs=tid(test_id)),
        spacing="0",
        title=hint,
        class_name="memory-stat",
    )


def stats_panel() -> rx.Component:
    """Messages, tokens and compressions of the conversation."""
    return rx.vstack(
        rx.grid(
            _stat(
                "Messages",
                rx.text.span(MemoryState.stat_branch, " / ", MemoryState.stat_tree),
                "memory-stat-messages",
                "On the branch shown / in the whole tree, every version included",
            ),
            _stat(
                "Tokens used",
                MemoryState.stat_tokens,
                "memory-stat-tokens",
                "Total tokens the model reported for this conversation's answers",
            ),
            _stat(
                "Compressions",
                MemoryState.stat_compressions,
                "memory-stat-compressions",
                "How often Hermes summarised older messages to fit the context",
            ),
            columns="3",
            spacing="3",
            width="100%",
        ),
        rx.text(
            "Last compression: ",
            rx.text.span(
                rx.cond(
                    MemoryState.stat_last_compression != "",
                    MemoryState.stat_last_compression,
                    "never",
                ),
                custom_attrs=tid("memory-stat-last-compression"),
            ),
            size="1",
            color_scheme="gray",
        ),
        spacing="1",
        width="100%",
        class_name="memory-stats",
        custom_attrs=tid("memory-stats"),
    )

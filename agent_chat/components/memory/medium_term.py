"""The Medium-term tab: the summaries Hermes made of older messages, newest first."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import safe_markdown, tid
from agent_chat.components.memory.parts import empty
from agent_chat.state.memory import MemoryState, SummaryRow


def summary_item(row: SummaryRow) -> rx.Component:
    """One summary hermes made when the context grew too long."""
    return rx.vstack(
        rx.hstack(
            rx.icon("archive", size=14, class_name="memory-summary-icon"),
            rx.text(row["when"], size="1", color_scheme="gray"),
            align="center",
            spacing="2",
        ),
        # Summaries are markdown with headings: memory.css keeps them at text size.
        rx.box(safe_markdown(row["content"]), width="100%", class_name="memory-summary-text"),
        spacing="1",
        width="100%",
        class_name="memory-summary-card",
        custom_attrs=tid("memory-summary-item"),
    )


def medium_term_view() -> rx.Component:
    """The conversation's summaries, newest first."""
    return rx.vstack(
        rx.cond(
            MemoryState.summaries.length() == 0,
            empty(
                "No summaries yet: when the conversation grows past the model's context, "
                "Hermes summarises older messages."
            ),
            rx.vstack(rx.foreach(MemoryState.summaries, summary_item), spacing="2", width="100%"),
        ),
        spacing="3",
        width="100%",
        custom_attrs=tid("memory-summaries"),
    )

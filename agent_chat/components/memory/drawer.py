"""The drawer's frame: the header button, the sheet, its header and the tab bar."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import sheet_header, tid
from agent_chat.components.memory.long_term import long_term_view
from agent_chat.components.memory.medium_term import medium_term_view
from agent_chat.components.memory.short_term import short_term_view
from agent_chat.components.memory.stats import stats_panel
from agent_chat.components.memory.working import working_view
from agent_chat.state.chat import ChatState
from agent_chat.state.memory import MemoryState


def _tab(value: str, label: str, icon: str) -> rx.Component:
    return rx.tabs.trigger(
        rx.hstack(rx.icon(icon, size=13), label, spacing="1", align="center"),
        value=value,
        custom_attrs=tid(f"memory-tab-{value}"),
    )


def _tab_body(value: str, view: rx.Component) -> rx.Component:
    # Each tab scrolls on its own; the header, statistics and tab bar stay put.
    return rx.tabs.content(view, value=value, class_name="memory-tab-body")


def _drawer_header() -> rx.Component:
    return sheet_header(
        "brain",
        "Memory",
        rx.cond(MemoryState.loading, rx.spinner(size="1")),
        on_refresh=MemoryState.load,
        refresh_title="Refresh",
        name="memory",
        class_prefix="memory",
    )


def memory_sheet() -> rx.Component:
    """The drawer's content: header, statistics, and the four tabs."""
    # A radix dialog that memory.css pins to the right edge, full height.
    return rx.dialog.content(
        _drawer_header(),
        rx.dialog.description(
            "What the agent sees next, what it did lately, and what it keeps.",
            class_name="memory-description",
        ),
        rx.cond(
            MemoryState.load_error != "",
            rx.callout.root(
                rx.callout.text(MemoryState.load_error),
                color_scheme="red",
                size="1",
                class_name="memory-load-error",
            ),
        ),
        stats_panel(),
        rx.tabs.root(
            rx.tabs.list(
                _tab("working", "Working", "layers"),
                _tab("short", "Short-term", "wrench"),
                _tab("medium", "Medium-term", "archive"),
                _tab("long", "Long-term", "notebook-pen"),
                size="1",
                class_name="memory-tab-list",
            ),
            _tab_body("working", working_view()),
            _tab_body("short", short_term_view()),
            _tab_body("medium", medium_term_view()),
            _tab_body("long", long_term_view()),
            value=MemoryState.tab,
            on_change=MemoryState.set_tab,
            class_name="memory-tabs",
        ),
        class_name="memory-sheet",
        custom_attrs=tid("memory-drawer"),
    )


def memory_drawer() -> rx.Component:
    """The header's memory button and the drawer it opens (mount once in the chat header)."""
    return rx.cond(
        ChatState.current_uuid != "",
        rx.fragment(
            rx.tooltip(
                rx.icon_button(
                    rx.icon("brain", size=16),
                    variant="ghost",
                    color_scheme="gray",
                    on_click=MemoryState.open_drawer,
                    aria_label="Memory",
                    custom_attrs=tid("memory-button"),
                ),
                content="Memory",
            ),
            rx.dialog.root(
                memory_sheet(), open=MemoryState.open, on_open_change=MemoryState.set_open
            ),
        ),
    )

"""The memory drawer: what the agent remembers of the open conversation (seed 000 §5.8).

A right-hand sheet (a radix dialog placed at the edge) with the statistics on top and four
tabs: working memory, short-term (tool calls), medium-term (summaries), long-term
(MEMORY.md / USER.md, editable).
"""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import safe_markdown, tid
from agent_chat.components.thinking import labelled_code
from agent_chat.state.chat import ChatState
from agent_chat.state.memory import MemoryState, ShortTermRow, SummaryRow, WorkingRow

DRAWER_WIDTH = "460px"

_SHEET_STYLE = {
    "position": "fixed",
    "top": "0",
    "right": "0",
    "height": "100vh",
    "max_height": "100vh",
    "width": DRAWER_WIDTH,
    "max_width": "100vw",
    "border_radius": "0",
    "margin": "0",
    "padding": "0",
    "display": "flex",
    "flex_direction": "column",
    "overflow": "hidden",
}
_SCROLL_STYLE = {"flex": "1", "min_height": "0", "overflow_y": "auto", "padding": "12px 16px"}
_TEXT_STYLE = {"white_space": "pre-wrap", "overflow_wrap": "anywhere"}
# A <summary> without the browser's marker (a chevron that turns when open stands in for it).
_SUMMARY_STYLE = {
    "cursor": "pointer",
    "list_style": "none",
    "&::-webkit-details-marker": {"display": "none"},
}
# Summaries are markdown with headings: keep them at the size of the text around them.
_SUMMARY_TEXT_STYLE = {
    "font_size": "14px",
    "& h1, & h2, & h3, & h4": {"font_size": "14px", "font_weight": "600", "margin": "6px 0 2px"},
    "& p, & ul, & ol": {"margin": "2px 0"},
}
_DETAILS_STYLE = {"&[open] .memory-chevron": {"transform": "rotate(90deg)"}}


def _chevron() -> rx.Component:
    return rx.icon(
        "chevron-right",
        size=14,
        color=rx.color("gray", 9),
        flex_shrink="0",
        class_name="memory-chevron",
    )


def _empty(text: str, test_id: str = "memory-empty") -> rx.Component:
    """A quiet sentence in place of an empty list."""
    return rx.text(text, size="2", color_scheme="gray", custom_attrs=tid(test_id))


def _hint(*parts) -> rx.Component:
    return rx.text(*parts, size="1", color_scheme="gray")


# ---- statistics ---------------------------------------------------------------------------


def _stat(label: str, value: rx.Var | str | rx.Component, test_id: str, hint: str) -> rx.Component:
    """One figure of the statistics row; `hint` explains it on hover."""
    return rx.vstack(
        rx.text(label, size="1", color_scheme="gray", white_space="nowrap"),
        rx.text(value, size="2", weight="medium", custom_attrs=tid(test_id)),
        spacing="0",
        min_width="0",
        title=hint,
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
        padding="10px 16px",
        background=rx.color("gray", 2),
        border_top=f"1px solid {rx.color('gray', 4)}",
        border_bottom=f"1px solid {rx.color('gray', 4)}",
        custom_attrs=tid("memory-stats"),
    )


# ---- working memory -------------------------------------------------------------------------


def _role_badge(role: rx.Var) -> rx.Component:
    return rx.badge(
        role,
        color_scheme=rx.cond(role == "user", "violet", "gray"),
        variant="soft",
        size="1",
        min_width="64px",
        justify_content="center",
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
                        _chevron(),
                        rx.text(
                            row["preview"],
                            " ",
                            rx.text(
                                row["chars"], " chars", size="1", color_scheme="gray", as_="span"
                            ),
                            size="2",
                            style=_TEXT_STYLE,
                        ),
                        align="start",
                        spacing="1",
                    ),
                    style=_SUMMARY_STYLE,
                ),
                rx.el.pre(row["content"], class_name="tool-code", margin_top="4px"),
                style=_DETAILS_STYLE,
                flex="1",
                min_width="0",
            ),
            rx.text(row["content"], size="2", style=_TEXT_STYLE, flex="1", min_width="0"),
        ),
        align="start",
        spacing="2",
        width="100%",
        padding_y="4px",
        border_bottom=f"1px solid {rx.color('gray', 3)}",
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
            _hint(MemoryState.working_hidden, " older messages are sent too but not listed here."),
        ),
        rx.cond(
            MemoryState.working_count == 0,
            _empty("Nothing yet: the next run starts from an empty context."),
            rx.vstack(rx.foreach(MemoryState.working, working_item), spacing="0", width="100%"),
        ),
        spacing="3",
        width="100%",
        custom_attrs=tid("memory-working"),
    )


# ---- short-term -------------------------------------------------------------------------------


def tool_item(row: ShortTermRow) -> rx.Component:
    """A tool call, folded to its name, duration and outcome."""
    outcome = rx.cond(
        row["done"],
        rx.cond(
            row["is_error"],
            rx.badge("error", color_scheme="red", size="1"),
            rx.icon("circle-check", size=14, color=rx.color("green", 10)),
        ),
        rx.badge("running", color_scheme="blue", size="1"),
    )
    return rx.el.details(
        rx.el.summary(
            rx.hstack(
                _chevron(),
                outcome,
                rx.code(row["tool"], variant="ghost", size="2"),
                rx.text(row["duration"], size="1", color_scheme="gray"),
                rx.spacer(),
                rx.text(row["when"], size="1", color_scheme="gray"),
                align="center",
                spacing="2",
                width="100%",
            ),
            style=_SUMMARY_STYLE,
        ),
        rx.vstack(
            labelled_code("Arguments", row["args"]),
            labelled_code("Result", row["result"]),
            spacing="2",
            padding_top="6px",
        ),
        width="100%",
        padding_y="6px",
        border_bottom=f"1px solid {rx.color('gray', 3)}",
        style=_DETAILS_STYLE,
        custom_attrs={
            "data-testid": "memory-tool-item",
            "data-tool": row["tool"],
            "data-error": row["is_error"].to_string(),
        },
    )


def short_term_view() -> rx.Component:
    """The newest tool calls on the active branch."""
    return rx.vstack(
        _hint("The newest tool calls on this branch (at most 20), newest first."),
        rx.cond(
            MemoryState.short_term.length() == 0,
            _empty("No tool calls on this branch yet."),
            rx.vstack(rx.foreach(MemoryState.short_term, tool_item), spacing="0", width="100%"),
        ),
        spacing="3",
        width="100%",
        custom_attrs=tid("memory-short-term"),
    )


# ---- medium-term ------------------------------------------------------------------------------


def summary_item(row: SummaryRow) -> rx.Component:
    """One summary hermes made when the context grew too long."""
    return rx.vstack(
        rx.hstack(
            rx.icon("archive", size=14, color=rx.color("gray", 10)),
            rx.text(row["when"], size="1", color_scheme="gray"),
            align="center",
            spacing="2",
        ),
        rx.box(safe_markdown(row["content"]), width="100%", style=_SUMMARY_TEXT_STYLE),
        spacing="1",
        width="100%",
        padding="8px 10px",
        border_radius="8px",
        background=rx.color("gray", 2),
        custom_attrs=tid("memory-summary-item"),
    )


def medium_term_view() -> rx.Component:
    """The conversation's summaries, newest first."""
    return rx.vstack(
        rx.cond(
            MemoryState.summaries.length() == 0,
            _empty(
                "No summaries yet: when the conversation grows past the model's context, "
                "Hermes summarises older messages."
            ),
            rx.vstack(rx.foreach(MemoryState.summaries, summary_item), spacing="2", width="100%"),
        ),
        spacing="3",
        width="100%",
        custom_attrs=tid("memory-summaries"),
    )


# ---- long-term --------------------------------------------------------------------------------


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
    label: str, hint: str, name: str, value: rx.Var, on_change, counter: rx.Component
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
        _hint(hint),
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
        _hint(
            "Shared by every conversation. Hermes reads these files when an agent starts and "
            "may add to them itself. Entries are separated by a line holding only §."
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


# ---- the drawer -------------------------------------------------------------------------------


def _tab(value: str, label: str, icon: str) -> rx.Component:
    return rx.tabs.trigger(
        rx.hstack(rx.icon(icon, size=13), label, spacing="1", align="center"),
        value=value,
        custom_attrs=tid(f"memory-tab-{value}"),
    )


def _tab_body(value: str, view: rx.Component) -> rx.Component:
    return rx.tabs.content(view, value=value, style=_SCROLL_STYLE)


def _drawer_header() -> rx.Component:
    return rx.hstack(
        rx.icon("brain", size=18, color=rx.color("violet", 10)),
        rx.dialog.title("Memory", size="4", margin="0"),
        rx.cond(MemoryState.loading, rx.spinner(size="1")),
        rx.spacer(),
        rx.icon_button(
            rx.icon("refresh-cw", size=14),
            variant="ghost",
            color_scheme="gray",
            on_click=MemoryState.load,
            aria_label="Refresh",
            title="Refresh",
            custom_attrs=tid("memory-refresh"),
        ),
        rx.dialog.close(
            rx.icon_button(
                rx.icon("x", size=16),
                variant="ghost",
                color_scheme="gray",
                aria_label="Close",
                custom_attrs=tid("memory-close"),
            ),
        ),
        align="center",
        spacing="3",
        width="100%",
        padding="14px 16px 10px",
    )


def memory_sheet() -> rx.Component:
    """The drawer's content: header, statistics, and the four tabs."""
    return rx.dialog.content(
        _drawer_header(),
        rx.dialog.description(
            "What the agent sees next, what it did lately, and what it keeps.",
            font_size="13px",
            color=rx.color("gray", 11),
            padding="0 16px 10px",
            margin="0",
        ),
        rx.cond(
            MemoryState.load_error != "",
            rx.callout.root(
                rx.callout.text(MemoryState.load_error),
                color_scheme="red",
                size="1",
                margin="0 16px 10px",
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
                padding_x="8px",
            ),
            _tab_body("working", working_view()),
            _tab_body("short", short_term_view()),
            _tab_body("medium", medium_term_view()),
            _tab_body("long", long_term_view()),
            value=MemoryState.tab,
            on_change=MemoryState.set_tab,
            display="flex",
            flex_direction="column",
            flex="1",
            min_height="0",
        ),
        style=_SHEET_STYLE,
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

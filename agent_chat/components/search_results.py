"""The sidebar's search results: title, snippet with the matched words in <mark>, date.

The snippet arrives as text segments (db/search_text.py) and each becomes a text node, so
nothing of a message is ever read as HTML; only the <mark> elements are ours.
"""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.display.rows import SearchHitRow, SegmentRow
from agent_chat.state.search import SearchState


def _segment(segment: SegmentRow) -> rx.Component:
    return rx.cond(segment["mark"], rx.el.mark(segment["text"]), rx.el.span(segment["text"]))


def result_item(hit: SearchHitRow) -> rx.Component:
    return rx.el.button(
        rx.hstack(
            rx.text(
                rx.foreach(hit["title"], _segment),
                size="2",
                weight="medium",
                flex="1",
                min_width="0",
                class_name="search-result-title",
                custom_attrs=tid("search-result-title"),
            ),
            rx.cond(
                hit["archived"],
                rx.badge("Archived", size="1", color_scheme="gray", variant="soft"),
            ),
            rx.text(hit["date"], size="1", color_scheme="gray", white_space="nowrap"),
            align="center",
            spacing="2",
            width="100%",
        ),
        rx.text(
            rx.foreach(hit["snippet"], _segment),
            size="1",
            color_scheme="gray",
            class_name="search-snippet",
            custom_attrs=tid("search-snippet"),
        ),
        type="button",
        class_name="search-result",
        on_click=SearchState.open_result(hit["uuid"], hit["message_id"]),
        custom_attrs={"data-testid": "search-result", "data-session-id": hit["uuid"]},
    )


def search_results() -> rx.Component:
    return rx.vstack(
        rx.foreach(SearchState.results, result_item),
        rx.cond(
            SearchState.results.length() == 0,
            rx.text(
                "No conversation matches.",
                size="2",
                color_scheme="gray",
                custom_attrs=tid("search-empty"),
            ),
        ),
        spacing="1",
        width="100%",
        custom_attrs=tid("search-results"),
    )

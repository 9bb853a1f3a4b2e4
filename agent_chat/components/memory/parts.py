"""Small pieces the drawer's tabs share."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid


def chevron() -> rx.Component:
    """Stands in for a <summary>'s browser marker; memory.css turns it when the fold opens."""
    return rx.icon("chevron-right", size=14, class_name="memory-chevron")


def empty(text: str, test_id: str = "memory-empty") -> rx.Component:
    """A quiet sentence in place of an empty list."""
    return rx.text(text, size="2", color_scheme="gray", custom_attrs=tid(test_id))


def hint(*parts) -> rx.Component:
    return rx.text(*parts, size="1", color_scheme="gray")

"""One thing a person can revoke (a share link, an API token): what it is, on a line or two,
and its red "Revoke" button at the end of the row. One function, so every list of such
things looks and behaves alike."""

from __future__ import annotations

from typing import Any

import reflex as rx

from agent_chat.components.common import tid


def revocable(
    *lines: rx.Component,
    on_revoke: Any,
    revoke_test_id: str,
    attrs: dict[str, Any],
    spacing: str = "1",
    card: bool = False,
) -> rx.Component:
    """`lines` beside the Revoke button (`on_revoke`, testid `revoke_test_id`); `attrs` (its
    data-testid and id) on the outermost element, a card when `card` (a page's list) or the
    plain row (inside a dialog, which is a card already)."""
    row = rx.hstack(
        rx.vstack(*lines, spacing=spacing, flex="1", min_width="0"),
        rx.button(
            "Revoke",
            size="1",
            variant="soft",
            color_scheme="red",
            on_click=on_revoke,
            custom_attrs=tid(revoke_test_id),
        ),
        align="center",
        width="100%",
        **({} if card else {"custom_attrs": attrs}),
    )
    return rx.card(row, width="100%", custom_attrs=attrs) if card else row

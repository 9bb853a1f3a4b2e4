"""Import and share: the sidebar's "Import conversation" button, the conversation menu's
"Share…" item, the header's share button, the share dialog, and the settings list of links."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.components.revocable import revocable
from agent_chat.export.importing import MAX_IMPORT_BYTES
from agent_chat.share_page.links import EXPIRY_CHOICES, ShareRow
from agent_chat.state.chat import ChatState
from agent_chat.state.importer import UPLOAD_ID, ImportState
from agent_chat.state.share import ShareState


def import_button() -> rx.Component:
    """A file picker for a JSON export (the new conversation opens), and the share dialog
    the conversation menus open (the sidebar is on every page, so the dialog is too)."""
    return rx.fragment(
        rx.upload.root(
            rx.tooltip(
                rx.button(
                    rx.cond(
                        ImportState.importing, rx.spinner(size="1"), rx.icon("upload", size=14)
                    ),
                    "Import",
                    variant="ghost",
                    size="1",
                    color_scheme="gray",
                    aria_label="Import conversation",
                    custom_attrs=tid("import-button"),
                ),
                content="Import conversation (a JSON export)",
            ),
            id=UPLOAD_ID,
            accept={"application/json": [".json"]},
            max_files=1,
            max_size=MAX_IMPORT_BYTES,
            multiple=False,
            no_drag=True,
            on_drop=ImportState.import_files(rx.upload_files(upload_id=UPLOAD_ID)),
            on_drop_rejected=ImportState.refused,
            class_name="import-upload",
        ),
        share_dialog(),
    )


def share_menu_item(session_uuid: rx.Var) -> rx.Component:
    return rx.dropdown_menu.item(
        "Share…", on_click=ShareState.open_share(session_uuid), custom_attrs=tid("session-share")
    )


def share_header_item() -> rx.Component:
    """ "Share…" in the header's ⋯ menu on a phone (where the share icon is folded away)."""
    return rx.dropdown_menu.item(
        "Share…",
        on_click=ShareState.open_share(ChatState.current_uuid),
        custom_attrs=tid("menu-share"),
    )


def share_button() -> rx.Component:
    """The header's share button, next to the exports."""
    return rx.tooltip(
        rx.icon_button(
            rx.icon("share-2", size=16),
            variant="ghost",
            color_scheme="gray",
            on_click=ShareState.open_share(ChatState.current_uuid),
            aria_label="Share a read-only link",
            custom_attrs=tid("share-button"),
        ),
        content="Share a read-only link",
    )


def _link_row(row: ShareRow) -> rx.Component:
    return revocable(
        rx.text(
            rx.code("/s/" + row["prefix"] + "…"), " · ", row["messages"], " messages", size="2"
        ),
        rx.text(
            "made ",
            row["created"],
            " · ",
            row["expires"],
            size="1",
            color_scheme=rx.cond(row["expired"], "red", "gray"),
        ),
        on_revoke=ShareState.revoke(row["id"]),
        revoke_test_id="share-revoke",
        attrs={"data-testid": "share-link", "data-share-id": row["id"]},
        spacing="0",
    )


def _new_link() -> rx.Component:
    return rx.cond(
        ShareState.new_url != "",
        rx.callout.root(
            rx.vstack(
                rx.text("Copy the link now: it is not shown again.", size="2"),
                rx.hstack(
                    rx.code(
                        ShareState.new_url,
                        class_name="share-url",
                        flex="1",
                        min_width="0",
                        style={"overflow_wrap": "anywhere", "word_break": "break-all"},
                        custom_attrs=tid("share-url"),
                    ),
                    rx.icon_button(
                        rx.icon("copy", size=14),
                        size="1",
                        variant="soft",
                        on_click=[
                            rx.set_clipboard(ShareState.new_url),
                            rx.toast("Link copied", duration=1500),
                        ],
                        aria_label="Copy the link",
                        custom_attrs=tid("share-copy"),
                    ),
                    align="center",
                    width="100%",
                ),
                spacing="2",
                width="100%",
            ),
            color_scheme="green",
            width="100%",
        ),
    )


def share_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(
                "Share “", ShareState.share_title, "”", size="4", class_name="share-title"
            ),
            rx.dialog.description(
                "Anyone with the link can read this conversation as it is now, with the "
                "thinking folded, without logging in. Later messages are not added; the "
                "composer, your settings and other conversations are never shown.",
                size="2",
                color_scheme="gray",
            ),
            rx.vstack(
                rx.hstack(
                    rx.select.root(
                        rx.select.trigger(custom_attrs=tid("share-expiry")),
                        rx.select.content(
                            *[
                                rx.select.item(label, value=value)
                                for value, (label, _) in EXPIRY_CHOICES.items()
                            ]
                        ),
                        value=ShareState.expiry,
                        on_change=ShareState.set_expiry,
                    ),
                    rx.button(
                        rx.icon("link", size=14),
                        "Create link",
                        on_click=ShareState.create_link,
                        custom_attrs=tid("share-create"),
                    ),
                    spacing="2",
                    wrap="wrap",
                ),
                rx.cond(
                    ShareState.share_error != "",
                    rx.text(
                        ShareState.share_error,
                        color_scheme="red",
                        size="2",
                        custom_attrs=tid("share-error"),
                    ),
                ),
                _new_link(),
                rx.cond(
                    ShareState.links.length() > 0,
                    rx.vstack(
                        rx.text("Links to this conversation", size="2", weight="medium"),
                        rx.foreach(ShareState.links, _link_row),
                        spacing="2",
                        width="100%",
                    ),
                ),
                rx.hstack(
                    rx.dialog.close(rx.button("Done", variant="soft", color_scheme="gray")),
                    justify="end",
                    width="100%",
                ),
                spacing="3",
                width="100%",
                margin_top="12px",
            ),
            max_width="520px",
            custom_attrs=tid("share-dialog"),
        ),
        open=ShareState.share_open,
        on_open_change=ShareState.set_share_open,
    )


def _settings_row(row: ShareRow) -> rx.Component:
    return rx.vstack(
        rx.link(row["title"], href="/chat/" + row["session_uuid"], size="2", weight="medium"),
        _link_row(row),
        spacing="1",
        width="100%",
    )


def shared_links_section() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.heading("Shared links", size="4"),
            rx.text(
                "Read-only links to snapshots of your conversations. Anyone with a link can "
                "read it until you revoke it or it expires.",
                size="2",
                color_scheme="gray",
            ),
            rx.foreach(ShareState.all_links, _settings_row),
            rx.cond(
                ShareState.all_links.length() == 0,
                rx.text("No shared links.", size="2", custom_attrs=tid("no-shared-links")),
            ),
            spacing="2",
            width="100%",
        ),
        width="100%",
        on_mount=ShareState.load_all,  # the section loads itself: no page needs to know it
        custom_attrs=tid("shared-links"),
    )

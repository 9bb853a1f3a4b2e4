"""The workspace drawer: the open conversation's files, a preview of one, and
its download. Rows come from agent_chat/display/workspace_view.py; everything is shown as text
(markdown through the app's one renderer). The look lives in assets/workspace.css."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import safe_markdown, sheet_header, tid
from agent_chat.components.tool_view import highlighted
from agent_chat.components.workspace_changes import changes_dialog
from agent_chat.display.workspace_view import FILE_ICONS, FileRow, PreviewRow
from agent_chat.state.workspace import WorkspaceState

S = WorkspaceState


def _file_icon(name: rx.Var) -> rx.Component:
    return rx.match(
        name,
        *((icon, rx.icon(icon, size=15, class_name="ws-file-icon")) for icon in FILE_ICONS),
        rx.icon("file", size=15, class_name="ws-file-icon"),
    )


def _file(row: FileRow) -> rx.Component:
    return rx.el.button(
        _file_icon(row["icon"]),
        rx.el.span(
            rx.el.span(row["folder"], class_name="ws-file-folder"),
            rx.el.span(row["name"], class_name="ws-file-name"),
            class_name="ws-file-path",
            title=row["path"],
        ),
        rx.el.span(row["size"], class_name="ws-file-size", custom_attrs=tid("workspace-file-size")),
        rx.el.span(
            row["modified"],
            class_name="ws-file-time",
            title=row["modified_utc"],
            custom_attrs=tid("workspace-file-time"),
        ),
        type="button",
        on_click=S.select_file(row["path"]),
        class_name=rx.cond(S.ws_selected == row["path"], "ws-file ws-file-selected", "ws-file"),
        custom_attrs={"data-testid": "workspace-file", "data-path": row["path"]},
    )


def _empty() -> rx.Component:
    return rx.vstack(
        rx.icon("folder-open", size=28, class_name="ws-empty-icon"),
        rx.text("No files yet", weight="medium", size="2"),
        rx.text(
            "Files the agent writes in this conversation appear here as it works.",
            size="1",
            color_scheme="gray",
            align="center",
        ),
        align="center",
        spacing="1",
        class_name="ws-empty",
        custom_attrs=tid("workspace-empty"),
    )


def _file_list() -> rx.Component:
    return rx.box(
        rx.cond(
            S.ws_version != "",
            rx.text(
                S.ws_version, size="1", class_name="ws-more", custom_attrs=tid("workspace-version")
            ),
        ),
        rx.cond(
            S.ws_files.length() > 0,
            rx.el.div(
                rx.foreach(S.ws_files, _file),
                rx.cond(
                    S.ws_partial,
                    rx.text("… and more files (too many to count)", size="1", class_name="ws-more"),
                    rx.cond(
                        S.ws_more > 0,
                        rx.text("… and ", S.ws_more, " more files", size="1", class_name="ws-more"),
                    ),
                ),
                rx.cond(
                    S.ws_skipped.length() > 0,
                    rx.text(
                        "Not listed: ", S.ws_skipped.join(", "), size="1", class_name="ws-more"
                    ),
                ),
                class_name="ws-files",
                custom_attrs=tid("workspace-files"),
            ),
            rx.cond(S.ws_loaded, _empty(), rx.center(rx.spinner(size="2"), padding="24px")),
        ),
        class_name=rx.cond(S.ws_selected != "", "ws-list ws-list-short", "ws-list"),
    )


def _preview_body(preview: rx.Var) -> rx.Component:
    return rx.match(
        preview["kind"],
        ("markdown", rx.box(safe_markdown(preview["text"]), class_name="ws-markdown")),
        (
            "code",
            highlighted(preview["text"], preview["tokens"], "ws-code", "workspace-preview-code"),
        ),
        ("text", rx.el.pre(preview["text"], class_name="ws-code ws-plain")),
        (
            "image",
            rx.el.img(
                src=preview["image_url"],
                alt=preview["path"],
                class_name="ws-image",
                custom_attrs=tid("workspace-preview-image"),
            ),
        ),
        rx.fragment(),
    )


def _preview() -> rx.Component:
    preview = S.ws_preview.to(PreviewRow)
    return rx.cond(
        S.ws_preview,
        rx.vstack(
            rx.hstack(
                rx.el.span(preview["path"], class_name="ws-preview-path", title=preview["path"]),
                rx.el.span(
                    preview["size"], " · ", preview["modified"], class_name="ws-preview-meta"
                ),
                rx.cond(
                    preview["download_url"] != "",
                    rx.tooltip(
                        rx.icon_button(
                            rx.link(
                                rx.icon("download", size=15),
                                href=preview["download_url"],
                                is_external=True,
                                custom_attrs={"download": "", "data-testid": "workspace-download"},
                            ),
                            as_child=True,
                            size="1",
                            variant="soft",
                            aria_label="Download",
                        ),
                        content="Download",
                    ),
                ),
                rx.icon_button(
                    rx.icon("x", size=14),
                    size="1",
                    variant="ghost",
                    color_scheme="gray",
                    on_click=S.close_preview,
                    aria_label="Close the preview",
                    custom_attrs=tid("workspace-preview-close"),
                ),
                align="center",
                spacing="2",
                width="100%",
                class_name="ws-preview-head",
            ),
            rx.cond(
                preview["note"] != "",
                rx.text(preview["note"], size="1", class_name="ws-preview-note"),
            ),
            rx.box(_preview_body(preview), class_name="ws-preview-body"),
            spacing="2",
            class_name="ws-preview",
            custom_attrs={"data-testid": "workspace-preview", "data-kind": preview["kind"]},
        ),
    )


def _header() -> rx.Component:
    return sheet_header(
        "folder-open",
        "Workspace",
        rx.cond(
            S.ws_files.length() > 0,
            rx.badge(S.ws_files.length() + S.ws_more, color_scheme="gray", variant="soft"),
        ),
        on_refresh=S.open_workspace,
        refresh_title="Refresh (the list also follows the agent's writes by itself)",
        name="workspace",
        class_prefix="ws",
    )


def workspace_sheet() -> rx.Component:
    return rx.dialog.content(
        _header(),
        rx.dialog.description(
            "This conversation's folder: the agent's files, commands and code work here.",
            class_name="ws-description",
        ),
        _file_list(),
        _preview(),
        class_name="ws-sheet",
        custom_attrs=tid("workspace-drawer"),
    )


def workspace_drawer() -> rx.Component:
    """The header's workspace button and its drawer (mount once in the chat header)."""
    return rx.cond(
        S.workspace_available,
        rx.fragment(
            rx.tooltip(
                rx.icon_button(
                    rx.icon("folder-open", size=16),
                    variant="ghost",
                    color_scheme="gray",
                    on_click=S.open_workspace,
                    aria_label="Workspace files",
                    custom_attrs=tid("workspace-button"),
                ),
                content="Workspace files",
            ),
            rx.dialog.root(workspace_sheet(), open=S.ws_open, on_open_change=S.set_ws_open),
            changes_dialog(),
        ),
    )

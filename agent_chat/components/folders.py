"""Pins and folders in the sidebar: the folder blocks, the new-folder field, and the
conversation menu's "Pin" and "Move to folder" items (state/folders.py)."""

from __future__ import annotations

from collections.abc import Callable

import reflex as rx

from agent_chat.components.common import row_menu_trigger, tid
from agent_chat.display.rows import FolderRow, SessionRow
from agent_chat.state.folders import FolderState


def pin_item(row: SessionRow) -> rx.Component:
    return rx.dropdown_menu.item(
        rx.cond(row["pinned"], "Unpin", "Pin to top"),
        on_click=FolderState.set_pinned(row["uuid"], ~row["pinned"]),
        custom_attrs=tid("session-pin"),
    )


def move_menu(row: SessionRow) -> rx.Component:
    """ "Move to folder" → each folder and "No folder" (the current one checked)."""

    def target(folder: FolderRow) -> rx.Component:
        return rx.dropdown_menu.item(
            rx.hstack(
                rx.icon("folder", size=12),
                rx.text(folder["name"], truncate=True, max_width="180px"),
                rx.cond(row["folder_id"] == folder["id"], rx.icon("check", size=12)),
                align="center",
                spacing="2",
            ),
            on_click=FolderState.move(row["uuid"], folder["id"]),
            custom_attrs={"data-testid": "session-move-target", "data-folder-name": folder["name"]},
        )

    return rx.dropdown_menu.sub(
        rx.dropdown_menu.sub_trigger("Move to folder", custom_attrs=tid("session-move")),
        rx.dropdown_menu.sub_content(
            rx.foreach(FolderState.folders, target),
            rx.cond(FolderState.folders.length() > 0, rx.dropdown_menu.separator()),
            rx.dropdown_menu.item(
                rx.hstack(
                    rx.text("No folder"),
                    rx.cond(row["folder_id"] == 0, rx.icon("check", size=12)),
                    align="center",
                    spacing="2",
                ),
                on_click=FolderState.move(row["uuid"], 0),
                custom_attrs={"data-testid": "session-move-target", "data-folder-name": ""},
            ),
        ),
    )


def new_folder_button() -> rx.Component:
    return rx.tooltip(
        rx.icon_button(
            rx.icon("folder-plus", size=16),
            variant="soft",
            size="2",
            on_click=FolderState.start_new_folder,
            aria_label="New folder",
            custom_attrs=tid("folder-new"),
        ),
        content="New folder",
    )


def _name_form(on_submit, on_blur, default: rx.Var | str, test_id: str) -> rx.Component:
    return rx.form(
        rx.input(
            name="name",
            default_value=default,
            placeholder="Folder name",
            auto_focus=True,
            max_length=60,
            size="1",
            width="100%",
            on_blur=on_blur,
            custom_attrs=tid(test_id),
        ),
        on_submit=on_submit,
        reset_on_submit=True,
        width="100%",
    )


def new_folder_form() -> rx.Component:
    return rx.cond(
        FolderState.creating_folder,
        _name_form(
            FolderState.create_folder, FolderState.cancel_new_folder, "", "folder-name-input"
        ),
    )


def _folder_menu(folder: FolderRow) -> rx.Component:
    return rx.dropdown_menu.root(
        row_menu_trigger("Folder actions"),
        rx.dropdown_menu.content(
            rx.dropdown_menu.item(
                "Rename",
                on_click=FolderState.start_folder_rename(folder["id"]),
                custom_attrs=tid("folder-rename"),
            ),
            rx.dropdown_menu.separator(),
            rx.dropdown_menu.item(
                "Delete folder (keeps its conversations)",
                color="red",
                on_click=FolderState.delete_folder(folder["id"]),
                custom_attrs=tid("folder-delete"),
            ),
        ),
    )


def folder_block(folder: FolderRow, item: Callable[[SessionRow], rx.Component]) -> rx.Component:
    """A folder's header (fold, name, count, menu) and, unfolded, its newest conversations
    with "Show more" when it holds more (db/folders.py: FOLDER_PAGE, then FOLDER_MORE)."""
    header = rx.cond(
        FolderState.renaming_folder == folder["id"],
        _name_form(
            FolderState.rename_folder,
            FolderState.cancel_folder_rename,
            folder["name"],
            "folder-rename-input",
        ),
        rx.hstack(
            rx.hstack(
                rx.cond(
                    folder["collapsed"],
                    rx.icon("chevron-right", size=14),
                    rx.icon("chevron-down", size=14),
                ),
                rx.icon("folder", size=14),
                rx.text(folder["name"], size="2", truncate=True, custom_attrs=tid("folder-name")),
                rx.text(
                    folder["count"], size="1", color_scheme="gray", custom_attrs=tid("folder-count")
                ),
                align="center",
                spacing="1",
                flex="1",
                min_width="0",
                cursor="pointer",
                on_click=FolderState.toggle_folder(folder["id"], ~folder["collapsed"]),
                custom_attrs={**tid("folder-toggle"), "role": "button"},
            ),
            _folder_menu(folder),
            align="center",
            spacing="1",
            class_name="session-item folder-header",
        ),
    )
    return rx.vstack(
        header,
        rx.cond(
            folder["collapsed"],
            rx.fragment(),
            rx.vstack(
                rx.foreach(folder["sessions"], item),
                rx.cond(
                    folder["count"] == 0,
                    rx.text("Empty", size="1", color_scheme="gray", class_name="folder-empty"),
                ),
                rx.cond(
                    folder["sessions"].length() < folder["count"],
                    rx.button(
                        "Show more",
                        variant="ghost",
                        size="1",
                        on_click=FolderState.show_more_in_folder(folder["id"]),
                        custom_attrs=tid("folder-show-more"),
                    ),
                ),
                spacing="1",
                width="100%",
                class_name="folder-sessions",
            ),
        ),
        spacing="1",
        width="100%",
        custom_attrs={"data-testid": "folder", "data-folder-name": folder["name"]},
    )

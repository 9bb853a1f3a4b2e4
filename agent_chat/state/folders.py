"""Pins and folders of the sidebar: create, rename, delete, fold (services/folders.py); move
and pin a conversation (services/conversations.py); the API calls the same use cases."""

from __future__ import annotations

from collections.abc import Awaitable

import reflex as rx

from agent_chat.db.errors import StoreError, ValidationFailed
from agent_chat.services import conversations, folders
from agent_chat.services.listing import FOLDER_MORE, FOLDER_PAGE
from agent_chat.state.sidebar import SidebarState


class FolderState(SidebarState):
    creating_folder: bool = False
    renaming_folder: int = 0  # the folder whose name is being edited

    async def _use(self, what: str, use_case, **kwargs) -> bool:
        """Run a folder use case as the tab's person; a refusal becomes the banner."""
        return await self._done(what, use_case(self.svc(), user_id=await self.user_id(), **kwargs))

    async def _done(self, what: str, change: Awaitable) -> bool:
        """Await a change; a refusal becomes the banner (nothing changed then)."""
        try:
            await change
        except ValidationFailed as exc:  # the sentence, without the field's name
            self.show_error(f"Could not {what}: {' '.join(exc.field_errors.values())}")
            return False
        except (StoreError, ValueError) as exc:
            self.show_error(f"Could not {what}: {exc}")
            return False
        finally:
            await self.refresh()
        return True

    @rx.event
    def start_new_folder(self) -> None:
        self.creating_folder = True

    @rx.event
    def cancel_new_folder(self) -> None:
        self.creating_folder = False

    @rx.event
    async def create_folder(self, form: dict) -> None:
        self.creating_folder = False
        name = str(form.get("name", ""))
        if name.strip():  # an empty name just closes the field
            await self._use("create the folder", folders.create_folder, name=name)

    @rx.event
    def start_folder_rename(self, folder_id: int) -> None:
        self.renaming_folder = folder_id

    @rx.event
    def cancel_folder_rename(self) -> None:
        self.renaming_folder = 0

    @rx.event
    async def rename_folder(self, form: dict) -> None:
        folder_id, self.renaming_folder = self.renaming_folder, 0
        await self._use(
            "rename the folder",
            folders.rename_folder,
            folder_id=folder_id,
            name=str(form.get("name", "")),
        )

    @rx.event
    async def delete_folder(self, folder_id: int) -> None:
        await self._use("delete the folder", folders.delete_folder, folder_id=folder_id)

    @rx.event
    async def toggle_folder(self, folder_id: int, collapsed: bool) -> None:
        await self._use(
            "fold the folder", folders.set_collapsed, folder_id=folder_id, collapsed=collapsed
        )

    @rx.event
    async def show_more_in_folder(self, folder_id: int) -> None:
        """An open folder shows FOLDER_MORE more of its conversations (until a reload)."""
        shown = self._folder_limits.get(folder_id, FOLDER_PAGE)
        self._folder_limits = {**self._folder_limits, folder_id: shown + FOLDER_MORE}
        await self.refresh()

    @rx.event
    async def move(self, session_uuid: str, folder_id: int) -> None:
        """Into folder `folder_id`, or out of any folder with 0."""
        await self._done(
            "move the conversation",
            conversations.move_conversation(
                self.svc(),
                user_id=await self.user_id(),
                session_uuid=session_uuid,
                folder_id=folder_id or None,
            ),
        )

    @rx.event
    async def set_pinned(self, session_uuid: str, pinned: bool) -> None:
        await self._done(
            "pin the conversation",
            conversations.set_pinned(
                self.svc(), user_id=await self.user_id(), session_uuid=session_uuid, pinned=pinned
            ),
        )

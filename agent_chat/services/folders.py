"""Use cases on the sidebar's folders: list, create, rename, delete, fold. Filing and pinning
a conversation are `services/conversations.py` (`move_conversation`, `set_pinned`).

The page (state/folders.py) and the HTTP API (api/folders.py) call these. A folder is its
owner's: another person's is the same `NotFound` as one that never existed. A name is 1-60
characters on one line, unique per person by its key (db/names.py); anything else is the
store's `ValidationFailed` on `name`.
"""

from __future__ import annotations

from agent_chat.db import folders
from agent_chat.db.errors import ValidationFailed
from agent_chat.db.models import ChatFolder
from agent_chat.services.backend import Backend
from agent_chat.services.ids import row_id

FOLDER_NAME_MAX_CHARS = folders.FOLDER_NAME_MAX_CHARS  # the API's schema says it


async def list_folders(svc: Backend, *, user_id: int) -> list[ChatFolder]:
    """The person's folders, by name."""
    return await svc.storage.call(folders.list_folders, user_id=user_id)


async def create_folder(svc: Backend, *, user_id: int, name: str) -> ChatFolder:
    """A new folder; at most `folders.MAX_FOLDERS` each."""
    return await svc.storage.call(folders.create_folder, user_id=user_id, name=name)


async def rename_folder(svc: Backend, *, user_id: int, folder_id: int, name: str) -> ChatFolder:
    folder_id = row_id(folder_id, "Folder")
    return await svc.storage.call(
        folders.rename_folder, user_id=user_id, folder_id=folder_id, name=name
    )


async def delete_folder(svc: Backend, *, user_id: int, folder_id: int) -> int:
    """Delete the folder; its conversations go back to the unfiled list (none is deleted).
    How many moved."""
    folder_id = row_id(folder_id, "Folder")
    return await svc.storage.call(folders.delete_folder, user_id=user_id, folder_id=folder_id)


async def set_collapsed(svc: Backend, *, user_id: int, folder_id: int, collapsed: bool) -> None:
    """Fold the folder (the sidebar then reads only its count) or open it."""
    folder_id = row_id(folder_id, "Folder")
    if not isinstance(collapsed, bool):  # a page event sends anything
        raise ValidationFailed({"collapsed": "Either true or false."})
    await svc.storage.call(
        folders.set_collapsed, user_id=user_id, folder_id=folder_id, collapsed=collapsed
    )

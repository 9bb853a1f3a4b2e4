"""Sidebar folders over the HTTP API (services/folders.py, the page's use cases); a
conversation is filed with PATCH /api/chat/sessions/{id} {"folderId": …} and pinned with
{"pinned": true}."""

from __future__ import annotations

from fastapi import APIRouter, Path, Response
from pydantic import Field

from agent_chat import routes
from agent_chat.api.deps import Me, Svc
from agent_chat.api.errors import responses
from agent_chat.api.schemas import MAX_ID, Body, Out, Timestamp
from agent_chat.db.models import ChatFolder
from agent_chat.services import folders
from agent_chat.services.folders import FOLDER_NAME_MAX_CHARS

router = APIRouter(tags=["folders"])
FolderId = Path(..., ge=1, le=MAX_ID)


class FolderBody(Body):
    name: str = Field(min_length=1, max_length=FOLDER_NAME_MAX_CHARS)


class FolderOut(Out):
    id: int
    name: str
    collapsed: bool
    created_at: Timestamp


class FolderList(Out):
    folders: list[FolderOut]


def _out(folder: ChatFolder) -> FolderOut:
    return FolderOut(
        id=folder.id, name=folder.name, collapsed=folder.collapsed, created_at=folder.created_at
    )


@router.get(routes.API_FOLDERS, response_model=FolderList)
async def list_folders(svc: Svc, me: Me) -> FolderList:
    """The folders, by name."""
    rows = await folders.list_folders(svc, user_id=me)
    return FolderList(folders=[_out(f) for f in rows])


@router.post(
    routes.API_FOLDERS, status_code=201, response_model=FolderOut, responses=responses(422)
)
async def create_folder(svc: Svc, me: Me, body: FolderBody) -> FolderOut:
    """A new folder (names are unique, ignoring case)."""
    return _out(await folders.create_folder(svc, user_id=me, name=body.name))


@router.patch(routes.API_FOLDER, response_model=FolderOut, responses=responses(404, 422))
async def rename_folder(svc: Svc, me: Me, body: FolderBody, folder_id: int = FolderId) -> FolderOut:
    renamed = await folders.rename_folder(svc, user_id=me, folder_id=folder_id, name=body.name)
    return _out(renamed)


@router.delete(
    routes.API_FOLDER, status_code=204, response_class=Response, responses=responses(404)
)
async def delete_folder(svc: Svc, me: Me, folder_id: int = FolderId) -> Response:
    """Delete the folder; its conversations go back to the unfiled list (none is deleted)."""
    await folders.delete_folder(svc, user_id=me, folder_id=folder_id)
    return Response(status_code=204)

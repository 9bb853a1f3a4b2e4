"""The workspace drawer of the open conversation: its files, one preview.

While the drawer is open a background loop lists the folder every `POLL_S` seconds and
sends a delta only when something changed (a file's size or time, or the time labels).
Polling rather than a hook on the run's tool events: files also change through commands
whose effects no tool event names (a script the agent ran, a background process, another
tab's run), and a listing of a few hundred files costs a few milliseconds. Nothing runs
while the drawer is closed; the loop ends when the drawer closes or the tab is gone (or its
socket is on another worker now: the page load there starts the loop again, `resume_poll`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid

import reflex as rx

from agent_chat.common.workspaces import Listing, list_files, read_preview, workspaces_root
from agent_chat.display.workspace_view import (
    FileRow,
    PreviewRow,
    file_rows,
    missing_preview,
    preview_row,
    stamp,
    workspace_available,
)
from agent_chat.services import workspace_versions
from agent_chat.state.chat import ChatState

log = logging.getLogger(__name__)

POLL_S = 1.5
PREVIEW_CAP = 100 * 1024  # bytes of a text file sent to the drawer


def _listing(session_uuid: str) -> Listing:
    if not session_uuid:
        return Listing()
    return list_files(workspaces_root(), session_uuid)


class WorkspaceState(ChatState):
    ws_open: bool = False
    ws_files: list[FileRow] = []
    ws_more: int = 0  # files not listed (past the cap)
    ws_partial: bool = False  # the folder is too big to count all of it
    ws_skipped: list[str] = []  # folders not walked (caches such as .git)
    ws_exists: bool = False
    ws_loaded: bool = False
    ws_selected: str = ""
    ws_preview: PreviewRow | None = None
    ws_version: str = ""  # "Files as answer 2/3 left them" (services/workspace_versions.py)

    _ws_poller: str = ""
    _ws_uuid: str = ""  # the conversation the listing is of
    _ws_stamp: str = ""  # the previewed file's size and time when it was read
    _ws_version_key: str = ""  # the HEAD and shown messages the label was worked out for

    @rx.var
    def workspace_available(self) -> bool:
        """The button shows when the Workspace profile is on or the folder exists."""
        return workspace_available(self.current_uuid)

    @rx.event
    async def open_workspace(self):
        self.ws_open = True
        await self._ws_refresh()
        self._ws_poller = uuid.uuid4().hex
        return WorkspaceState.ws_poll(self._ws_poller)

    @rx.event
    def resume_poll(self):
        """Page load (a reconnect too, perhaps to another worker, where the old loop stops:
        its tab's socket is not there): an open drawer's loop runs from here."""
        if not self.ws_open:
            return None
        self._ws_poller = uuid.uuid4().hex
        return WorkspaceState.ws_poll(self._ws_poller)

    @rx.event
    async def set_ws_open(self, value: bool):
        if value:
            return await self.open_workspace()
        self.ws_open = False
        self._ws_poller = ""
        return None

    @rx.event
    async def select_file(self, path: str):
        self.ws_selected = path
        self._ws_stamp = ""
        await self._ws_load_preview(await self.owned_uuid())

    @rx.event
    def close_preview(self):
        self.ws_selected, self.ws_preview, self._ws_stamp = "", None, ""

    async def _ws_refresh(self, owned: tuple[str, Listing] | None = None) -> None:
        """Show a listing of the conversation's folder (`owned`: the uuid `owned_uuid`
        gave and its listing, else both found now) and reload the preview if its file
        changed. Another person's conversation lists nothing."""
        session_uuid, listing = owned or (await self.owned_uuid(), None)
        if session_uuid != self._ws_uuid:  # another conversation: its own files
            self._ws_uuid = session_uuid
            self.ws_selected, self.ws_preview, self._ws_stamp = "", None, ""
        if listing is None:
            listing = await asyncio.to_thread(_listing, session_uuid)
        self._set_if_changed(
            ws_files=file_rows(listing),
            ws_more=listing.more,
            ws_partial=not listing.complete,
            ws_skipped=list(listing.skipped),
            ws_exists=listing.exists,
        )
        await self._ws_label(session_uuid)
        if not self.ws_loaded:
            self.ws_loaded = True
        if self.ws_selected:
            entry = next((f for f in listing.files if f.path == self.ws_selected), None)
            if entry is None or stamp(entry) != self._ws_stamp:
                await self._ws_load_preview(session_uuid)

    async def _ws_label(self, session_uuid: str) -> None:
        """Which version the folder holds: asked again only when its checkpoint (HEAD, a
        file read) or the shown messages (a switch, a new answer) changed."""
        head = (
            await asyncio.to_thread(workspace_versions.head_of, session_uuid)
            if session_uuid
            else None
        )
        key = f"{session_uuid}:{head}:{[m['id'] for m in self.messages]}"
        if key == self._ws_version_key:
            return
        self._ws_version_key = key
        me = await self.user_id_or_none()
        label = ""
        if head is not None and me is not None:
            label = await workspace_versions.shown_label(
                self.svc().storage, user_id=me, session_uuid=session_uuid
            )
        self._set_if_changed(ws_version=label)

    async def _ws_load_preview(self, session_uuid: str) -> None:
        """The selected file of `session_uuid`, which `owned_uuid` gave ("" reads nothing)."""
        path = self.ws_selected
        if not session_uuid:
            self.ws_selected, self.ws_preview, self._ws_stamp = "", None, ""
            return
        preview = await asyncio.to_thread(
            read_preview, workspaces_root(), session_uuid, path, PREVIEW_CAP
        )
        if preview is None:
            if not self.ws_preview or self.ws_preview["kind"] != "missing":
                self.ws_preview = missing_preview(session_uuid, path)
            self._ws_stamp = ""
            return
        self._ws_stamp = stamp(preview)
        self.ws_preview = preview_row(session_uuid, preview)

    def _set_if_changed(self, **values) -> None:
        # Assigning marks a var dirty and resends it whole: only what changed is assigned.
        for name, value in values.items():
            if getattr(self, name) != value:
                setattr(self, name, value)

    @rx.event(background=True)
    async def ws_poll(self, poller: str):
        """Keep the open drawer current (see the module's doc). The folder is listed
        outside the state lock: the tab's other events never wait for a walk."""
        async with self:
            token = self.router.session.client_token
        while True:
            await asyncio.sleep(POLL_S)
            if not self.svc().tab_connected(token):
                return
            async with self:
                if self._ws_poller != poller or not self.ws_open:
                    return
                session_uuid = await self.owned_uuid()  # per poll: the tab may change hands
            try:
                listing = await asyncio.to_thread(_listing, session_uuid)
            except OSError:
                log.exception("listing the workspace of %s failed", session_uuid)
                continue
            async with self:
                if self._ws_poller != poller or not self.ws_open:
                    return
                if self.current_uuid == session_uuid:
                    await self._ws_refresh((session_uuid, listing))

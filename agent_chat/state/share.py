"""The share dialog (make a read-only link to a conversation, list and revoke its links) and
the settings page's list of every link. The use cases are `services/shares.py`."""

from __future__ import annotations

import reflex as rx

from agent_chat.db.errors import NotFound, StoreError, ValidationFailed
from agent_chat.db.models import utcnow
from agent_chat.services import shares
from agent_chat.services.conversations import conversation_for
from agent_chat.share_page.links import EXPIRY_CHOICES, ShareRow, share_path
from agent_chat.share_page.links import share_row as make_row
from agent_chat.state.base import AppState


class ShareState(AppState):
    share_open: bool = False
    share_uuid: str = ""
    share_title: str = ""
    expiry: str = "never"
    new_url: str = ""  # the link just made: shown once (only its hash is stored)
    links: list[ShareRow] = []  # the links of the dialog's conversation
    all_links: list[ShareRow] = []  # every link (settings)
    share_error: str = ""

    async def _rows(self, session_uuid: str | None) -> list[ShareRow]:
        found = await shares.list_share_links(
            self.svc(), user_id=await self.user_id(), session_uuid=session_uuid
        )
        now = utcnow()
        return [make_row(info, now=now) for info in found]

    @rx.event
    async def open_share(self, session_uuid: str) -> None:
        try:
            chat = await conversation_for(
                self.svc(), user_id=await self.user_id(), session_uuid=session_uuid
            )
        except NotFound:
            self.show_error("This conversation no longer exists.")
            return
        self.share_uuid, self.share_title = session_uuid, chat.title or "New conversation"
        self.new_url, self.share_error, self.expiry = "", "", "never"
        self.links = await self._rows(session_uuid)
        self.share_open = True

    @rx.event
    def set_share_open(self, value: bool) -> None:
        self.share_open = value
        if not value:
            self.new_url = ""

    @rx.event
    def set_expiry(self, value: str) -> None:
        self.expiry = value if value in EXPIRY_CHOICES else "never"

    @rx.event
    async def create_link(self) -> None:
        try:
            new = await shares.create_share_link(
                self.svc(),
                user_id=await self.user_id(),
                session_uuid=self.share_uuid,
                expiry=self.expiry,
            )
        except ValidationFailed as exc:
            self.share_error = next(iter(exc.field_errors.values()), str(exc))
            return
        except StoreError as exc:
            self.share_error = f"Could not make a link: {exc}"
            return
        url = self.router.url
        self.new_url = f"{url.scheme}://{url.netloc}{share_path(new.token)}"
        self.share_error = ""
        self.links = await self._rows(self.share_uuid)

    @rx.event
    async def revoke(self, share_id: int) -> None:
        try:
            await shares.revoke_share_link(
                self.svc(), user_id=await self.user_id(), share_id=share_id
            )
        except StoreError as exc:
            self.show_error(f"Could not revoke the link: {exc}")
        if self.share_uuid:
            self.links = await self._rows(self.share_uuid)
        self.all_links = await self._rows(None)

    @rx.event
    async def load_all(self) -> None:
        self.share_open = False  # a dialog left open on another page stays behind
        self.all_links = await self._rows(None)

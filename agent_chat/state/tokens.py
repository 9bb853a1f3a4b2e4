"""The API token settings page: make a personal API token (shown once), list, revoke
(services/tokens.py)."""

from __future__ import annotations

from typing import TypedDict

import reflex as rx

from agent_chat.db.errors import StoreError, ValidationFailed
from agent_chat.db.models import ApiToken
from agent_chat.services import tokens as personal_tokens
from agent_chat.state.base import AppState


class TokenRow(TypedDict):
    id: int
    name: str
    prefix: str
    created: str
    last_used: str


def _when(value) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "never"


def token_row(row: ApiToken) -> TokenRow:
    return {
        "id": row.id,
        "name": row.name,
        "prefix": row.prefix,
        "created": _when(row.created_at),
        "last_used": _when(row.last_used_at),
    }


class TokensState(AppState):
    tokens: list[TokenRow] = []
    # The token just made: shown until the page is left or dismissed, never again (only
    # its hash is stored).
    new_token: str = ""
    new_token_name: str = ""
    form_error: str = ""

    async def _reload(self) -> None:
        rows = await personal_tokens.list_tokens(self.svc(), user_id=await self.user_id())
        self.tokens = [token_row(r) for r in rows]

    @rx.event
    async def load(self) -> None:
        self.new_token, self.new_token_name, self.form_error = "", "", ""
        await self._reload()

    @rx.event
    async def create(self, form: dict) -> None:
        self.form_error = ""
        try:
            made = await personal_tokens.create_token(
                self.svc(), user_id=await self.user_id(), name=str(form.get("name") or "")
            )
        except ValidationFailed as exc:
            self.form_error = exc.field_errors.get("name", str(exc))
            return
        self.new_token, self.new_token_name = made.token, made.row.name
        await self._reload()

    @rx.event
    def dismiss_token(self) -> None:
        self.new_token, self.new_token_name = "", ""

    @rx.event
    async def revoke(self, token_id: int) -> None:
        try:
            await personal_tokens.revoke_token(
                self.svc(), user_id=await self.user_id(), token_id=token_id
            )
        except StoreError as exc:
            self.show_error(f"Could not revoke the token: {exc}")
        await self._reload()

"""Who is signed in (the sidebar's footer) and the account page: display name, password.

The page's websocket was opened with the session cookie (HttpOnly: the browser's scripts
cannot read it, the server's handshake headers carry it), so a handler finds its user by
looking that session up, exactly as the login gate does.
"""

from __future__ import annotations

from datetime import timedelta

import reflex as rx
from starlette.requests import cookie_parser

from agent_chat.auth import COOKIE_NAME
from agent_chat.db import auth_sessions, users
from agent_chat.db.auth_sessions import SignedIn
from agent_chat.db.errors import StoreError, ValidationFailed
from agent_chat.db.models import utcnow
from agent_chat.state.base import AppState

SIGNED_OUT = "You are signed out. Reload the page to sign in again."


async def signed_in(state: AppState) -> SignedIn | None:
    """Who the tab's websocket was opened for (None: signed out, expired, disabled)."""
    token = cookie_parser(state.router.headers.cookie or "").get(COOKIE_NAME)
    hours = state.svc().settings.session_hours
    return await state.svc().storage.call(
        auth_sessions.session_user, token=token, now=utcnow(), max_age=timedelta(hours=hours)
    )


class AccountState(AppState):
    display_name: str = ""
    username: str = ""
    role: str = ""
    message: str = ""
    message_ok: bool = True

    async def _signed_in(self) -> SignedIn | None:
        return await signed_in(self)

    @rx.event
    async def load(self) -> None:
        """Who is signed in (every page's sidebar asks once, on mount)."""
        user = await self._signed_in()
        if user is not None:
            self.display_name, self.username, self.role = (
                user.display_name,
                user.username,
                user.role,
            )

    @rx.event
    async def open_page(self) -> None:
        self.message = ""
        await self.load()

    def _say(self, text: str, ok: bool) -> None:
        self.message, self.message_ok = text, ok

    @rx.event
    async def save(self, form: dict) -> None:
        """The display name, and the password when a new one is given (every other session
        of the user ends; this one stays)."""
        user = await self._signed_in()
        if user is None:
            self._say(SIGNED_OUT, False)
            return
        name = str(form.get("display_name") or "")
        current = str(form.get("current_password") or "")
        new = str(form.get("new_password") or "")
        storage = self.svc().storage
        try:
            row = await storage.call(
                users.set_display_name, user_id=user.user_id, display_name=name
            )
            self.display_name = row.display_name
            if new or current:
                await storage.call(
                    users.change_password,
                    user_id=user.user_id,
                    current_password=current,
                    new_password=new,
                    keep_session_id=user.session_id,
                )
        except ValidationFailed as exc:
            self._say(" ".join(exc.field_errors.values()), False)
            return
        except StoreError as exc:
            self._say(f"Could not save: {exc}", False)
            return
        if new:
            self._say("Saved. Your new password is set; your other sessions were ended.", True)
        else:
            self._say("Saved.", True)

"""Who is signed in (the sidebar's footer) and the account page: display name, password.

The page's websocket was opened with the session cookie (HttpOnly: the browser's scripts
cannot read it, the server's handshake headers carry it), so a handler finds its user by
looking that session up, exactly as the login gate does.
"""

from __future__ import annotations

import reflex as rx

from agent_chat.db.errors import StoreError, ValidationFailed
from agent_chat.db.models import UserRole
from agent_chat.services import account
from agent_chat.services.account import SignedIn
from agent_chat.state.base import AppState


async def signed_in_admin(state: AppState) -> SignedIn | None:
    """The signed-in user when they are an administrator now (read now, not from the few
    seconds' cache: a demoted or disabled one is refused at the next event), else None."""
    user = await state.signed_in(fresh=True)
    return user if user is not None and user.role == UserRole.ADMIN.value else None


class AccountState(AppState):
    display_name: str = ""
    username: str = ""
    role: str = ""
    has_password: bool = True  # False: a single sign-on account (nothing to change)
    message: str = ""
    message_ok: bool = True

    async def _show(self) -> SignedIn | None:
        user = await self.signed_in()
        if user is not None:
            self.display_name, self.username, self.role = (
                user.display_name,
                user.username,
                user.role,
            )
        return user

    @rx.event
    async def load(self) -> None:
        """Who is signed in (every page's sidebar asks once, on mount)."""
        await self._show()

    @rx.event
    async def open_page(self) -> None:
        self.message = ""
        user = await self._show()
        if user is not None:
            row = await account.my_account(self.svc(), user_id=user.user_id)
            self.has_password = row.password_hash is not None

    def _say(self, text: str, ok: bool) -> None:
        self.message, self.message_ok = text, ok

    @rx.event
    async def save(self, form: dict) -> None:
        """The display name, and the password when a new one is given (every other session
        of the user ends; this one stays)."""
        user = await self.signed_in()
        if user is None:
            self._say("You are signed out. Reload the page to sign in again.", False)
            return
        name = str(form.get("display_name") or "")
        current = str(form.get("current_password") or "")
        new = str(form.get("new_password") or "")
        try:
            row = await account.save_account(
                self.svc(),
                user_id=user.user_id,
                session_id=user.session_id,
                display_name=name,
                current_password=current,
                new_password=new,
            )
            self.display_name = row.display_name
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

"""`/settings/users`: administrators list, create, promote or demote, disable or enable
users and reset their passwords (services/users.py).

Every handler asks the database who sent the event (the session read now, then
`users.require_admin`) before doing anything, never a state var: a member calling a handler
by name, or an administrator demoted while the page was open, is refused and the page turns
into "Administrators only" with its list emptied. The use cases check the same again.
"""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict

import reflex as rx

from agent_chat.db.errors import Forbidden, LastAdministrator, StoreError, ValidationFailed
from agent_chat.db.models import AppUser
from agent_chat.services import users as accounts
from agent_chat.state.base import AppState

ADMINS_ONLY = "Administrators only: ask an administrator to change accounts."
RESET_INPUT_ID = "user-reset-password-input"


class UserRow(TypedDict):
    id: int
    username: str
    display_name: str
    role: str
    disabled: bool
    created: str
    last_login: str


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment else "never"


def user_row(user: AppUser) -> UserRow:
    assert user.id is not None
    return UserRow(
        id=user.id,
        username=user.username,
        display_name=user.display_name,
        role=user.role,
        disabled=user.disabled,
        created=_when(user.created_at),
        last_login=_when(user.last_login_at),
    )


def _refusal(exc: StoreError) -> str:
    if isinstance(exc, ValidationFailed):
        return " ".join(exc.field_errors.values())
    return str(exc)


class UsersState(AppState):
    allowed: bool = False  # the signed-in user was an administrator at the last event
    checked: bool = False  # the first check is done (until then the page shows nothing)
    users: list[UserRow] = []
    message: str = ""
    message_ok: bool = True
    form_open: bool = False
    new_role: str = "member"
    form_errors: dict[str, str] = {}
    reset_for: int = 0  # the user whose "new password" field shows (0: none)
    reset_error: str = ""

    def _say(self, text: str, ok: bool) -> None:
        self.message, self.message_ok = text, ok

    async def _actor_id(self) -> int | None:
        """The acting administrator's id; None (and the page locked, its data gone) when the
        sender is not an administrator now."""
        me = await self.signed_in(fresh=True)  # a revoked session is refused at once too
        actor_id = me.user_id if me is not None else None
        self.checked = True
        try:
            await accounts.require_admin(self.svc(), user_id=actor_id)
        except Forbidden:
            self.allowed, self.users, self.form_open, self.reset_for = False, [], False, 0
            self._say(ADMINS_ONLY, False)
            return None
        self.allowed = True
        return actor_id

    async def _reload(self, actor_id: int) -> None:
        listed = await accounts.list_users(self.svc(), user_id=actor_id)
        self.users = [user_row(u) for u in listed]

    async def _refused(self, exc: StoreError, actor_id: int) -> None:
        if isinstance(exc, Forbidden):  # demoted between the two checks
            await self._actor_id()
            return
        self._say(_refusal(exc), False)
        await self._reload(actor_id)

    @rx.event
    async def load(self) -> None:
        self.message, self.form_errors, self.form_open, self.reset_for = "", {}, False, 0
        actor_id = await self._actor_id()
        if actor_id is not None:
            self.message = ""
            await self._reload(actor_id)

    @rx.event
    async def open_form(self) -> None:
        if await self._actor_id() is not None:
            self.form_open, self.form_errors, self.new_role, self.message = True, {}, "member", ""

    @rx.event
    def close_form(self) -> None:
        self.form_open, self.form_errors = False, {}

    @rx.event
    def set_new_role(self, role: str) -> None:
        self.new_role = role

    @rx.event
    async def create(self, form: dict) -> None:
        actor_id = await self._actor_id()
        if actor_id is None:
            return
        self.form_errors, self.message = {}, ""
        try:
            made = await accounts.create_user(
                self.svc(),
                user_id=actor_id,
                username=str(form.get("username") or ""),
                display_name=str(form.get("display_name") or ""),
                password=str(form.get("password") or ""),
                role=self.new_role,
            )
        except ValidationFailed as exc:  # shown under the fields
            self.form_errors = exc.field_errors
            return
        except StoreError as exc:
            await self._refused(exc, actor_id)
            return
        self.form_open = False
        self._say(f"Added {made.username} ({made.role}). They can sign in now.", True)
        await self._reload(actor_id)

    @rx.event
    async def set_role(self, user_id: int, role: str) -> None:
        actor_id = await self._actor_id()
        if actor_id is None:
            return
        try:
            user = await accounts.set_role(
                self.svc(), user_id=actor_id, target_id=user_id, role=role
            )
        except StoreError as exc:
            await self._refused(exc, actor_id)
            return
        self._say(
            f"{user.username} is now {'an administrator' if role == 'admin' else 'a member'}.", True
        )
        await self._reload(actor_id)
        if user_id == actor_id and role != "admin":
            await self._actor_id()  # demoted themselves: the page is theirs no more

    @rx.event
    async def set_disabled(self, user_id: int, disabled: bool) -> None:
        actor_id = await self._actor_id()
        if actor_id is None:
            return
        try:
            user = await accounts.set_disabled(
                self.svc(), user_id=actor_id, target_id=user_id, disabled=disabled
            )
        except StoreError as exc:
            await self._refused(exc, actor_id)
            return
        if disabled:
            self._say(f"Disabled {user.username}: signed out everywhere, cannot sign in.", True)
        else:
            self._say(f"Enabled {user.username}: they can sign in again.", True)
        await self._reload(actor_id)

    @rx.event
    async def open_reset(self, user_id: int):
        if await self._actor_id() is None:
            return None
        self.reset_for, self.reset_error = user_id, ""
        return rx.set_value(RESET_INPUT_ID, "")

    @rx.event
    def close_reset(self) -> None:
        self.reset_for, self.reset_error = 0, ""

    @rx.event
    async def reset_password(self, form: dict) -> None:
        actor_id = await self._actor_id()
        if actor_id is None:
            return
        self.reset_error = ""
        try:
            user = await accounts.reset_password(
                self.svc(),
                user_id=actor_id,
                target_id=self.reset_for,
                new_password=str(form.get("new_password") or ""),
            )
        except (ValidationFailed, LastAdministrator) as exc:
            self.reset_error = _refusal(exc)
            return
        except StoreError as exc:
            await self._refused(exc, actor_id)
            return
        self.reset_for = 0
        self._say(f"New password set for {user.username}; their sessions were ended.", True)
        await self._reload(actor_id)

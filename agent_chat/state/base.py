"""The base State: what every page shares (the error banner, the services, who acts).

Who acts is found from the websocket's handshake cookie on every call, exactly as the login
gate does (`services/account.py:signed_in`, cached a few seconds), never kept in state: a
tab's state outlives a sign-out, and the same tab may sign in as someone else.
"""

from __future__ import annotations

import reflex as rx
from starlette.requests import cookie_parser

from agent_chat.auth import COOKIE_NAME
from agent_chat.services import account
from agent_chat.services.account import SignedIn
from agent_chat.services.runtime import Services, services

SIGNED_OUT = "You are signed out. Reload the page to sign in again."


class SignedOut(RuntimeError):
    """The tab's session ended (signed out, expired, revoked): nothing is read or changed."""

    def __init__(self) -> None:
        super().__init__(SIGNED_OUT)


# Drops the tab's Reflex token (sessionStorage, Reflex's frontend `TOKEN_KEY`) and loads
# the page again: the tab gets a new token, so fresh states on the server.
FORGET_TAB = "window.sessionStorage.removeItem('token'); window.location.reload()"


class AppState(rx.State):
    """Root of the app's states. Feature states derive from it."""

    banner: str = ""
    # Whose this tab's states are (the first person an event of it came from). A tab's
    # states outlive a sign-out; another person signing in in the same tab must find none
    # of them (drafts, search results, open dialogs): `bind_tab` gives the tab new ones.
    _person: int = 0

    @rx.event
    async def bind_tab(self):
        """First on every page's load: the states belong to who is signed in now, else the
        tab starts afresh (a new token)."""
        me = await self.user_id_or_none()
        if me is None:
            return None
        if self._person and self._person != me:
            return rx.call_script(FORGET_TAB)
        self._person = me
        return None

    @rx.event
    def dismiss_banner(self) -> None:
        self.banner = ""

    def show_error(self, message: str) -> None:
        self.banner = message

    @staticmethod
    def svc() -> Services:
        return services()

    async def signed_in(self, *, fresh: bool = False) -> SignedIn | None:
        """Who this tab's websocket was opened for, checked as the gate checks it (`fresh`:
        read now, not from the few seconds' cache: for an administrator's rights)."""
        token = cookie_parser(self.router.headers.cookie or "").get(COOKIE_NAME)
        return await account.signed_in(services(), token=token, fresh=fresh)

    async def user_id_or_none(self) -> int | None:
        """The id of the person acting in this tab; None when nobody is (a loop ends)."""
        user = await self.signed_in()
        return user.user_id if user is not None else None

    async def user_id(self) -> int:
        """The id of the person acting in this tab; `SignedOut` when nobody is."""
        user = await self.signed_in()
        if user is None:
            raise SignedOut()
        return user.user_id

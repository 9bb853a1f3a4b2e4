"""What single sign-on asks of the database (through the gate's `Storage`, store functions
only): keep an attempt, take it back once, and sign a person in, in one transaction, with the
same stored session as the password login (`auth_sessions.create_session`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError

from agent_chat.auth.store import GateStore, as_datetime
from agent_chat.db import auth_sessions, oidc
from agent_chat.db.auth_sessions import NewSession
from agent_chat.db.oidc import Attempt


@dataclass(frozen=True)
class OidcOutcome:
    new: NewSession | None
    disabled: bool = False
    created: bool = False
    username: str = ""
    role: str = ""
    role_note: str = ""


def _sign_in(
    *,
    session: Any,
    issuer: str,
    subject: str,
    preferred_username: str,
    email: str,
    display_name: str,
    admin: bool | None,
    now: Any,
    lifetime: timedelta,
    user_agent: str,
    address: str,
) -> OidcOutcome:
    found = oidc.sign_in_identity(
        session=session,
        issuer=issuer,
        subject=subject,
        preferred_username=preferred_username,
        email=email,
        display_name=display_name,
        admin=admin,
        now=now,
    )
    if found.user is None:
        return OidcOutcome(None, disabled=found.disabled)
    assert found.user.id is not None
    new = auth_sessions.create_session(
        session=session,
        user_id=found.user.id,
        lifetime=lifetime,
        now=now,
        user_agent=user_agent,
        address=address,
    )
    return OidcOutcome(
        new,
        created=found.created,
        username=found.user.username,
        role=found.user.role,
        role_note=found.role_note,
    )


class OidcStore:
    def __init__(self, store: GateStore) -> None:
        self.store = store

    async def start(self, *, now: float, **kwargs: Any) -> None:
        await self.store.storage().call(oidc.start_attempt, now=as_datetime(now), **kwargs)

    async def take(self, token: str | None, *, now: float) -> Attempt | None:
        return await self.store.storage().call(oidc.take_attempt, token=token, now=as_datetime(now))

    async def sign_in(self, *, now: float, lifetime: float, **kwargs: Any) -> OidcOutcome:
        kwargs.update(now=as_datetime(now), lifetime=timedelta(seconds=lifetime))
        try:
            return await self.store.storage().call(_sign_in, **kwargs)
        except IntegrityError:
            # A first sign-in of the same person (or of another with the same username) in
            # another request won the race: the second try finds what it made.
            return await self.store.storage().call(_sign_in, **kwargs)

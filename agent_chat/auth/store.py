"""What the gate asks of the database, through the store functions (never SQL here).

The gate gets a `Storage` (runs/storage.py: `await storage.call(fn, **kwargs)` runs a store
function in one transaction on a worker thread) from a callable the app module gives it, so
this package needs neither Reflex nor the services module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypeVar

from agent_chat.auth import setup_code
from agent_chat.auth.rate_limit import RateLimits
from agent_chat.db import auth_sessions, users
from agent_chat.db.auth_sessions import NewSession, SignedIn

T = TypeVar("T")


class StorageLike(Protocol):
    async def call(self, fn: Callable[..., T], /, **kwargs: Any) -> T: ...


def as_datetime(seconds: float) -> datetime:
    """A Unix time as the naive UTC datetime the tables store."""
    return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class LoginOutcome:
    """`new` when signed in; else `error` (the page's message), `status`, `retry_after`."""

    new: NewSession | None = None
    error: str = ""
    status: int = 200
    retry_after: float | None = None


WRONG = "Wrong username or password."
DISABLED = "This account is disabled. Ask an administrator."


def _log_in(
    *,
    session: Any,
    username: str,
    password: str,
    address: str,
    user_agent: str,
    now: datetime,
    lifetime: timedelta,
    limits: RateLimits,
) -> LoginOutcome:
    """One sign-in in one transaction: the limit first (while blocked even the right
    password is refused, so the block cannot be guessed through), then the password."""
    window = timedelta(seconds=limits.window)
    name = username.strip().lower()
    wait = auth_sessions.failure_wait(
        session=session,
        address=address,
        username=name,
        now=now,
        window=window,
        per_address=limits.per_address,
        per_account=limits.per_account,
    )
    if wait is not None:
        return LoginOutcome(status=429, retry_after=wait)
    check = users.check_login(session=session, username=name, password=password, now=now)
    if check.user is None:
        if check.disabled:
            return LoginOutcome(error=DISABLED, status=403)
        auth_sessions.record_failure(
            session=session, address=address, username=name, now=now, window=window
        )
        return LoginOutcome(error=WRONG, status=401)
    auth_sessions.clear_failures(session=session, username=name)
    assert check.user.id is not None
    new = auth_sessions.create_session(
        session=session,
        user_id=check.user.id,
        lifetime=lifetime,
        now=now,
        user_agent=user_agent,
        address=address,
    )
    return LoginOutcome(new=new)


def _set_up(
    *,
    session: Any,
    username: str,
    display_name: str,
    password: str,
    address: str,
    user_agent: str,
    now: datetime,
    lifetime: timedelta,
) -> NewSession:
    """The first administrator, signed in (ValidationFailed, AlreadySetUp)."""
    user = users.create_first_admin(
        session=session, username=username, password=password, display_name=display_name
    )
    user.last_login_at = now
    assert user.id is not None
    return auth_sessions.create_session(
        session=session,
        user_id=user.id,
        lifetime=lifetime,
        now=now,
        user_agent=user_agent,
        address=address,
    )


WRONG_CODE = "That is not the setup code: it is printed in the app's log when it starts."


def _check_setup_code(
    *, session: Any, given: str, expected: str, address: str, now: datetime, limits: RateLimits
) -> LoginOutcome:
    """The setup code, in one transaction: refused while the address has too many wrong
    codes or passwords (only per address: a stranger's guesses never lock the operator
    out everywhere), a wrong one counted."""
    window = timedelta(seconds=limits.window)
    name = setup_code.FAILURE_NAME
    wait = auth_sessions.failure_wait(
        session=session,
        address=address,
        username=name,
        now=now,
        window=window,
        per_address=limits.per_address,
        per_account=10**9,
    )
    if wait is not None:
        return LoginOutcome(status=429, retry_after=wait)
    if not setup_code.matches(given, expected):
        auth_sessions.record_failure(
            session=session, address=address, username=name, now=now, window=window
        )
        return LoginOutcome(error=WRONG_CODE, status=403)
    return LoginOutcome()


class GateStore:
    """The gate's calls, each one transaction."""

    def __init__(self, get_storage: Callable[[], StorageLike]) -> None:
        self._get_storage = get_storage
        self._set_up = False  # once a user exists there always is one: asked until then

    def storage(self) -> StorageLike:
        return self._get_storage()  # RuntimeError until the services have started

    async def is_set_up(self) -> bool:
        """Whether a user exists (the first administrator was made)."""
        if not self._set_up:
            self._set_up = await self.storage().call(users.has_users)
        return self._set_up

    async def signed_in(self, token: str | None, *, now: float, max_age: float) -> SignedIn | None:
        if not token:
            return None
        return await self.storage().call(
            auth_sessions.session_user,
            token=token,
            now=as_datetime(now),
            max_age=timedelta(seconds=max_age),
        )

    async def log_in(self, **kwargs: Any) -> LoginOutcome:
        kwargs["now"] = as_datetime(kwargs["now"])
        kwargs["lifetime"] = timedelta(seconds=kwargs["lifetime"])
        return await self.storage().call(_log_in, **kwargs)

    async def check_setup_code(self, **kwargs: Any) -> LoginOutcome:
        kwargs["now"] = as_datetime(kwargs["now"])
        return await self.storage().call(_check_setup_code, **kwargs)

    async def set_up(self, **kwargs: Any) -> NewSession:
        kwargs["now"] = as_datetime(kwargs["now"])
        kwargs["lifetime"] = timedelta(seconds=kwargs["lifetime"])
        new = await self.storage().call(_set_up, **kwargs)
        self._set_up = True
        return new

    async def log_out(self, token: str, *, now: float) -> int | None:
        return await self.storage().call(
            auth_sessions.revoke_session, token=token, now=as_datetime(now)
        )

    async def log_out_everywhere(self, user_id: int, *, now: float) -> int:
        return await self.storage().call(
            auth_sessions.revoke_user_sessions, user_id=user_id, now=as_datetime(now)
        )

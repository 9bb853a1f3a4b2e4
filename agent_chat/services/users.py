"""Use cases on accounts, an administrator's: list, create, make admin or member, disable or
enable, reset a password, rename. There is no deletion (people own conversations).

The page (state/users.py) calls these; the HTTP API has no account routes. Each takes the
acting person (`user_id`) and refuses anyone but an active administrator with `Forbidden`
before it reads anything else (so a member cannot even make the server hash a password);
the store (`db/user_admin.py`) checks again under the users write lock, in the transaction
of the change, which is also where `LastAdministrator` keeps one active administrator. The
account acted on is `target_id`.
"""

from __future__ import annotations

from sqlmodel import Session

from agent_chat.db import user_admin
from agent_chat.db.errors import Forbidden, ValidationFailed
from agent_chat.db.models import AppUser, UserRole
from agent_chat.services.backend import Backend
from agent_chat.services.ids import row_id


async def require_admin(
    svc: Backend, *, user_id: int | None, refusal: str = user_admin.ADMINS_ONLY
) -> AppUser:
    """The acting person when they are an active administrator now (read now: a demoted or
    disabled one is refused at once); `Forbidden` (`refusal`) otherwise."""
    return await svc.storage.call(_admin, user_id=user_id, refusal=refusal)


def _admin(*, session: Session, user_id: int | None, refusal: str) -> AppUser:
    try:
        return user_admin.active_admin(session=session, user_id=user_id)
    except Forbidden as exc:
        raise Forbidden(refusal) from exc


async def list_users(svc: Backend, *, user_id: int) -> list[AppUser]:
    """Every account, by username (disabled ones too)."""
    await require_admin(svc, user_id=user_id)
    return await svc.storage.call(user_admin.list_users, actor_id=user_id)


async def create_user(
    svc: Backend,
    *,
    user_id: int,
    username: str,
    password: str,
    display_name: str = "",
    role: str = UserRole.MEMBER.value,
) -> AppUser:
    """A new account that can sign in at once. `ValidationFailed` on `username` (bad or
    taken), `password` (too short …), `role` (not admin or member)."""
    await require_admin(svc, user_id=user_id)
    return await svc.storage.call(
        user_admin.create_user,
        actor_id=user_id,
        username=username,
        password=password,
        display_name=display_name,
        role=role,
    )


async def set_role(svc: Backend, *, user_id: int, target_id: int, role: str) -> AppUser:
    """Make the account an administrator or a member (`ValidationFailed` on `role`
    otherwise); the last active administrator stays one (`LastAdministrator`)."""
    await require_admin(svc, user_id=user_id)
    target_id = row_id(target_id, "User")
    return await svc.storage.call(
        user_admin.set_role, actor_id=user_id, user_id=target_id, role=role
    )


async def set_disabled(svc: Backend, *, user_id: int, target_id: int, disabled: bool) -> AppUser:
    """Disable the account (its sessions end at once; it cannot sign in) or enable it
    again; the last active administrator cannot be disabled (`LastAdministrator`)."""
    await require_admin(svc, user_id=user_id)
    target_id = row_id(target_id, "User")
    if not isinstance(disabled, bool):  # a page event sends anything
        raise ValidationFailed({"disabled": "Either true or false."})
    return await svc.storage.call(
        user_admin.set_disabled, actor_id=user_id, user_id=target_id, disabled=disabled
    )


async def reset_password(
    svc: Backend, *, user_id: int, target_id: int, new_password: str
) -> AppUser:
    """Set the account's password without the old one; its sessions end. `ValidationFailed`
    on `password` for one the rules refuse."""
    await require_admin(svc, user_id=user_id)
    target_id = row_id(target_id, "User")
    return await svc.storage.call(
        user_admin.reset_password, actor_id=user_id, user_id=target_id, new_password=new_password
    )


async def rename_user(svc: Backend, *, user_id: int, target_id: int, display_name: str) -> AppUser:
    """The account's display name (its username never changes)."""
    await require_admin(svc, user_id=user_id)
    target_id = row_id(target_id, "User")
    return await svc.storage.call(
        user_admin.rename, actor_id=user_id, user_id=target_id, display_name=display_name
    )

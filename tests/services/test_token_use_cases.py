"""The page's use cases on personal API tokens (services/tokens.py): make, list, revoke. The
owner's change is made; another person gets `NotFound` (the same as for an id nobody has,
or one that is not an id) and nothing changes; an empty name is `ValidationFailed` on
`name`. A revoked token no longer acts for anyone (the gate's check, `verify_token`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from agent_chat.db import api_tokens
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.runs.storage import Storage
from agent_chat.services import tokens

NOT_IDS = (10**9, "1", None, True, 1.0)


@pytest.fixture
def svc(storage: Storage) -> SimpleNamespace:
    return SimpleNamespace(storage=storage)


async def _names(svc: SimpleNamespace, user: int) -> list[str]:
    return [t.name for t in await tokens.list_tokens(svc, user_id=user)]


async def _acts_for(svc: SimpleNamespace, token: str) -> int | None:
    return await svc.storage.call(api_tokens.verify_token, token=token)


async def test_create_token(svc: SimpleNamespace, user: int, other_user: int) -> None:
    made = await tokens.create_token(svc, user_id=user, name="  CI \n job ")
    assert made.row.name == "CI job" and made.token.startswith(api_tokens.TOKEN_PREFIX)
    assert made.token not in made.row.token_hash
    assert await _acts_for(svc, made.token) == user
    for bad in ("", "  \n "):
        with pytest.raises(ValidationFailed) as refused:
            await tokens.create_token(svc, user_id=user, name=bad)
        assert "name" in refused.value.field_errors
    assert await _names(svc, user) == ["CI job"]
    assert await _names(svc, other_user) == []


async def test_list_tokens_newest_first_own_only(
    svc: SimpleNamespace, user: int, other_user: int
) -> None:
    await tokens.create_token(svc, user_id=user, name="first")
    await tokens.create_token(svc, user_id=user, name="second")
    await tokens.create_token(svc, user_id=other_user, name="bob's")
    assert await _names(svc, user) == ["second", "first"]
    assert await _names(svc, other_user) == ["bob's"]


async def test_revoke_token(svc: SimpleNamespace, user: int, other_user: int) -> None:
    made = await tokens.create_token(svc, user_id=user, name="CLI")
    for who, token_id in [(other_user, made.row.id)] + [(user, n) for n in NOT_IDS]:
        with pytest.raises(NotFound, match="does not exist"):
            await tokens.revoke_token(svc, user_id=who, token_id=token_id)
    assert await _acts_for(svc, made.token) == user
    revoked = await tokens.revoke_token(svc, user_id=user, token_id=made.row.id)
    assert revoked.revoked_at is not None
    assert await _acts_for(svc, made.token) is None
    assert await _names(svc, user) == []
    await tokens.revoke_token(svc, user_id=user, token_id=made.row.id)  # again: no error

"""Without the stack: personal API tokens in the store and at the login gate, and the
per-seq lengths that let a stream resume inside a merged delta row."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from agent_chat.api.bearer import bearer_check
from agent_chat.auth import GateConfig, LoginGate
from agent_chat.db import api_tokens, users
from agent_chat.db.engine import open_session
from agent_chat.db.errors import ValidationFailed
from agent_chat.db.models import ApiToken, utcnow
from agent_chat.protocol.log_codec import LogRow, event_to_row, merge_rows, text_after
from agent_chat.runs.storage import Storage

CONFIG = GateConfig(session_seconds=3600)


def test_a_token_is_stored_as_a_hash_verified_and_revoked(engine: Engine, user: int) -> None:
    with open_session(engine) as session:
        made = api_tokens.create_token(user_id=user, session=session, name="  CI   job ")
    assert made.token.startswith("acht_") and len(made.token) > 40
    with open_session(engine) as session:
        row = session.get(ApiToken, made.row.id)
        assert row.name == "CI job" and row.token_hash != made.token
        assert made.token not in (row.token_hash, row.prefix) and made.token.startswith(row.prefix)
        assert row.last_used_at is None
        assert api_tokens.verify_token(session=session, token=made.token)
        assert not api_tokens.verify_token(session=session, token=made.token + "x")
        assert not api_tokens.verify_token(session=session, token="not-even-the-prefix")
    with open_session(engine) as session:
        used = session.get(ApiToken, made.row.id).last_used_at
        assert used is not None
        api_tokens.verify_token(session=session, token=made.token)
        assert session.get(ApiToken, made.row.id).last_used_at == used, "not a write per call"
        session.get(ApiToken, made.row.id).last_used_at = utcnow() - timedelta(minutes=2)
        api_tokens.verify_token(session=session, token=made.token)
        assert session.get(ApiToken, made.row.id).last_used_at > used
        api_tokens.revoke_token(user_id=user, session=session, token_id=made.row.id)
        assert not api_tokens.verify_token(session=session, token=made.token)
        assert api_tokens.list_tokens(user_id=user, session=session) == []
        assert len(api_tokens.list_tokens(user_id=user, session=session, include_revoked=True)) == 1
        with pytest.raises(ValidationFailed):
            api_tokens.create_token(user_id=user, session=session, name="   ")


async def _ok(request):
    return PlainTextResponse("inside")


async def test_the_gate_lets_a_valid_bearer_token_into_the_api_only(
    engine: Engine, user: int
) -> None:
    storage = Storage(engine)
    with open_session(engine) as session:
        token = api_tokens.create_token(user_id=user, session=session, name="script").token
        users.create_user(session=session, username="admin", password="12345678")
    inner = Starlette(routes=[Route("/api/models", _ok), Route("/chat/x", _ok)])
    gate = LoginGate(
        inner,
        storage=lambda: storage,
        config_loader=lambda: CONFIG,
        bearer=bearer_check(lambda: storage),
    )
    transport = httpx.ASGITransport(app=gate)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        bearer = {"Authorization": f"Bearer {token}"}
        assert (await client.get("/api/models", headers=bearer)).text == "inside"
        assert (await client.get("/api/models")).status_code == 401
        wrong = {"Authorization": "Bearer acht_wrong"}
        assert (await client.get("/api/models", headers=wrong)).status_code == 401
        basic = {"Authorization": f"Basic {token}"}
        assert (await client.get("/api/models", headers=basic)).status_code == 401
        assert (await client.get("/chat/x", headers=bearer)).status_code == 303, "pages: login"


async def test_before_the_services_start_no_token_is_accepted() -> None:
    def not_started() -> Storage:
        raise RuntimeError("services are not started")

    assert await bearer_check(not_started)("acht_anything") is None


@given(st.lists(st.text(max_size=5), min_size=1, max_size=8), st.data())
def test_text_after_any_seq_of_a_merged_row_is_exactly_the_later_deltas(parts, data) -> None:
    first_seq = data.draw(st.integers(1, 50))
    rows = [event_to_row("text_delta", first_seq + i, {"text": t}) for i, t in enumerate(parts)]
    merged: LogRow = rows[0]
    for row in rows[1:]:
        merged = merge_rows(merged, row)
    last = first_seq + len(parts) - 1
    for after in range(first_seq - 1, last + 1):
        expected = "".join(parts[after - first_seq + 1 :]) if after >= first_seq else "".join(parts)
        assert text_after(merged.seq, merged.content, merged.meta_json, after) == expected


def test_a_row_merged_without_lengths_is_not_cut_by_guess() -> None:
    meta = '{"seq_to": 4}'  # as rows merged before `seq_lens` were stored
    assert text_after(2, "abc", meta, 3) is None
    assert text_after(2, "abc", meta, 1) == "abc" and text_after(2, "abc", meta, 4) == ""

"""Share links in the store and their page: made from the active branch, listed, revoked,
expiring; the page holds the conversation and nothing else (no key, no other conversation,
no composer, no script), with the strict headers. SQLite and PostgreSQL (the `engine`
fixture)."""

from __future__ import annotations

import json
from datetime import timedelta
from types import SimpleNamespace

import httpx
import pytest
from sqlalchemy import Engine
from sqlmodel import select

from agent_chat.api import create_api
from agent_chat.db.engine import open_session
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.messages import append_message
from agent_chat.db.models import ShareLink, utcnow
from agent_chat.db.sessions import create_session, delete_session
from agent_chat.db.shares import hash_token, list_shares, open_share, revoke_share
from agent_chat.runs.storage import Storage
from agent_chat.share_page.links import create_share, share_path
from agent_chat.share_page.render import markdown_html, share_html
from tests.support.exports import API_KEY, build_conversation
from tests.support.exports import Conversation as Conv
from tests.support.users import default_owner


def _other(engine: Engine, title: str) -> str:
    """A second conversation (one question), which no link to the first may show."""
    with open_session(engine) as session:
        chat = create_session(user_id=default_owner(session=session), session=session, title=title)
        append_message(
            session=session, chat_session_id=chat.id, parent_id=None, role="USER",
            content=f"a question in {title}", status="SENT",
        )  # fmt: skip
        return chat.session_uuid


def _share(engine: Engine, uuid: str, expiry: str = "never"):
    with open_session(engine) as session:
        return create_share(
            session=session,
            session_uuid=uuid,
            user_id=default_owner(session=session),
            expiry=expiry,
        )


@pytest.fixture
def client(engine: Engine) -> httpx.AsyncClient:
    storage = Storage(engine)
    transport = httpx.ASGITransport(app=create_api(lambda: SimpleNamespace(storage=storage)))
    return httpx.AsyncClient(transport=transport, base_url="http://test")


def test_a_link_is_a_snapshot_of_the_active_branch_and_only_its_hash_is_stored(
    engine: Engine,
) -> None:
    conv = build_conversation(engine)
    new = _share(engine, conv.uuid, "7")
    assert len(new.token) == 32 and new.row.token_hash == hash_token(new.token)
    with open_session(engine) as session:
        stored = session.exec(select(ShareLink)).one()
    assert new.token not in json.dumps(stored.model_dump(), default=str)
    snapshot = json.loads(stored.snapshot_json)
    kinds = [m["kind"] for m in snapshot["messages"]]
    assert kinds == [
        "user", "assistant", "user", "assistant", "summary", "reset", "user", "assistant"
    ]  # fmt: skip
    assert "Paris" not in stored.snapshot_json  # another version, not on the active branch
    assert API_KEY not in stored.snapshot_json and "fake-model" not in stored.snapshot_json
    assert snapshot["messages"][1]["thinking"].startswith("Let me think about Rome.")
    assert stored.expires_at is not None
    assert timedelta(days=6.9) < stored.expires_at - stored.created_at <= timedelta(days=7)


def test_links_are_listed_revoked_and_expire(engine: Engine, user: int) -> None:
    rome = build_conversation(engine)
    paris = Conv(uuid=_other(engine, "Weekend in Paris"), ids={})
    first, second = _share(engine, rome.uuid), _share(engine, rome.uuid, "1")
    other = _share(engine, paris.uuid, "30")
    with open_session(engine) as session:
        assert [
            s.row.id for s in list_shares(user_id=user, session=session, session_uuid=rome.uuid)
        ] == [
            second.row.id,
            first.row.id,
        ]
        every = list_shares(user_id=user, session=session)
        assert [s.row.id for s in every] == [other.row.id, second.row.id, first.row.id]
        assert every[0].session_title == "Weekend in Paris"
        assert open_share(session=session, token=first.token) is not None
        revoke_share(user_id=user, session=session, share_id=first.row.id)
        assert open_share(session=session, token=first.token) is None
        assert [
            s.row.id for s in list_shares(user_id=user, session=session, session_uuid=rome.uuid)
        ] == [second.row.id]
        later = utcnow() + timedelta(days=1, seconds=1)
        assert open_share(session=session, token=second.token, now=later) is None
        assert open_share(session=session, token=other.token, now=later) is not None
        assert open_share(session=session, token="x" * 32) is None
        assert open_share(session=session, token="../../etc") is None
        with pytest.raises(NotFound):
            revoke_share(user_id=user, session=session, share_id=999_999)
    with open_session(engine) as session:  # deleting the conversation deletes its links
        delete_session(user_id=user, session=session, session_uuid=paris.uuid)
    with open_session(engine) as session:
        assert open_share(session=session, token=other.token) is None


def test_nothing_to_share_and_a_bad_expiry_are_refused(engine: Engine, user: int) -> None:
    with open_session(engine) as session:
        empty = create_session(user_id=user, session=session, title="Empty").session_uuid
    with pytest.raises(ValidationFailed, match="nothing to share"):
        _share(engine, empty)
    conv = build_conversation(engine)
    with pytest.raises(ValidationFailed, match="expiry"):
        _share(engine, conv.uuid, "365")
    with pytest.raises(NotFound):
        _share(engine, "no-such-conversation")


async def test_the_page_shows_the_conversation_and_nothing_else(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    conv = build_conversation(engine)
    _other(engine, "My secret other conversation")
    new = _share(engine, conv.uuid)
    async with client:
        page = await client.get(share_path(new.token))
        head = await client.head(share_path(new.token))
    assert page.status_code == 200 and head.status_code == 200
    text = page.text
    assert "<h1>Trip to Rome</h1>" in text
    assert "Go in June and visit the Colosseum." in text
    assert "<details class='thinking'><summary>Thinking · 1 tool call</summary>" in text
    assert "Stopped before the answer was complete." in text
    assert "This answer failed: Model endpoint down" in text
    for absent in (API_KEY, "My secret other conversation", "Paris", "fake-model", "Test model"):
        assert absent not in text
    for absent in ("<script", "<textarea", "<form", "<input", "<img", "/_event", "/api/"):
        assert absent not in text.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # the tricky message stays text
    headers = page.headers
    assert headers["cache-control"] == "private, no-store, max-age=0"
    assert headers["x-robots-tag"].startswith("noindex")
    assert headers["referrer-policy"] == "no-referrer"
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "img-src 'self';" in csp and "script" not in csp


async def test_revoked_expired_and_unknown_links_answer_404(
    engine: Engine, client: httpx.AsyncClient, user: int
) -> None:
    conv = build_conversation(engine)
    revoked, expired = _share(engine, conv.uuid), _share(engine, conv.uuid, "1")
    with open_session(engine) as session:
        revoke_share(user_id=user, session=session, share_id=revoked.row.id)
        row = session.get(ShareLink, expired.row.id)
        row.expires_at = utcnow() - timedelta(seconds=1)
        session.add(row)
    async with client:
        for path in (
            share_path(revoked.token),
            share_path(expired.token),
            share_path("A" * 32),
            "/s/short",
        ):
            answer = await client.get(path)
            assert answer.status_code == 404, path
            assert "This link does not work" in answer.text and "Trip to Rome" not in answer.text
            assert answer.headers["x-robots-tag"].startswith("noindex")


def test_markdown_is_rendered_safely() -> None:
    out = markdown_html(
        "<b>bold?</b> [click](javascript:alert(1)) [ok](https://example.org) "
        "![cat](https://example.org/cat.png) ![x](data:image/png;base64,AAAA)\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint('<hi>')\n```"
    )
    assert "<b>" not in out and "&lt;b&gt;bold?&lt;/b&gt;" in out
    assert 'href="javascript' not in out and '<a href="data' not in out  # left as text
    assert '<a href="https://example.org" rel="noopener noreferrer nofollow">ok</a>' in out
    assert "<img" not in out and "[image: cat]</a>" in out
    assert "<table>" in out and "&lt;hi&gt;" in out


def test_an_answer_still_running_when_shared_says_so() -> None:
    snapshot = {
        "title": "Live <b>one</b>",
        "taken_at": "2026-01-01T10:00:00+00:00",
        "messages": [
            {"kind": "user", "status": "SENT", "content": "Hi", "created_at": None},
            {"kind": "assistant", "status": "RUNNING", "content": "Half", "created_at": None},
        ],
    }
    page = share_html(json.dumps(snapshot), token="t" * 32)
    assert "Still being written when the link was made." in page
    assert "<h1>Live &lt;b&gt;one&lt;/b&gt;</h1>" in page

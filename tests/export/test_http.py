"""The HTTP endpoint answers with downloads and clear errors, and no API key ever leaves."""

from __future__ import annotations

import re
from types import SimpleNamespace
from uuid import uuid4

import httpx
import pytest
from sqlalchemy import Engine

from agent_chat.api import create_api
from agent_chat.db.engine import open_session
from agent_chat.db.sessions import create_session
from agent_chat.runs.storage import Storage
from tests.support.exports import API_KEY, build_conversation, db_messages
from tests.support.users import acting_as


@pytest.fixture
def client(engine: Engine, user: int) -> httpx.AsyncClient:
    storage = Storage(engine)
    api = create_api(lambda: SimpleNamespace(storage=storage))
    transport = httpx.ASGITransport(app=acting_as(api, user))
    return httpx.AsyncClient(transport=transport, base_url="http://test")


def _url(uuid: str, fmt: str = "md", branch: str = "active") -> str:
    return f"/api/chat/sessions/{uuid}/export?format={fmt}&branch={branch}"


async def test_export_endpoint_downloads_markdown_and_json(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    conv = build_conversation(engine)
    async with client:
        md = await client.get(_url(conv.uuid, "md"))
        js = await client.get(_url(conv.uuid, "json", "all"))
    assert md.status_code == 200
    assert md.headers["content-type"] == "text/markdown; charset=utf-8"
    assert re.fullmatch(
        r'attachment; filename="trip-to-rome-\d{4}-\d\d-\d\d\.md"',
        md.headers["content-disposition"],
    )
    assert md.text.startswith("# Trip to Rome\n")
    assert js.status_code == 200
    assert js.headers["content-type"] == "application/json"
    assert re.fullmatch(
        r'attachment; filename="trip-to-rome-\d{4}-\d\d-\d\d\.json"',
        js.headers["content-disposition"],
    )
    assert js.json()["format"] == "agent-chat-export"
    assert len(js.json()["messages"]) == len(db_messages(engine))


async def test_export_file_name_falls_back_for_untitled_and_non_ascii_titles(
    engine: Engine, client: httpx.AsyncClient, user: int
) -> None:
    with open_session(engine) as session:
        untitled = create_session(user_id=user, session=session).session_uuid
        cafe = create_session(user_id=user, session=session, title="Café 東京 trip!").session_uuid
    async with client:
        plain = await client.get(_url(untitled))
        fancy = await client.get(_url(cafe, "json"))
    assert re.fullmatch(
        r'attachment; filename="conversation-\d{4}-\d\d-\d\d\.md"',
        plain.headers["content-disposition"],
    )
    header = fancy.headers["content-disposition"]
    assert re.fullmatch(
        r"attachment; filename=\"cafe-trip-(\S+)\.json\"; "
        r"filename\*=UTF-8''caf%C3%A9-%E6%9D%B1%E4%BA%AC-trip-\1\.json",
        header,
    )
    assert plain.text.startswith("# New conversation\n")


async def test_export_endpoint_answers_404_for_unknown_and_malformed_sessions(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    async with client:
        unknown = await client.get(_url(str(uuid4())))
        malformed = await client.get(_url("not-a-uuid", "json"))
    for response in (unknown, malformed):
        assert response.status_code == 404
        assert response.headers["content-type"] == "application/json"
        assert "does not exist" in response.json()["detail"]


async def test_export_endpoint_answers_422_naming_the_allowed_values(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    conv = build_conversation(engine)
    async with client:
        bad_format = await client.get(_url(conv.uuid, "pdf"))
        bad_branch = await client.get(_url(conv.uuid, "md", "some"))
    assert bad_format.status_code == 422
    assert bad_format.json()["detail"] == "format must be one of: md, json (got 'pdf')"
    assert bad_branch.status_code == 422
    assert bad_branch.json()["detail"] == "branch must be one of: active, all (got 'some')"


async def test_no_export_contains_the_model_api_key(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    conv = build_conversation(engine)
    async with client:
        bodies = [
            (await client.get(_url(conv.uuid, fmt, branch))).text
            for fmt in ("md", "json")
            for branch in ("active", "all")
        ]
    assert all(body for body in bodies)
    assert not any(API_KEY in body or "api_key" in body for body in bodies)

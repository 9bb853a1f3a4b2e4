"""Import and share on the real app behind a password: the import endpoint takes a personal
token like every `/api` call; a share link's page opens with no cookie and no token, while
the paths next to it stay behind the login."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.export import to_json
from agent_chat.share_page.links import create_share, share_path
from tests.support.accounts import ADMIN_USER
from tests.support.exports import EXPORTED_AT, build_conversation, read_export
from tests.support.stack import Stack
from tests.support.users import user_named


def _export(folder: Path) -> bytes:
    url = f"sqlite:///{folder / 'source.db'}"
    migrate(url)
    engine = make_engine(url)
    try:
        conv = build_conversation(engine)
        return json.dumps(
            to_json(read_export(engine, conv, "all"), exported_at=EXPORTED_AT)
        ).encode()
    finally:
        engine.dispose()


def test_import_with_a_token_then_an_anonymous_share_link(
    client: httpx.Client, api_stack: Stack, tmp_path: Path
) -> None:
    raw = _export(tmp_path)
    anonymous = httpx.post(f"{api_stack.url}/api/chat/sessions/import", content=raw)
    assert anonymous.status_code == 401  # the import is behind the login like all of /api
    imported = client.post("/api/chat/sessions/import", content=raw)
    assert imported.status_code == 201, imported.text
    uuid = imported.json()["sessionId"]
    refused = client.post("/api/chat/sessions/import", content=b"[1, 2")
    assert refused.status_code == 400 and "not valid JSON" in refused.json()["error"]["message"]
    detail = client.get(f"/api/chat/sessions/{uuid}").json()
    assert [m["content"] for m in detail["messages"]][0] == "Plan a trip to Rome"

    engine = make_engine(api_stack.db_url)
    try:
        with open_session(engine) as session:
            owner = user_named(session=session, username=ADMIN_USER)  # the token's owner
            token = create_share(session=session, session_uuid=uuid, user_id=owner).token
    finally:
        engine.dispose()
    page = httpx.get(api_stack.url + share_path(token))  # no cookie, no token
    assert page.status_code == 200 and "<h1>Trip to Rome</h1>" in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    for path in (share_path(token) + "/x", "/s/../api/chat/sessions", "/s/" + token[:-2]):
        near = httpx.get(api_stack.url + path, follow_redirects=False)
        assert near.status_code in (303, 401), (path, near.status_code)
        assert "Trip to Rome" not in near.text

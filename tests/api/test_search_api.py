"""GET /api/chat/search: the sidebar's full-text search for scripts (details: tests/db)."""

from __future__ import annotations

import httpx
import pytest

from tests.support.api import ask, new_session

pytestmark = pytest.mark.e2e


def test_search_returns_snippets_and_never_fails_on_syntax(client: httpx.Client) -> None:
    session_id = new_session(client, title="Searchable over http")
    ask(client, session_id, "the pangolin question")
    found = client.get("/api/chat/search", params={"q": "pangol"})
    assert found.status_code == 200, found.text
    results = found.json()["results"]
    assert [r["sessionId"] for r in results] == [session_id]
    marked = [s["text"] for s in results[0]["snippet"] if s["mark"]]
    assert marked == ["pangolin"] and results[0]["role"] in ("USER", "ASSISTANT")
    for hostile in ['"', "AND OR", "*", "a:b -c (", "\\", "'; DROP TABLE x; --"]:
        reply = client.get("/api/chat/search", params={"q": hostile})
        assert reply.status_code == 200, (hostile, reply.text)
    too_long = client.get("/api/chat/search", params={"q": "x" * 201})
    assert too_long.status_code == 422 and too_long.json()["error"]["code"]

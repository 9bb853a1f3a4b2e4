"""GET /api/chat/search, folders and pins over HTTP (the details: tests/db)."""

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


def test_folders_and_pins(client: httpx.Client) -> None:
    session_id = new_session(client, title="To be filed")
    made = client.post("/api/chat/folders", json={"name": "Reports"})
    assert made.status_code == 201, made.text
    folder = made.json()
    assert client.post("/api/chat/folders", json={"name": "reports"}).status_code == 422
    assert client.post("/api/chat/folders", json={"name": ""}).status_code == 422
    patched = client.patch(
        f"/api/chat/sessions/{session_id}", json={"folderId": folder["id"], "pinned": True}
    )
    assert patched.status_code == 200, patched.text
    assert (patched.json()["folderId"], patched.json()["pinned"]) == (folder["id"], True)
    missing = client.patch(f"/api/chat/sessions/{session_id}", json={"folderId": 999999})
    assert missing.status_code == 422 and "folderId" in missing.json()["error"]["fields"]
    renamed = client.patch(f"/api/chat/folders/{folder['id']}", json={"name": "Old reports"})
    assert renamed.json()["name"] == "Old reports"
    assert "Old reports" in [f["name"] for f in client.get("/api/chat/folders").json()["folders"]]
    assert client.delete(f"/api/chat/folders/{folder['id']}").status_code == 204
    assert client.delete(f"/api/chat/folders/{folder['id']}").status_code == 404
    detail = client.get(f"/api/chat/sessions/{session_id}").json()["session"]
    assert (detail["folderId"], detail["pinned"]) == (None, True)  # kept, back in the list

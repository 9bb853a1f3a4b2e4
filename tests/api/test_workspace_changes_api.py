"""A Workspace answer's changes over HTTP (the real stack: app, bridge with hermes-agent,
the scripted model): listed with a diff, undone once (again: as it is), refused for a question;
switching versions says what became of the folder."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.support.api import new_session, read_stream, start_run

pytestmark = pytest.mark.e2e


def _script(command: str) -> str:
    return "Work in the folder\nCALL terminal " + json.dumps({"command": command})


def test_changes_listed_undone_and_followed_by_a_switch(client: httpx.Client) -> None:
    session_id = new_session(client)
    run = start_run(client, session_id, _script("printf 'a\\n' > a.txt"), toolProfile="workspace")
    assert read_stream(client, run["runId"]).last().type == "run_completed"
    answer = run["messageId"]

    changes = client.get(f"/api/chat/messages/{answer}/workspace-changes")
    assert changes.status_code == 200, changes.text
    body = changes.json()
    assert body["parentAnswerId"] is None and body["known"] and body["canUndo"]
    [change] = body["changes"]
    assert (change["path"], change["change"], change["sizeAfter"]) == ("a.txt", "added", 2)
    assert "+a\n" in change["diff"]

    question = client.get(f"/api/chat/sessions/{session_id}").json()["messages"][0]["id"]
    refused = client.get(f"/api/chat/messages/{question}/workspace-changes")
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "wrong_role"
    assert client.get("/api/chat/messages/999999999/workspace-changes").status_code == 404

    undone = client.post(f"/api/chat/messages/{answer}/workspace-changes/undo")
    assert undone.status_code == 200, undone.text
    assert undone.json()["undone"] and not undone.json()["canUndo"]

    regen = client.post(f"/api/chat/messages/{answer}/regenerate").json()
    assert read_stream(client, regen["runId"]).last().type == "run_completed"
    older = client.post(f"/api/chat/messages/{answer}/workspace-changes/undo")
    assert older.status_code == 200 and older.json()["undone"]  # undone once: as it is
    activated = client.post(f"/api/chat/messages/{answer}/activate")
    assert activated.status_code == 200
    assert activated.json()["workspace"] == {"restored": True, "answerId": answer, "note": ""}

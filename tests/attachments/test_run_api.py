"""`attachmentIds` on `POST /api/chat/sessions/{id}/runs` on the test process's real stack:
the uploaded CSV reaches the scripted model inline with its name and the message lists it
(session and messages page); another person's attachment id is the same 422 naming
`attachmentIds` as a missing one (the conversation is there, the body is wrong), with no
message stored and no run; more than ten ids are a 422 (the schema's bound)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.api import api_client, member_with_token, new_session, read_stream, start_run
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

CSV = b"city,people\nLyon,522250\nGhent,265086\n"


@pytest.fixture
def client(api_stack: Stack, api_token: str) -> Iterator[httpx.Client]:
    with api_client(api_stack, api_token) as client:
        yield client


@pytest.fixture(scope="module")
def bob(api_stack: Stack) -> Iterator[httpx.Client]:
    _, token = member_with_token(api_stack, "bob-runs", "bob's long password")
    with api_client(api_stack, token) as client:
        yield client


def _upload(client: httpx.Client, name: str, data: bytes) -> int:
    response = client.post("/api/chat/attachments", files=[("files", (name, data))])
    assert response.status_code == 201, response.text
    return response.json()["attachments"][0]["id"]


def test_a_run_with_an_attachment_sends_it_to_the_model(client, api_stack: Stack) -> None:
    csv_id = _upload(client, "cities.csv", CSV)
    session_id = new_session(client)
    run = start_run(client, session_id, "Which city is larger? (api)", attachmentIds=[csv_id])
    assert read_stream(client, run["runId"]).last().type == "run_completed"
    sent = [
        body["messages"][-1]["content"]
        for body in api_stack.fake.requests()
        if "Which city is larger? (api)" in str(body["messages"][-1]["content"])
    ]
    assert sent, "the model never got the question"
    text = sent[-1] if isinstance(sent[-1], str) else sent[-1][0]["text"]
    assert "```cities.csv\n" + CSV.decode() in text
    # The message lists its file, in the session and in a page of messages.
    detail = client.get(f"/api/chat/sessions/{session_id}").json()["messages"]
    paged = client.get(f"/api/chat/sessions/{session_id}/messages").json()["messages"]
    for messages in (detail, paged):
        question, answer = messages
        assert [(a["id"], a["name"], a["size"]) for a in question["attachments"]] == [
            (csv_id, "cities.csv", len(CSV))
        ]
        assert question["attachments"][0]["mediaType"] == "text/plain"
        assert answer["attachments"] == []


def test_another_persons_attachment_is_refused_like_a_missing_one(client, bob) -> None:
    theirs = _upload(bob, "secret.csv", b"name,salary\nbob,1\n")
    session_id = new_session(client)
    for ids in ([theirs], [2**31 - 1]):
        response = client.post(
            f"/api/chat/sessions/{session_id}/runs", json={"message": "hi", "attachmentIds": ids}
        )
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["fields"] == {"attachmentIds": f"There is no attachment {ids[0]}."}
    assert client.get(f"/api/chat/sessions/{session_id}").json()["messages"] == []


def test_more_than_ten_attachments_is_422(client) -> None:
    session_id = new_session(client)
    response = client.post(
        f"/api/chat/sessions/{session_id}/runs",
        json={"message": "hi", "attachmentIds": list(range(1, 12))},
    )
    assert response.status_code == 422, response.text
    assert client.get(f"/api/chat/sessions/{session_id}").json()["messages"] == []


def test_an_edit_keeps_or_replaces_the_files(client) -> None:
    csv_id = _upload(client, "cities.csv", CSV)
    notes_id = _upload(client, "notes.txt", b"Lyon is on the Rhone.\n")
    session_id = new_session(client)
    run = start_run(client, session_id, "Sum them (api edit)", attachmentIds=[csv_id])
    assert read_stream(client, run["runId"]).last().type == "run_completed"

    def edit(body: dict) -> list[int]:
        question = client.get(f"/api/chat/sessions/{session_id}").json()["messages"][0]
        response = client.patch(f"/api/chat/messages/{question['id']}", json=body)
        assert response.status_code == 201, response.text
        assert read_stream(client, response.json()["runId"]).last().type == "run_completed"
        new = client.get(f"/api/chat/sessions/{session_id}").json()["messages"][0]
        assert new["id"] == response.json()["newMessageId"]
        return [a["id"] for a in new["attachments"]]

    assert edit({"content": "Average them (api edit)"}) == [csv_id]  # kept
    assert edit({"content": "Read the notes", "attachmentIds": [notes_id]}) == [notes_id]
    assert edit({"content": "No files", "attachmentIds": []}) == []
    question = client.get(f"/api/chat/sessions/{session_id}").json()["messages"][0]
    bad = client.patch(
        f"/api/chat/messages/{question['id']}", json={"content": "x", "attachmentIds": [2**31 - 1]}
    )
    assert bad.status_code == 422 and "attachmentIds" in bad.json()["error"]["fields"]

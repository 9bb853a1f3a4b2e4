"""The HTTP API end to end through the real stack (app, bridge with hermes-agent, the
scripted model): what a script does with it, and how it refuses what it cannot do."""

from __future__ import annotations

import re

import httpx
import pytest

from agent_chat.db import model_configs
from agent_chat.db.engine import make_engine, open_session
from tests.fakes.model_server import CLARIFY_CHOICES, CLARIFY_QUESTION
from tests.support.api import ask, new_session, read_stream, start_run, wait_idle, wait_state
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

SECRET_KEY = "sk-never-leaves-the-server-5c1d"


def test_ask_stream_and_follow_up_in_context(client: httpx.Client) -> None:
    session_id = new_session(client, title="From a script")
    run, read = ask(client, session_id, "hello over http")
    assert read.status == 200 and read.content_type.startswith("text/event-stream")
    assert read.types()[0] == "run_started" and read.last().type == "run_completed"
    ids = read.ids()
    assert ids == sorted(set(ids)) and ids[0] == 1, "ids are the run's seqs, once each, in order"
    assert read.text() == "Echo: hello over http"
    assert read.last().data["final_text"] == "Echo: hello over http"
    # The terminal event comes once the answer is stored: the next question is accepted.
    detail = client.get(f"/api/chat/sessions/{session_id}").json()
    assert detail["session"]["title"] == "From a script"
    assert not detail["session"]["hasActiveRun"]
    user, answer = detail["messages"]
    assert (user["role"], user["content"]) == ("USER", "hello over http")
    assert (answer["id"], answer["status"]) == (run["messageId"], "SUCCESS")
    assert answer["content"] == "Echo: hello over http"
    assert answer["versionCount"] == 1 and answer["logs"][0]["type"] == "run_started"

    _, recall = ask(client, session_id, "recall")
    assert recall.text() == "Earlier you said: hello over http"
    listed = client.get("/api/chat/sessions", params={"limit": 1}).json()
    assert listed["sessions"][0]["id"] == session_id, "newest activity first"
    assert listed["sessions"][0]["lastMessagePreview"] == "Earlier you said: hello over http"


def test_regenerate_edit_versions_and_activate(client: httpx.Client) -> None:
    session_id = new_session(client)
    first, _ = ask(client, session_id, "first question")
    regen = client.post(f"/api/chat/messages/{first['messageId']}/regenerate")
    assert regen.status_code == 201, regen.text
    again = regen.json()
    assert again["newMessageId"] == again["messageId"] != first["messageId"]
    assert read_stream(client, again["runId"]).text() == "Echo: first question"
    versions = client.get(f"/api/chat/messages/{again['messageId']}/versions").json()["versions"]
    assert [v["messageId"] for v in versions] == [first["messageId"], again["messageId"]]
    assert [v["isActive"] for v in versions] == [False, True]

    activated = client.post(f"/api/chat/messages/{first['messageId']}/activate")
    assert activated.status_code == 200
    assert [v["isActive"] for v in activated.json()["versions"]] == [True, False]
    shown = client.get(f"/api/chat/sessions/{session_id}").json()["messages"]
    assert shown[1]["id"] == first["messageId"] and shown[1]["version"] == 1
    assert shown[1]["versionCount"] == 2

    edit = client.patch(
        f"/api/chat/messages/{first['userMessageId']}", json={"content": "edited question"}
    )
    assert edit.status_code == 201, edit.text
    edited = edit.json()
    assert edited["newMessageId"] == edited["userMessageId"] != first["userMessageId"]
    assert read_stream(client, edited["runId"]).text() == "Echo: edited question"
    shown = client.get(f"/api/chat/sessions/{session_id}").json()["messages"]
    assert [m["content"] for m in shown] == ["edited question", "Echo: edited question"]
    assert shown[0]["version"] == 2 and shown[0]["versionCount"] == 2


def test_paging_reset_and_export(client: httpx.Client) -> None:
    session_id = new_session(client)
    for text in ("one", "two", "three"):
        ask(client, session_id, text)
    newest = client.get(f"/api/chat/sessions/{session_id}/messages", params={"limit": 4}).json()
    assert [m["content"] for m in newest["messages"]] == [
        "two",
        "Echo: two",
        "three",
        "Echo: three",
    ]
    assert newest["hasMore"] is True
    before = newest["messages"][0]["id"]
    older = client.get(
        f"/api/chat/sessions/{session_id}/messages", params={"before": before, "limit": 4}
    ).json()
    assert [m["content"] for m in older["messages"]] == ["one", "Echo: one"]
    assert older["hasMore"] is False

    reset = client.post(f"/api/chat/sessions/{session_id}/reset", json={"keepHistory": True})
    assert reset.status_code == 200, reset.text
    _, recall = ask(client, session_id, "recall")
    assert recall.text() == "I have no earlier message.", "the agent starts afresh"

    md = client.get(f"/api/chat/sessions/{session_id}/export", params={"format": "md"})
    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    assert "Echo: three" in md.text
    js = client.get(f"/api/chat/sessions/{session_id}/export?format=json&branch=all")
    assert js.json()["format"] == "agent-chat-export"

    changed = client.patch(
        f"/api/chat/sessions/{session_id}",
        json={"title": "Counting", "skillFolder": "haiku", "modelId": None},
    )
    assert changed.status_code == 200, changed.text
    assert (changed.json()["title"], changed.json()["skillFolder"]) == ("Counting", "haiku")
    assert changed.json()["modelId"] is None
    broken = client.patch(f"/api/chat/sessions/{session_id}", json={"skillFolder": "broken"})
    assert broken.status_code == 422 and "skillFolder" in broken.json()["error"]["fields"]
    assert client.get(f"/api/chat/sessions/{session_id}").json()["session"]["title"] == "Counting"
    patched = client.patch(f"/api/chat/sessions/{session_id}", json={"archived": True})
    assert patched.json()["status"] == "ARCHIVED"
    listed = client.get("/api/chat/sessions", params={"limit": 200}).json()["sessions"]
    assert session_id not in [s["id"] for s in listed]
    assert client.delete(f"/api/chat/sessions/{session_id}").status_code == 204
    assert client.get(f"/api/chat/sessions/{session_id}").status_code == 404


def test_a_question_answered_over_http(client: httpx.Client) -> None:
    session_id = new_session(client)
    run = start_run(client, session_id, "please ask me")
    asked = read_stream(client, run["runId"], until="clarify_request")
    request = asked.last().data
    assert (request["question"], request["choices"]) == (CLARIFY_QUESTION, CLARIFY_CHOICES)
    state = wait_state(client, run["runId"], "waiting_input")
    assert state["pending"]["clarifyId"] == request["clarify_id"]
    assert state["pending"]["kind"] == "clarify"
    listed = client.get("/api/chat/sessions").json()["sessions"]
    assert next(s for s in listed if s["id"] == session_id)["waiting"] is True

    wrong = client.post(
        f"/api/chat/runs/{run['runId']}/resume", json={"clarifyId": "nope", "answer": "red"}
    )
    assert wrong.status_code == 409 and wrong.json()["error"]["code"] == "not_open"
    answered = client.post(
        f"/api/chat/runs/{run['runId']}/resume",
        json={"clarifyId": request["clarify_id"], "answer": "green"},
    )
    assert answered.status_code == 202, answered.text
    rest = read_stream(client, run["runId"], last_event_id=asked.last().id)
    assert (
        rest.types()[0] == "clarify_resolved"
        and rest.first("clarify_resolved").data["answer"] == "green"
    )
    assert rest.text().strip() == "You chose green."
    assert client.get(f"/api/chat/runs/{run['runId']}/state").json()["status"] == "succeeded"


def test_stop_a_run(client: httpx.Client) -> None:
    session_id = new_session(client)
    run = start_run(client, session_id, "long 400 delay=0.05")
    read_stream(client, run["runId"], until="text_delta")
    stopped = client.post(f"/api/chat/runs/{run['runId']}/stop")
    assert stopped.status_code == 202
    rest = read_stream(client, run["runId"])
    assert rest.last().type == "run_stopped"
    assert client.get(f"/api/chat/runs/{run['runId']}/state").json()["status"] == "stopped"
    again = client.post(f"/api/chat/runs/{run['runId']}/stop")
    assert again.status_code == 409 and again.json()["error"]["code"] == "run_finished"


def test_refusals_are_json_with_the_right_status(client: httpx.Client, api_stack: Stack) -> None:
    no_token = httpx.get(f"{api_stack.url}/api/chat/sessions", timeout=30)
    assert no_token.status_code == 401, "the app has a password: the token is needed"
    assert client.get("/api/chat/nowhere").json()["error"]["code"] == "not_found"
    wrong_method = client.put("/api/models")
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "GET"
    missing = "00000000-0000-4000-8000-000000000000"
    for response in (
        client.get(f"/api/chat/sessions/{missing}"),
        client.get("/api/chat/sessions/not-a-uuid"),
        client.post(f"/api/chat/sessions/{missing}/runs", json={"message": "hi"}),
        client.get("/api/chat/runs/unknown/state"),
        client.get("/api/chat/runs/unknown/stream"),
        client.post("/api/chat/messages/999999/regenerate"),
    ):
        assert response.status_code == 404, response.request.url
        assert response.json()["error"]["code"] == "not_found"
        assert response.json()["detail"] == response.json()["error"]["message"]

    session_id = new_session(client)
    empty = client.post(f"/api/chat/sessions/{session_id}/runs", json={"message": "  "})
    assert empty.status_code == 422 and "message" in empty.json()["error"]["fields"]
    unknown_field = client.post(
        f"/api/chat/sessions/{session_id}/runs", json={"message": "hi", "modelld": 1}
    )
    assert unknown_field.status_code == 422
    too_long = client.post(f"/api/chat/sessions/{session_id}/runs", json={"message": "x" * 100_001})
    assert too_long.status_code == 413 and too_long.json()["error"]["code"] == "message_too_long"
    run = start_run(client, session_id, "long 400 delay=0.05")
    busy = client.post(f"/api/chat/sessions/{session_id}/runs", json={"message": "and this?"})
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "run_active"
    assert client.delete(f"/api/chat/sessions/{session_id}").status_code == 409
    assert client.post(f"/api/chat/sessions/{session_id}/reset").status_code == 409
    assert client.post(f"/api/chat/messages/{run['messageId']}/activate").status_code == 409
    bad_resume = client.get(
        f"/api/chat/runs/{run['runId']}/stream", headers={"Last-Event-ID": "seven"}
    )
    assert bad_resume.status_code == 422 and "Last-Event-ID" in bad_resume.text
    # The schema says so, so a client (or a fuzzer) reading it sends only seqs.
    stream_op = client.get("/api/openapi.json").json()["paths"]["/api/chat/runs/{run_id}/stream"]
    header = next(p for p in stream_op["get"]["parameters"] if p["name"] == "Last-Event-ID")
    pattern = header["schema"]["pattern"]
    assert re.fullmatch(pattern, "12") and not re.fullmatch(pattern, "seven")
    client.post(f"/api/chat/runs/{run['runId']}/stop")
    wait_idle(client, session_id)
    # The largest seq the schema allows is one the database can compare (PostgreSQL's int4).
    stream = f"/api/chat/runs/{run['runId']}/stream?lastEventId="
    assert client.get(stream + str(2**31 - 1)).status_code == 200
    assert client.get(stream + str(2**31)).status_code == 422
    stale = client.post(
        f"/api/chat/sessions/{session_id}/runs",
        json={"message": "hi", "parentMessageId": run["userMessageId"]},
    )
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "not_branch_end"
    wrong_role = client.patch(f"/api/chat/messages/{run['messageId']}", json={"content": "x"})
    assert wrong_role.status_code == 422 and wrong_role.json()["error"]["code"] == "wrong_role"


def test_no_api_key_in_any_response(client: httpx.Client, api_stack: Stack) -> None:
    engine = make_engine(api_stack.db_url)
    try:
        with open_session(engine) as session:
            model = model_configs.create_model(
                session=session,
                name="Keyed fake",
                base_url=api_stack.fake.base_url,
                model_name="fake-model",
                api_key=SECRET_KEY,
            )
            model_id = model.id
    finally:
        engine.dispose()
    session_id = new_session(client, modelId=model_id)
    run, read = ask(client, session_id, "hello with a key")
    assert read.text() == "Echo: hello with a key"
    models = client.get("/api/models")
    keyed = next(m for m in models.json() if m["id"] == model_id)
    assert keyed["hasApiKey"] is True
    bodies = [
        models.text,
        client.get(f"/api/chat/sessions/{session_id}").text,
        client.get("/api/chat/sessions").text,
        client.get(f"/api/chat/runs/{run['runId']}/state").text,
        client.get(f"/api/chat/runs/{run['runId']}/stream").text,
        client.get(f"/api/chat/sessions/{session_id}/export?format=json&branch=all").text,
        client.get("/api/openapi.json").text,
    ]
    assert all(SECRET_KEY not in body for body in bodies)
    skills = client.get("/api/skills").json()
    assert {s["folderName"]: s["valid"] for s in skills}["haiku"] is True


def test_docs_page_is_served_by_the_app(client: httpx.Client) -> None:
    page = client.get("/api/docs")
    assert page.status_code == 200 and "/api/docs/static/swagger-ui-bundle.js" in page.text
    script = client.get("/api/docs/static/swagger-ui-bundle.js")
    assert script.status_code == 200 and len(script.content) > 100_000
    assert client.get("/api/openapi.json").json()["openapi"].startswith("3.")

"""A request body takes the JSON types its schema says, no other (schemathesis
found `{"message": …, "modelId": true}` started a run with model 1, a schema-violating request
accepted). Pydantic's lax mode turned `true` into 1, `"2"` into 2 and `"yes"` into True; a
whole number written 5.0 is a JSON Schema integer and still taken."""

from __future__ import annotations

import httpx
import pytest
from pydantic import ValidationError

from agent_chat.api.folders import FolderBody
from agent_chat.api.schemas import MessageEdit, RunCreate, SessionCreate, SessionPatch
from tests.support.api import new_session

WRONG_TYPES = [
    (RunCreate, {"message": "hi", "modelId": True}, "modelId"),
    (RunCreate, {"message": "hi", "maxIterations": "5"}, "maxIterations"),
    (RunCreate, {"message": "hi", "parentMessageId": 1.5}, "parentMessageId"),
    (RunCreate, {"message": 5}, "message"),
    (SessionCreate, {"modelId": "1"}, "modelId"),
    (SessionPatch, {"archived": "yes"}, "archived"),
    (SessionPatch, {"pinned": 1}, "pinned"),
    (SessionPatch, {"folderId": False}, "folderId"),
    (MessageEdit, {"content": ["hi"]}, "content"),
    (FolderBody, {"name": 7}, "name"),
]


@pytest.mark.parametrize(("model", "body", "field"), WRONG_TYPES)
def test_a_body_of_the_wrong_json_type_is_refused(model: type, body: dict, field: str) -> None:
    with pytest.raises(ValidationError) as refused:
        model.model_validate(body)
    assert [error["loc"] for error in refused.value.errors()] == [(field,)]


def test_the_right_types_are_still_taken() -> None:
    # 5.0 is a JSON Schema integer (what schemathesis sends as a valid one).
    run = RunCreate.model_validate({"message": "hi", "modelId": 3, "maxIterations": 5.0})
    assert (run.model_id, run.max_iterations) == (3, 5)
    patch = SessionPatch.model_validate({"archived": True, "pinned": False, "folderId": None})
    assert (patch.archived, patch.pinned, patch.folder_id) == (True, False, None)


@pytest.mark.e2e
@pytest.mark.every_database
def test_over_http_a_boolean_model_id_is_a_422_naming_it(client: httpx.Client) -> None:
    session_id = new_session(client)
    response = client.post(
        f"/api/chat/sessions/{session_id}/runs", json={"message": "hi", "modelId": True}
    )
    assert response.status_code == 422, response.text
    assert set(response.json()["error"]["fields"]) == {"modelId"}
    patched = client.patch(f"/api/chat/sessions/{session_id}", json={"archived": "true"})
    assert patched.status_code == 422, patched.text
    assert set(patched.json()["error"]["fields"]) == {"archived"}

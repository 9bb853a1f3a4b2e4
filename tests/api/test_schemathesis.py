"""A property-based run of schemathesis against `/api/openapi.json` of the running app:
every operation, a bounded number of generated requests (valid and invalid ones), and for
each response: no 5xx, a documented status code and content type, a body matching the
schema, invalid requests refused. Runs the requests start are stopped afterwards."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from urllib.parse import unquote

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.checks import positive_data_acceptance

from agent_chat.api import create_api
from tests.support.api import api_client
from tests.support.stack import ARTIFACTS, Stack

pytestmark = pytest.mark.e2e

MAX_EXAMPLES = 10  # per operation and generation mode (with its explicit examples): ~30 s
# Fields whose schema-valid values can still be wrong (422 naming them is right).
SEMANTIC_FIELDS = {
    *("message", "content", "title", "modelId", "skillFolder", "format", "branch"),
    "messageId",  # editing an answer or regenerating a question: the wrong kind of message
    "file",  # an import: any JSON object fits the schema, only an export of this app is taken
    "name",  # a folder: a blank name, or one another folder has
    "folderId",  # filing a conversation in a folder that does not exist
}
calls: Counter[str] = Counter()
statuses: Counter[int] = Counter()
outside_the_app: Counter[str] = Counter()


# The document the app serves, built here without the app (pytest needs the operations when
# it collects); the first test checks the app serves exactly this one.
SPEC = create_api(lambda: None).openapi()
schema = schemathesis.openapi.from_dict(SPEC)


@pytest.fixture(scope="module")
def base_url(api_stack: Stack, api_token: str) -> Iterator[str]:
    yield api_stack.url
    _stop_every_run(api_stack, api_token)
    summary = (
        f"schemathesis: {len(calls)} operations, {sum(calls.values())} requests, "
        f"statuses {dict(sorted(statuses.items()))}; "
        f"{sum(outside_the_app.values())} with a newline in the path (refused outside the app)\n"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "schemathesis-summary.txt").write_text(summary)
    print("\n" + summary)


def test_the_app_serves_this_document(base_url: str, api_token: str) -> None:
    served = httpx.get(f"{base_url}/api/openapi.json", headers=_auth(api_token), timeout=30)
    assert served.status_code == 200
    doc = served.json()
    assert doc.keys() == SPEC.keys() and doc["components"] == SPEC["components"]
    for path, operations in SPEC["paths"].items():
        for method, operation in operations.items():
            assert doc["paths"][path][method] == operation, (method, path)
    assert doc == SPEC


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,  # the same requests every run: a failure reproduces
)
def test_every_operation_conforms_to_its_schema(
    case: schemathesis.Case, base_url: str, api_token: str
) -> None:
    path_values = [unquote(str(v)) for v in (case.path_parameters or {}).values()]
    if any("\n" in value for value in path_values):
        # Reflex's outermost router mounts the app with `/(?P<path>.*)`, which matches no
        # newline: such a path never reaches the app (nor its guard) and gets Starlette's
        # plain-text 404 there. Refused, which is right; its content type is not ours.
        response = case.call(base_url=base_url, headers=_auth(api_token), timeout=30)
        assert response.status_code == 404
        outside_the_app[case.operation.label] += 1
        return
    response = case.call_and_validate(
        base_url=base_url,
        headers=_auth(api_token),
        timeout=30,
        excluded_checks=[positive_data_acceptance],
    )
    calls[case.operation.label] += 1
    statuses[response.status_code] += 1
    # Instead of schemathesis' positive_data_acceptance: a schema-valid request may still be
    # refused with 422 for what a schema cannot say (a blank message, an unknown model or
    # skill), and then the error must name that field. Anything else is a 4xx it allows.
    positive = case.meta is not None and case.meta.generation.mode == GenerationMode.POSITIVE
    if positive and response.status_code == 422:
        fields = set(response.json()["error"].get("fields") or {})
        assert fields and fields <= SEMANTIC_FIELDS, (fields, case.as_curl_command())


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _stop_every_run(stack: Stack, token: str) -> None:
    """Generated messages start real runs: stop them, so the next test module starts idle."""
    with api_client(stack, token, timeout=30) as client:
        deadline = time.monotonic() + 60
        while True:
            sessions = client.get("/api/chat/sessions", params={"limit": 200, "archived": True})
            busy = [s["id"] for s in sessions.json()["sessions"] if s["hasActiveRun"]]
            if not busy:
                return
            assert time.monotonic() < deadline, f"runs still going in {busy}"
            for session_id in busy:
                messages = client.get(f"/api/chat/sessions/{session_id}", params={"logs": False})
                for message in messages.json()["messages"]:
                    if message["status"] == "RUNNING" and message["runId"]:
                        client.post(f"/api/chat/runs/{message['runId']}/stop")
            time.sleep(0.5)

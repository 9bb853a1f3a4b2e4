"""MCP servers over HTTP (`/api/mcp/*`, api/mcp.py) against the real stack: an administrator
adds a server (the tests' own MCP server, tests/support/mcp_server.py), tests it before and
after saving, sees its status, changes it keeping its secret, deletes it; a secret is never in
a response; bad input is a 422 naming the field in camelCase; a member gets 403 and sees only
the names their own conversation gets; a tool's picture is served to its conversation's owner
only."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest

from agent_chat.common.tool_images import names_in
from tests.support.api import api_client, ask, member_with_token, new_session
from tests.support.mcp_server import PICTURE
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

MEMBER, MEMBER_PASSWORD = "bob-mcp", "bob's long mcp password"
SECRET = "plum-secret-value-31"
SERVER = {
    "name": "tst",
    "transport": "stdio",
    "command": sys.executable,
    "args": ["-m", "tests.support.mcp_server"],
    "env": {"MCP_TEST_SECRET": SECRET},
    "ask": False,
}


@pytest.fixture(autouse=True)
def no_servers_left(client: httpx.Client) -> Iterator[None]:
    yield
    for row in client.get("/api/mcp/servers").json()["servers"]:
        client.delete(f"/api/mcp/servers/{row['id']}")


@pytest.fixture(scope="module")
def member(api_stack: Stack) -> Iterator[httpx.Client]:
    _, token = member_with_token(api_stack, MEMBER, MEMBER_PASSWORD)
    with api_client(api_stack, token) as client:
        yield client


def test_an_administrator_adds_tests_changes_and_deletes_a_server(client: httpx.Client) -> None:
    unsaved = client.post("/api/mcp/test", json=SERVER, timeout=90)
    assert unsaved.status_code == 200, unsaved.text
    assert unsaved.json()["ok"] and "whisper" in {t["name"] for t in unsaved.json()["tools"]}

    created = client.post("/api/mcp/servers", json=SERVER)
    assert created.status_code == 201, created.text
    made = created.json()
    assert made["envNames"] == ["MCP_TEST_SECRET"] and "env" not in made
    assert made["ask"] is False and made["enabled"] is True and made["profiles"] == []
    server = f"/api/mcp/servers/{made['id']}"
    assert client.get(server).json() == made
    assert client.get("/api/mcp/servers").json()["servers"] == [made]

    tested = client.post(f"{server}/test", timeout=90).json()
    assert tested["ok"] and {t["name"] for t in tested["tools"]} == {
        "add",
        "whisper",
        "crash",
        "hang",
        "picture",
    }
    # A change that leaves the secret as null keeps it.
    changed = client.put(server, json={**SERVER, "env": {"MCP_TEST_SECRET": None}, "timeout": 30})
    assert changed.status_code == 200, changed.text
    assert changed.json()["timeout"] == 30 and changed.json()["envNames"] == ["MCP_TEST_SECRET"]
    status = client.get("/api/mcp/status").json()["servers"]
    assert [row["name"] for row in status] == ["tst"] and status[0]["bridge"]
    # No response carried the secret.
    for response in (unsaved, created, changed):
        assert SECRET not in response.text
    assert SECRET not in client.get("/api/mcp/servers").text

    assert client.delete(server).status_code == 204
    assert client.get(server).status_code == 404


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"include": ["add"], "exclude": ["hang"]}, "exclude"),
        ({"profiles": ["nonsense"]}, "profiles"),
        ({"env": {"NEVER_STORED": None}}, "env"),
        ({"transport": "http"}, "url"),
        ({"name": "Not OK"}, "name"),
        ({"connectTimeout": 0}, "connectTimeout"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(
    client: httpx.Client, change: dict, field: str
) -> None:
    response = client.post("/api/mcp/servers", json={**SERVER, **change})
    assert response.status_code == 422, response.text
    assert field in response.json()["error"]["fields"], response.json()
    assert client.get("/api/mcp/servers").json()["servers"] == []


def test_a_member_is_refused_and_sees_only_their_conversations_names(
    client: httpx.Client, member: httpx.Client
) -> None:
    assert client.post("/api/mcp/servers", json=SERVER).status_code == 201
    for method, path in (
        ("GET", "/api/mcp/servers"),
        ("POST", "/api/mcp/servers"),
        ("POST", "/api/mcp/test"),
        ("GET", "/api/mcp/status"),
    ):
        body = SERVER if method == "POST" else None
        response = member.request(method, path, json=body)
        assert response.status_code == 403, (method, path, response.text)
        assert SECRET not in response.text
    mine = new_session(member)
    names = member.get(f"/api/chat/sessions/{mine}/mcp-servers")
    assert names.status_code == 200 and names.json() == {"servers": ["tst"]}
    # Another person's conversation is the 404 of a missing one.
    theirs = new_session(client)
    assert member.get(f"/api/chat/sessions/{theirs}/mcp-servers").status_code == 404


def test_a_tools_picture_is_served_to_the_conversations_owner_only(
    client: httpx.Client, member: httpx.Client
) -> None:
    assert client.post("/api/mcp/servers", json=SERVER).status_code == 201
    mine = new_session(client)
    _, read = ask(client, mine, "draw\nCALL mcp__tst__picture {}")
    assert read.last().type == "run_completed", read.types()
    [name] = names_in(read.first("tool_end").data["result"])  # the event names it
    url = f"/api/chat/sessions/{mine}/tool-images/{name}"
    shown = client.get(url)
    assert shown.status_code == 200, shown.text
    assert shown.content == PICTURE and shown.headers["content-type"] == "image/png"
    assert shown.headers["x-content-type-options"] == "nosniff"
    # Another person: the 404 of a missing picture; so is a name that is not one.
    assert member.get(url).status_code == 404
    assert (
        client.get(f"/api/chat/sessions/{mine}/tool-images/img_000000000000.png").status_code == 404
    )
    assert client.get(f"/api/chat/sessions/{mine}/tool-images/..%2F..%2Fx.png").status_code == 404

"""`agent-chat mcp …` against the real stack: an administrator adds the tests' own MCP server
(saved, then tested: its tools listed), lists it, sees its status, disables and enables it
(its secret kept), deletes it; a server that does not connect is saved and its reason printed
with exit status 1; a conversation's servers are listed for anyone."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest

from agent_chat.cli.__main__ import main
from tests.cli.runner import Cli
from tests.support.api import api_client, new_session
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

COMMAND = f"{sys.executable} -m tests.support.mcp_server"
SECRET = "damson-secret-77"


@pytest.fixture
def client(api_stack: Stack, api_token: str) -> Iterator[httpx.Client]:
    with api_client(api_stack, api_token) as client:
        yield client
        for row in client.get("/api/mcp/servers").json()["servers"]:
            client.delete(f"/api/mcp/servers/{row['id']}")


@pytest.fixture
def run(cli: Cli, capsys: pytest.CaptureFixture[str]):
    """`agent-chat ARGS` in this process: (exit status, stdout, stderr)."""

    def call(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            status = main(["--url", cli.stack.url, "--token", cli.token, *args])
        except SystemExit as exc:
            status = int(exc.code or 0)
        out, err = capsys.readouterr()
        return status, out, err

    return call


def test_add_list_status_disable_enable_delete(run, client: httpx.Client) -> None:
    status, out, err = run(
        "mcp", "add", "tst", "--command", COMMAND, "--env", f"MCP_TEST_SECRET={SECRET}",
        "--no-ask",
    )  # fmt: skip
    assert status == 0, err
    assert "MCP server tst saved" in out and "5 tools: " in out and "whisper" in out
    status, out, _ = run("mcp", "list")
    assert status == 0 and "tst\tstdio\t" in out and "enabled" in out and SECRET not in out
    status, out, _ = run("mcp", "status")
    assert status == 0 and out.startswith("tst\t")
    assert run("mcp", "disable", "tst")[1].strip() == "MCP server tst disabled"
    row = client.get("/api/mcp/servers").json()["servers"][0]
    assert row["enabled"] is False and row["envNames"] == ["MCP_TEST_SECRET"]  # kept
    assert run("mcp", "enable", "tst")[0] == 0
    status, out, _ = run("mcp", "test", "tst")
    assert status == 0 and "connected" in out
    chat = new_session(client)
    assert run("mcp", "session", chat)[1].strip() == "tst"
    assert run("mcp", "delete", "tst")[1].strip() == "MCP server tst deleted"
    assert client.get("/api/mcp/servers").json()["servers"] == []
    status, _, err = run("mcp", "test", "tst")
    assert status == 1 and "no MCP server named 'tst'" in err


def test_a_server_that_does_not_connect_is_saved_with_its_reason(run, client) -> None:
    status, out, err = run("mcp", "add", "gone", "--command", "/no/such/server")
    assert status == 1 and "saved" in out
    assert "gone does not connect: Command not found" in err
    assert [r["name"] for r in client.get("/api/mcp/servers").json()["servers"]] == ["gone"]
    status, _, err = run("mcp", "add", "bad name", "--command", COMMAND)
    assert status == 1 and "name" in err and "HTTP 422" in err
    status, _, err = run("mcp", "add", "x", "--url", "http://h", "--header", "oops")
    assert status == 1 and "'oops' is not NAME=VALUE" in err

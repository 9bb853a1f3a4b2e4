"""`agent-chat changes` against the real stack: a Workspace answer's changes as a diff,
undone with --undo; a question is refused with the API's words and exit status 1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from agent_chat.cli.__main__ import main
from tests.cli.runner import Cli
from tests.support.api import api_client, new_session, read_stream, start_run
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e


@pytest.fixture
def client(api_stack: Stack, api_token: str) -> Iterator[httpx.Client]:
    with api_client(api_stack, api_token) as client:
        yield client


def test_changes_and_undo(cli: Cli, client: httpx.Client, capsys: pytest.CaptureFixture) -> None:
    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        status = main(["--url", cli.stack.url, "--token", cli.token, *args])
        out, err = capsys.readouterr()
        return status, out, err

    session_id = new_session(client)
    command = json.dumps({"command": "printf 'hi\\n' > note.txt"})
    started = start_run(
        client, session_id, f"Work\nCALL terminal {command}", toolProfile="workspace"
    )
    assert read_stream(client, started["runId"]).last().type == "run_completed"
    answer = str(started["messageId"])

    status, out, err = run("changes", answer)
    assert status == 0, err
    assert out.startswith("added\tnote.txt\n") and "+hi" in out
    status, out, _ = run("changes", answer, "--undo")
    assert status == 0 and out.strip() == f"Undone: the files are back as before answer {answer}."
    assert "Its changes were undone." in run("changes", answer)[1]
    status, _, err = run("changes", str(started["userMessageId"]))
    assert status == 1 and "assistant message" in err

"""`agent-chat ask --attach FILE` against the real stack: the files reach the agent with the
message (a new conversation and a follow-up); a missing file is a usage error (exit 2) and a
file the server refuses (empty) says the server's words with the file's name; either way
nothing is sent: no upload, no conversation, no request to the model."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from agent_chat.db.attachment_models import Attachment
from agent_chat.db.engine import make_engine, open_session
from agent_chat.db.models import ChatSession
from tests.cli.runner import Cli, session_of

pytestmark = pytest.mark.e2e

CSV = "city,people\nLyon,522250\nGhent,265086\n"
NOTES = "Lyon is on the Rhône.\n"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _turn_to_model(cli: Cli, message: str) -> str:
    """The last user turn the model was sent holding `message` (a title request for the
    conversation may come after the answer's, so the search goes backwards)."""
    for body in reversed(cli.stack.fake.requests()):
        for turn in reversed(body["messages"]):
            if turn.get("role") == "user" and message in _text(turn.get("content")):
                return _text(turn["content"])
    raise AssertionError(f"the model never got {message!r}")


def _counts(cli: Cli) -> tuple[int, int, int]:
    """Conversations, stored uploads and model requests: what sending anything would add to."""
    engine = make_engine(cli.stack.db_url)
    try:
        with open_session(engine) as session:
            chats = session.execute(select(func.count()).select_from(ChatSession)).scalar_one()
            files = session.execute(select(func.count()).select_from(Attachment)).scalar_one()
    finally:
        engine.dispose()
    return chats, files, len(cli.stack.fake.requests())


def test_an_attached_csv_reaches_the_agent(cli: Cli, tmp_path: Path) -> None:
    csv = tmp_path / "cities.csv"
    csv.write_text(CSV)
    result = cli.run("ask", "Which city is larger? (cli)", "--attach", str(csv))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Echo: Which city is larger? (cli)")
    turn = _turn_to_model(cli, "Which city is larger? (cli)")
    assert "```cities.csv\n" + CSV in turn


def test_two_files_on_a_follow_up(cli: Cli, tmp_path: Path) -> None:
    first = cli.run("ask", "a conversation to follow up (cli attach)")
    assert first.returncode == 0, first.stderr
    session_id = session_of(first.stderr)
    csv, notes = tmp_path / "cities.csv", tmp_path / "notes.txt"
    csv.write_text(CSV)
    notes.write_text(NOTES)
    args = ("--session", session_id, "--attach", str(csv), "--attach", str(notes))
    again = cli.run("ask", "Both files, please (cli)", *args)
    assert again.returncode == 0, again.stderr
    assert session_of(again.stderr) == session_id
    turn = _turn_to_model(cli, "Both files, please (cli)")
    assert "```cities.csv\n" + CSV in turn and "```notes.txt\n" + NOTES in turn
    assert turn.index("cities.csv") < turn.index("notes.txt"), "in the order given"


def test_a_missing_file_is_a_usage_error_and_sends_nothing(cli: Cli, tmp_path: Path) -> None:
    csv = tmp_path / "cities.csv"
    csv.write_text(CSV)
    missing = tmp_path / "nowhere.csv"
    before = _counts(cli)
    result = cli.run("ask", "never sent (cli)", "--attach", str(csv), "--attach", str(missing))
    assert result.returncode == 2, result.stderr
    assert str(missing) in result.stderr and "No such file" in result.stderr
    assert _counts(cli) == before


def test_too_many_files_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    args = []
    for n in range(11):
        (tmp_path / f"{n}.txt").write_text(f"{n}\n")
        args += ["--attach", str(tmp_path / f"{n}.txt")]
    before = _counts(cli)
    result = cli.run("ask", "never sent (cli)", *args)
    assert result.returncode == 2, result.stderr
    assert "at most 10" in result.stderr and str(tmp_path / "10.txt") in result.stderr
    assert _counts(cli) == before


def test_a_file_the_server_refuses_says_why_and_sends_nothing(cli: Cli, tmp_path: Path) -> None:
    csv, empty = tmp_path / "cities.csv", tmp_path / "empty.txt"
    csv.write_text(CSV)
    empty.write_bytes(b"")
    chats, _, requests = _counts(cli)
    result = cli.run("ask", "never sent (cli)", "--attach", str(csv), "--attach", str(empty))
    assert result.returncode == 1, result.stderr
    assert f"{empty} was not attached: “empty.txt” is empty." in result.stderr
    assert "HTTP 422" in result.stderr
    after = _counts(cli)
    # The CSV before it was stored (unused: the server sweeps it), nothing else happened.
    assert (after[0], after[2]) == (chats, requests)
    assert result.stdout == ""


def test_export_with_files_carries_them(cli: Cli, tmp_path: Path) -> None:
    data = b"day,city\n1,Lyon\n"
    source = tmp_path / "trip.csv"
    source.write_bytes(data)
    asked = cli.run("ask", "Plan it (cli export)", "--attach", str(source))
    assert asked.returncode == 0, asked.stderr
    session_id = session_of(asked.stderr)
    exported = cli.run("export", session_id, "--format", "json", "--files")
    assert exported.returncode == 0, exported.stderr
    (question,) = [m for m in json.loads(exported.stdout)["messages"] if m["role"] == "USER"]
    assert base64.b64decode(question["attachments"][0]["data"]) == data
    refused = cli.run("export", session_id, "--files")  # Markdown: names only
    assert refused.returncode == 2 and "--files needs --format json" in refused.stderr

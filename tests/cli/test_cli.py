"""`agent-chat` against the real stack, run as a user runs it (a process), on an app with a
password: the CLI gets in with a personal API token (`Authorization: Bearer`). The stack is
the one tests/api uses (tests/support/api.py)."""

from __future__ import annotations

import os
import pty
import re
import select
import sys
import time

import httpx
import pytest

from agent_chat.db import api_tokens
from agent_chat.db.engine import make_engine, open_session
from tests.cli.runner import Cli, session_of
from tests.fakes.model_server import CLARIFY_CHOICES, CLARIFY_QUESTION

pytestmark = pytest.mark.e2e


def test_ask_streams_the_answer_and_follows_up(cli: Cli) -> None:
    first = cli.run("ask", "hello from the cli")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Echo: hello from the cli\n"
    session_id = session_of(first.stderr)
    again = cli.run("ask", "recall", "--session", session_id, "--model", "Fake model")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "Earlier you said: hello from the cli"

    listed = cli.run("sessions")
    assert listed.returncode == 0 and session_id in listed.stdout
    exported = cli.run("export", session_id, "--format", "md")
    assert exported.returncode == 0
    assert exported.stdout.startswith("# hello from the cli")
    assert "Earlier you said: hello from the cli" in exported.stdout


def test_a_question_answered_with_answer_option(cli: Cli) -> None:
    result = cli.run("ask", "please ask me", "--answer", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"You chose {CLARIFY_CHOICES[1]}."
    assert "[waiting for you · tool: clarify]" in result.stderr


def test_a_question_nobody_can_answer_stops_the_run(cli: Cli) -> None:
    result = cli.run("ask", "please ask me")
    assert result.returncode == 1
    assert f"The agent asks: {CLARIFY_QUESTION}" in result.stderr and "--answer" in result.stderr


def test_a_question_answered_interactively_in_a_terminal(cli: Cli) -> None:
    """In a terminal (a pty): the live view, the numbered choices, a typed answer."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI with the pty as its terminal
        env = cli.env(cli.token) | {"COLUMNS": "100", "TERM": "xterm"}
        os.execvpe(sys.executable, [sys.executable, "-m", "agent_chat.cli", "ask", "ask me"], env)
    output = _read_until(fd, "1-3 or your own answer", timeout=90)
    assert CLARIFY_QUESTION in output
    assert all(f"{n}) {c}" in output for n, c in enumerate(CLARIFY_CHOICES, 1)), output
    os.write(fd, b"3\r")
    output += _read_until(fd, None, timeout=90)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, output
    assert f"You chose {CLARIFY_CHOICES[2]}." in output


def test_without_a_valid_token_the_app_refuses(cli: Cli, user: int) -> None:
    missing = cli.run("sessions", token=None)
    assert missing.returncode == 1 and "HTTP 401" in missing.stderr
    assert "--token" in missing.stderr
    wrong = cli.run("sessions", token="acht_not-a-real-token")
    assert wrong.returncode == 1 and "HTTP 401" in wrong.stderr

    engine = make_engine(cli.stack.db_url)
    try:
        with open_session(engine) as session:
            made = api_tokens.create_token(user_id=user, session=session, name="to revoke")
        assert cli.run("sessions", token=made.token).returncode == 0
        with open_session(engine) as session:
            used = session.get(type(made.row), made.row.id)
            assert used.last_used_at is not None, "the token's last use is recorded"
            api_tokens.revoke_token(user_id=user, session=session, token_id=made.row.id)
    finally:
        engine.dispose()
    assert cli.run("sessions", token=made.token).returncode == 1
    headers = {"Authorization": f"Bearer {cli.token}"}
    assert httpx.get(f"{cli.stack.url}/api/models", headers=headers).status_code == 200
    # A token opens the API only, not the pages or the websocket.
    page = httpx.get(f"{cli.stack.url}/settings/models", headers=headers)
    assert page.status_code == 303 and page.headers["location"].startswith("/login")


def _read_until(fd: int, marker: str | None, timeout: float) -> str:
    """What the pty shows until `marker` appears (or, with None, until the child exits)."""
    out, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed its terminal
            break
        if not chunk:
            break
        out += chunk
        if marker and marker in out.decode("utf-8", "replace"):
            break
    # Without the terminal's colour and cursor codes.
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode("utf-8", "replace"))

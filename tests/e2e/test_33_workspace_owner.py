"""Another person's workspace through the page's own websocket: a member who
knows an administrator's conversation uuid (it is in every chat URL and download link)
drives the chat page's events by hand (load, open the workspace drawer, select a file) and
gets neither the file list nor a file's text. The control: the owner, with the same frames,
gets both, so the test fails if the check went away."""

from __future__ import annotations

import uuid

import pytest

from agent_chat.db import sessions
from agent_chat.db.engine import make_engine, open_session
from agent_chat.state.chat import ChatState
from agent_chat.state.workspace import WorkspaceState
from tests.support.accounts import ensure_member, session_cookie, user_id_of
from tests.support.attacks import drive_events, event_url
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

MALLORY, MALLORY_PASSWORD = "mallory", "mallory's own long password"
SECRET = "the launch code is 0000"


def _admins_conversation(stack: Stack) -> str:
    """A conversation of the stack's administrator with `secret.txt` in its workspace."""
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            chat = sessions.create_session(
                session=session, user_id=user_id_of(stack.db_url), title="Private plans"
            )
            session_uuid = chat.session_uuid
    finally:
        engine.dispose()
    folder = stack.tmp / "workspaces" / session_uuid
    folder.mkdir(parents=True)
    (folder / "secret.txt").write_text(SECRET, encoding="utf-8")
    return session_uuid


def _drive(stack: Stack, cookie: str, session_uuid: str, path: str = "secret.txt") -> str:
    workspace = WorkspaceState.get_full_name()
    return drive_events(
        event_url(stack.url),
        cookie,
        f"/chat/{session_uuid}",
        [
            (f"{ChatState.get_full_name()}.load_chat", {}),
            (f"{workspace}.open_workspace", {}),
            (f"{workspace}.select_file", {"path": path}),
        ],
    )


def test_another_persons_workspace_gives_nothing_over_the_websocket(stack: Stack) -> None:
    session_uuid = _admins_conversation(stack)
    ensure_member(stack.db_url, MALLORY, MALLORY_PASSWORD)
    mallory = session_cookie(stack.url, MALLORY, MALLORY_PASSWORD)

    taken = _drive(stack, mallory, session_uuid)
    assert "not_found" in taken, "the load event was not answered: the test drove nothing"
    assert SECRET not in taken
    assert "secret.txt" not in taken
    assert "Private plans" not in taken
    shown = f'current_uuid_rx_state_":"{session_uuid}"'
    assert shown not in taken  # the tab forgot the uuid it was given

    # The owner, with the same frames, gets the listing and the text.
    own = _drive(stack, stack.session_cookie, session_uuid)
    assert "secret.txt" in own and SECRET in own and shown in own


def test_a_made_up_uuid_lists_nothing_either(stack: Stack) -> None:
    taken = _drive(stack, stack.session_cookie, str(uuid.uuid4()))
    assert "secret.txt" not in taken and SECRET not in taken

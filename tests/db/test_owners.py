"""Every store family a person's request reaches: another person's rows are NotFound or
empty, with the same error and message as a missing row (no way to learn they exist)."""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session

from agent_chat import export
from agent_chat.db import api_reads, api_tokens, folders, logs, messages, pauses, queue, shares
from agent_chat.db import sessions as chats
from agent_chat.db.conversation import load_conversation
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.imports import import_conversation
from agent_chat.db.memory_views import memory_snapshot
from agent_chat.db.models import ChatSession, MessageRole, MessageStatus
from agent_chat.db.search import open_hit, search
from agent_chat.db.turns import Refused, TurnMode, TurnPlan, mark_reset, prepare_turn
from agent_chat.export.importing import read_export as parse_export
from agent_chat.export.json_export import to_json
from agent_chat.protocol.log_codec import LogRow
from agent_chat.share_page.links import create_share

MISSING = "00000000-0000-4000-8000-000000000000"


def _conversation(session: Session, owner: int, title: str = "Alice's plans") -> ChatSession:
    """A conversation of `owner`: a question, its answer RUNNING as run "run-a" with a
    logged event and an open question, and a second version of the answer."""
    chat = chats.create_session(session=session, user_id=owner, title=title)
    asked = messages.append_message(
        session=session, chat_session_id=chat.id, parent_id=None, role=MessageRole.USER,
        content="where is the secret garden", status=MessageStatus.SENT,
    )  # fmt: skip
    messages.append_message(
        session=session, chat_session_id=chat.id, parent_id=asked.id,
        role=MessageRole.ASSISTANT, content="behind the wall", status=MessageStatus.SUCCESS,
    )  # fmt: skip
    running = messages.append_message(
        session=session, chat_session_id=chat.id, parent_id=asked.id,
        role=MessageRole.ASSISTANT, content="", status=MessageStatus.RUNNING, run_id="run-a",
    )  # fmt: skip
    logs.append_logs(
        session=session,
        message_id=running.id,
        rows=[LogRow(seq=1, kind="text_delta", content="behind", meta_json='{"seq_to": 3}')],
    )
    pauses.create_pause(
        session=session, run_id="run-a", message_id=running.id, clarify_id="c1",
        question="which wall?", choices=[],
    )  # fmt: skip
    session.flush()
    return chat


def _error(call) -> str:
    with pytest.raises(NotFound) as caught:
        call()
    return str(caught.value)


def test_another_persons_conversation_is_missing_to_every_session_function(
    session: Session, user: int, other_user: int
) -> None:
    chat = _conversation(session, user)
    uuid = chat.session_uuid
    assert chats.get_session(session=session, session_uuid=uuid, user_id=other_user) is None
    assert chats.get_session(session=session, session_uuid=uuid, user_id=user) is not None
    assert chats.list_sessions(session=session, user_id=other_user) == []
    assert chats.list_sessions(session=session, user_id=other_user, search="garden") == []
    for call in (
        lambda u, s: chats.rename_session(session=session, session_uuid=s, user_id=u, title="x"),
        lambda u, s: chats.delete_session(session=session, session_uuid=s, user_id=u),
        lambda u, s: folders.set_pinned(session=session, user_id=u, session_uuid=s, pinned=True),
        lambda u, s: folders.move_session(session=session, user_id=u, session_uuid=s, folder_id=None),
        lambda u, s: api_reads.update_session(session=session, session_uuid=s, user_id=u, title="x"),
        lambda u, s: export.collect(session=session, session_uuid=s, user_id=u),
        lambda u, s: queue.add_queued(session=session, session_uuid=s, user_id=u, content="x"),
        lambda u, s: create_share(session=session, session_uuid=s, user_id=u),
    ):  # fmt: skip
        # The same message as for a conversation that does not exist at all.
        theirs = _error(lambda call=call: call(other_user, uuid))
        missing = _error(lambda call=call: call(other_user, MISSING))
        assert theirs == missing.replace(MISSING, uuid)
    with pytest.raises(NotFound):
        chats.set_session_status(
            session=session, session_id=chat.id, user_id=other_user, status="ARCHIVED"
        )
    for read in (load_conversation, memory_snapshot):
        assert read(session=session, session_uuid=uuid, user_id=other_user, **(
            {"limit": 10} if read is load_conversation else {}
        )) is None  # fmt: skip
    assert api_reads.page_of_branch(
        session=session, session_uuid=uuid, user_id=other_user, before=None, limit=10
    ) is None  # fmt: skip
    assert queue.list_queued(session=session, session_uuid=uuid, user_id=other_user) == []
    # Nothing was changed by the refused calls.
    again = chats.get_session(session=session, session_uuid=uuid, user_id=user)
    assert again.title == "Alice's plans" and again.pinned_at is None


def test_another_persons_messages_versions_logs_and_runs_are_missing(
    session: Session, user: int, other_user: int
) -> None:
    chat = _conversation(session, user)
    branch = messages.active_branch(session=session, chat_session_id=chat.id)
    answer = branch[-1]
    assert messages.owned_message(session=session, message_id=answer.id, user_id=other_user) is None
    for call in (
        lambda: messages.siblings(session=session, message_id=answer.id, user_id=other_user),
        lambda: messages.set_active(session=session, message_id=answer.id, user_id=other_user),
        lambda: messages.switch_version(
            session=session, message_id=answer.id, user_id=other_user, step=-1
        ),
        lambda: open_hit(session=session, user_id=other_user, message_id=answer.id),
    ):
        assert _error(call) == f"Message {answer.id} does not exist"
    assert logs.owned_logs(session=session, message_id=answer.id, user_id=other_user) == []
    assert len(logs.owned_logs(session=session, message_id=answer.id, user_id=user)) == 1
    assert api_reads.logs_of(session=session, user_id=other_user, message_ids=[answer.id]) == {
        answer.id: []
    }
    assert api_reads.previews(session=session, user_id=other_user, session_ids=[chat.id]) == {}
    assert api_reads.run_info(session=session, run_id="run-a", user_id=other_user) is None
    assert api_reads.run_info(session=session, run_id="run-a", user_id=user) is not None
    assert api_reads.row_containing(
        session=session, run_id="run-a", user_id=other_user, seq=2
    ) is None  # fmt: skip
    assert api_reads.row_containing(session=session, run_id="run-a", user_id=user, seq=2)
    assert pauses.open_pauses_by_session(session=session, user_id=other_user) == {}
    assert pauses.open_pauses_by_session(session=session, user_id=user) == {chat.id: 1}
    assert messages.run_owner(session=session, run_id="run-a") == user
    # The turn transactions: their conversation "does not exist" for the other person.
    with pytest.raises(Refused, match="does not exist"):
        mark_reset(session=session, session_uuid=chat.session_uuid, user_id=other_user)
    plan = TurnPlan(TurnMode.SEND, chat.session_uuid, other_user, "hi")
    with pytest.raises(Refused, match="does not exist"):
        prepare_turn(session=session, plan=plan, run_id="r2", skill_prompt=lambda f: "")
    # The version shown did not change.
    assert messages.active_branch(session=session, chat_session_id=chat.id)[-1].id == answer.id


def test_search_finds_only_ones_own_conversations(
    session: Session, user: int, other_user: int
) -> None:
    mine = _conversation(session, user, "secret garden map")
    theirs = _conversation(session, other_user, "secret garden too")
    for who, chat in ((user, mine), (other_user, theirs)):
        hits = search(session=session, user_id=who, query="secret garden")
        assert [h.session_uuid for h in hits] == [chat.session_uuid]
        assert [h.session_uuid for h in search(session=session, user_id=who, query="map")] == (
            [mine.session_uuid] if who == user else []
        )


def test_folders_and_pins_are_each_persons_own(
    session: Session, user: int, other_user: int
) -> None:
    chat = _conversation(session, user)
    work = folders.create_folder(session=session, user_id=user, name="Work")
    # The same name is fine for someone else (names are unique per person).
    theirs = folders.create_folder(session=session, user_id=other_user, name="work")
    with pytest.raises(ValidationFailed):
        folders.create_folder(session=session, user_id=user, name="WORK")
    assert [f.id for f in folders.list_folders(session=session, user_id=other_user)] == [theirs.id]
    for call in (
        lambda: folders.rename_folder(session=session, user_id=other_user, folder_id=work.id, name="x"),
        lambda: folders.set_collapsed(session=session, user_id=other_user, folder_id=work.id, collapsed=True),
        lambda: folders.delete_folder(session=session, user_id=other_user, folder_id=work.id),
    ):  # fmt: skip
        assert _error(call) == f"Folder {work.id} does not exist"
    # Nobody files their conversation in someone else's folder.
    with pytest.raises(NotFound):
        folders.move_session(
            session=session, user_id=user, session_uuid=chat.session_uuid, folder_id=theirs.id
        )
    with pytest.raises(ValidationFailed):
        api_reads.update_session(
            session=session, session_uuid=chat.session_uuid, user_id=user, folder_id=theirs.id
        )
    folders.move_session(
        session=session, user_id=user, session_uuid=chat.session_uuid, folder_id=work.id
    )
    folders.set_pinned(session=session, user_id=user, session_uuid=chat.session_uuid, pinned=True)
    listing = folders.sidebar_listing(
        session=session, user_id=other_user, limit=50, include_archived=True
    )
    assert listing.pinned == [] and listing.unfiled == []
    assert [(f.folder.id, f.count) for f in listing.folders] == [(theirs.id, 0)]
    mine = folders.sidebar_listing(session=session, user_id=user, limit=50, include_archived=True)
    assert [c.session_uuid for c in mine.pinned] == [chat.session_uuid]


def test_queued_messages_of_another_person_cannot_be_taken(
    session: Session, user: int, other_user: int
) -> None:
    chat = _conversation(session, user)
    queued = queue.add_queued(
        session=session, session_uuid=chat.session_uuid, user_id=user, content="later"
    )
    assert queue.delete_queued(session=session, queued_id=queued.id, user_id=other_user) is None
    assert [q.content for q in queue.list_queued(
        session=session, session_uuid=chat.session_uuid, user_id=user
    )] == ["later"]  # fmt: skip


def test_share_links_are_made_listed_and_revoked_by_their_owner_only(
    session: Session, user: int, other_user: int
) -> None:
    chat = _conversation(session, user)
    link = create_share(session=session, session_uuid=chat.session_uuid, user_id=user)
    assert shares.list_shares(session=session, user_id=other_user) == []
    assert shares.list_shares(
        session=session, user_id=other_user, session_uuid=chat.session_uuid
    ) == []  # fmt: skip
    assert _error(
        lambda: shares.revoke_share(session=session, user_id=other_user, share_id=link.row.id)
    ) == _error(lambda: shares.revoke_share(session=session, user_id=other_user, share_id=10**9)).replace(
        str(10**9), str(link.row.id)
    )  # fmt: skip
    with pytest.raises(NotFound):
        shares.add_share(
            session=session, chat_session_id=chat.id, user_id=other_user, title="x",
            snapshot_json="{}", message_count=0, expires_at=None,
        )  # fmt: skip
    assert shares.open_share(session=session, token=link.token) is not None  # still open
    assert [s.row.id for s in shares.list_shares(session=session, user_id=user)] == [link.row.id]


def test_an_import_belongs_to_the_importer_and_an_export_to_the_owner(
    session: Session, user: int, other_user: int
) -> None:
    chat = _conversation(session, user)
    data = export.collect(session=session, session_uuid=chat.session_uuid, user_id=user)
    raw = json.dumps(to_json(data, exported_at=data.chat.created_at))
    done = import_conversation(session=session, plan=parse_export(raw), user_id=other_user)
    assert done.chat.owner_id == other_user
    assert [c.id for c in chats.list_sessions(session=session, user_id=other_user)] == [
        done.chat.id
    ]
    with pytest.raises(NotFound):
        export.collect(session=session, session_uuid=done.chat.session_uuid, user_id=user)


def test_api_tokens_are_listed_revoked_and_act_for_their_owner_only(
    session: Session, user: int, other_user: int
) -> None:
    made = api_tokens.create_token(session=session, user_id=user, name="laptop")
    assert api_tokens.list_tokens(session=session, user_id=other_user) == []
    assert [t.id for t in api_tokens.list_tokens(session=session, user_id=user)] == [made.row.id]
    assert (
        _error(
            lambda: api_tokens.revoke_token(
                session=session, user_id=other_user, token_id=made.row.id
            )
        )
        == f"API token {made.row.id} does not exist"
    )
    assert api_tokens.verify_token(session=session, token=made.token) == user
    api_tokens.revoke_token(session=session, user_id=user, token_id=made.row.id)
    assert api_tokens.verify_token(session=session, token=made.token) is None

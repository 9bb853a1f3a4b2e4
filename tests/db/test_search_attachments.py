"""Search finds a conversation by the names of the files its messages carry (db/search.py,
the names' index in db/search_schema.py), on the migrated schema of both databases."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from types import SimpleNamespace

import pytest
import sqlalchemy as sa
from alembic import command
from sqlmodel import Session

from agent_chat.db.attachment_models import MessageAttachment
from agent_chat.db.attachments import create_attachment, delete_if_unused, link_to_message
from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.db.messages import append_message, finish_message
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, MessageStatus, utcnow
from agent_chat.db.search import SearchHit, open_hit, search
from agent_chat.db.sessions import create_session, delete_session
from tests.db.test_search import HOSTILE
from tests.support.conversations import conversation_at_any_revision, message_at_any_revision
from tests.support.databases import alembic_config
from tests.support.users import default_owner, make_user

BEFORE = "d5f7a9b1c3e5"  # the revision before the names' index


def _file(session: Session, user: int, name: str) -> int:
    digest = hashlib.sha256(name.encode()).hexdigest()
    row, _ = create_attachment(
        session=session,
        user_id=user,
        sha256=digest,
        name=name,
        media_type="application/octet-stream",
        size=10,
        storage_key=digest[:32],
    )
    assert row.id is not None
    return row.id


def _ask_at_any_revision(
    session: Session, chat: SimpleNamespace, text: str, files: list[str]
) -> None:
    """`_ask` with only the columns the database has (the migration test writes at an older
    revision, where the ORM's rows of later models would not fit)."""
    asked = message_at_any_revision(
        session, chat_id=chat.id, parent_id=None, role=MessageRole.USER, content=text,
        status=MessageStatus.SENT,
    )  # fmt: skip
    _link(session, asked.id, [_file(session, chat.owner_id, name) for name in files])
    message_at_any_revision(
        session, chat_id=chat.id, parent_id=asked.id, role=MessageRole.ASSISTANT,
        content="Done.", status=MessageStatus.SUCCESS,
    )  # fmt: skip


def _link(session: Session, message_id: int, ids: list[int]) -> None:
    """Only the columns this index's migration knew (a later column would not exist yet)."""
    session.execute(
        sa.insert(MessageAttachment.__table__),
        [{"message_id": message_id, "attachment_id": i, "position": n} for n, i in enumerate(ids)],
    )


def _ask(
    session: Session, chat: ChatSession, text: str, files: list[str], answer: str = "Done."
) -> ChatMessage:
    """A user message carrying `files` (linked after the row, as db/turns.py does), answered."""
    assert chat.owner_id is not None
    asked = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=None,
        role=MessageRole.USER,
        content=text,
        status=MessageStatus.SENT,
    )
    if files:
        link_to_message(
            session=session,
            user_id=chat.owner_id,
            message_id=asked.id,
            attachment_ids=[_file(session, chat.owner_id, name) for name in files],
        )
    reply = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=asked.id,
        role=MessageRole.ASSISTANT,
        content="",
        status=MessageStatus.RUNNING,
    )
    finish_message(
        session=session, message_id=reply.id, content=answer, status=MessageStatus.SUCCESS
    )
    return asked


def _hits(session: Session, user: int, query: str) -> list[SearchHit]:
    return search(session=session, user_id=user, query=query)


def _uuids(session: Session, user: int, query: str) -> list[str]:
    return [h.session_uuid for h in _hits(session, user, query)]


def _text(hit: SearchHit) -> str:
    return "".join(s["text"] for s in hit.snippet)


def _marked(hit: SearchHit) -> list[str]:
    return [s["text"] for s in hit.snippet if s["mark"]]


def test_a_file_is_found_by_a_word_its_stem_and_a_prefix(session: Session, user: int) -> None:
    chat = create_session(session=session, user_id=user, title="Board")
    asked = _ask(session, chat, "Numbers for the board", ["quarterly-report.pdf", "cities.csv"])
    for query in ("quarterly-report", "report.pdf", "quarterly-report.pdf", "report ", "quart"):
        hits = _hits(session, user, query)
        assert [h.session_uuid for h in hits] == [chat.session_uuid], query
        hit = hits[0]
        assert (hit.message_id, hit.role) == (asked.id, "USER"), query
        assert _text(hit) == "📎 quarterly-report.pdf — Numbers for the board", query
    assert _marked(_hits(session, user, "report.pdf")[0]) == ["report.pdf"]
    assert _marked(_hits(session, user, "quart")[0]) == ["quarterly"]
    hit = _hits(session, user, "cities")[0]
    assert _text(hit) == "📎 cities.csv — Numbers for the board" and _marked(hit) == ["cities"]
    assert _marked(_hits(session, user, "csv ")[0]) == ["csv"]
    # Every term in the one name; a name's word is whole unless typed as a prefix.
    assert _uuids(session, user, "cities csv") == [chat.session_uuid]
    assert _uuids(session, user, "citi ") == []
    assert _uuids(session, user, "quarterly cities") == []
    assert "<" not in _text(_hits(session, user, "cities")[0])  # text segments, never HTML
    opened = open_hit(session=session, user_id=user, message_id=hit.message_id or 0)
    assert opened.session_uuid == chat.session_uuid and opened.from_end == 2


def test_a_message_with_only_files_shows_their_names(session: Session, user: int) -> None:
    chat = create_session(session=session, user_id=user, title="t")
    asked = _ask(session, chat, "", ["Präsentation_2024.pptx"])
    hit = _hits(session, user, "präsentation")[0]
    assert hit.message_id == asked.id and _text(hit) == "📎 Präsentation_2024.pptx"
    assert _marked(hit) == ["Präsentation"]


def test_another_persons_file_names_are_never_found(session: Session, user: int) -> None:
    bob = make_user(session, "bob")
    theirs = create_session(session=session, user_id=bob, title="Bob's")
    _ask(session, theirs, "mine", ["secret-plan.txt"])
    mine = create_session(session=session, user_id=user, title="Alice's")
    _ask(session, mine, "hello", ["holiday-photos.zip"])
    assert _uuids(session, user, "secret-plan") == [] and _uuids(session, user, "secr") == []
    assert _uuids(session, bob, "secret") == [theirs.session_uuid]
    assert _uuids(session, bob, "holiday") == []


def test_a_message_without_files_and_a_text_match_are_unchanged(
    session: Session, user: int
) -> None:
    plain = create_session(session=session, user_id=user, title="Plain")
    _ask(session, plain, "Where do otters sleep?", [], answer="In holts.")
    hit = _hits(session, user, "otters")[0]
    assert hit.session_uuid == plain.session_uuid and _text(hit) == "Where do otters sleep?"
    carrying = create_session(session=session, user_id=user, title="Carrying")
    _ask(session, carrying, "Summarise the beaver census", ["beaver-census.csv"])
    hit = _hits(session, user, "census")[0]  # the text matches too: the text's snippet
    assert hit.session_uuid == carrying.session_uuid
    assert _text(hit) == "Summarise the beaver census" and _marked(hit) == ["census"]
    assert _uuids(session, user, "holts") == [plain.session_uuid]  # answers as before


def test_one_result_per_conversation_at_its_newest_match(session: Session, user: int) -> None:
    chat = create_session(session=session, user_id=user, title="t")
    _ask(session, chat, "first look at the kiwi data", [])
    newer = _ask(session, chat, "and now the file", ["kiwi.json"])
    other = create_session(session=session, user_id=user, title="o")
    _ask(session, other, "kiwi facts", [])
    hits = _hits(session, user, "kiwi")
    assert [h.session_uuid for h in hits] == [other.session_uuid, chat.session_uuid]
    assert hits[1].message_id == newer.id and _text(hits[1]).startswith("📎 kiwi.json")


def test_unlinking_and_deleting_the_conversation_remove_the_hits(
    session: Session, user: int
) -> None:
    chat = create_session(session=session, user_id=user, title="t")
    asked = _ask(session, chat, "see attached", ["walrus-migration.gpx"])
    link_to_message(session=session, user_id=user, message_id=asked.id, attachment_ids=[])
    assert _uuids(session, user, "walrus") == []
    again = _ask(session, chat, "again", ["walrus-migration.gpx"])  # the same attachment row
    assert _uuids(session, user, "walrus") == [chat.session_uuid]
    assert _hits(session, user, "walrus")[0].message_id == again.id
    delete_session(session=session, user_id=user, session_uuid=chat.session_uuid)
    assert _uuids(session, user, "walrus") == []  # the unused attachment itself waits for the sweep
    session.expunge_all()  # SQLite may give the next message a deleted one's id
    fresh = create_session(session=session, user_id=user, title="fresh")
    _ask(session, fresh, "once more", ["walrus-migration.gpx"])
    assert _uuids(session, user, "walrus-migration") == [fresh.session_uuid]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_return_results_or_nothing(session: Session, user: int, query: str) -> None:
    chat = create_session(session=session, user_id=user, title="foo bar")
    _ask(session, chat, "foo AND bar", ["NEAR(a b) title-foo 'x'.txt", "1=1; DROP.csv"])
    assert isinstance(_hits(session, user, query), list)
    assert session.get(ChatSession, chat.id) is not None


def _index_exists(url: str) -> bool:
    engine = make_engine(url)
    try:
        inspector = sa.inspect(engine)
        if engine.dialect.name == "sqlite":
            return "attachment_fts" in inspector.get_table_names()
        return "search_vector" in {c["name"] for c in inspector.get_columns("attachment")}
    finally:
        engine.dispose()


def test_the_migration_indexes_existing_files_and_goes_down_again(empty_db_url: str) -> None:
    migrate(empty_db_url)
    engine = make_engine(empty_db_url)
    with open_session(engine) as session:
        user = default_owner(session=session)
        before = create_session(session=session, user_id=user, title="t")
        _ask(session, before, "hello", ["linked-before.txt"])
    engine.dispose()
    command.downgrade(alembic_config(empty_db_url), BEFORE)
    assert not _index_exists(empty_db_url)
    engine = make_engine(empty_db_url)
    with open_session(engine) as session:  # written while no index exists
        during = conversation_at_any_revision(session, user_id=user, title="u")
        _ask_at_any_revision(session, during, "hello", ["linked-meanwhile.txt"])
    engine.dispose()
    command.upgrade(alembic_config(empty_db_url), "head")
    assert _index_exists(empty_db_url)
    engine = make_engine(empty_db_url)
    with open_session(engine) as session:
        assert _uuids(session, user, "linked") == [during.session_uuid, before.session_uuid]
        assert _uuids(session, user, "meanwhile") == [during.session_uuid]
        delete_session(session=session, user_id=user, session_uuid=during.session_uuid)
    with open_session(engine) as session:  # the triggers are back: deleting keeps it honest
        assert _uuids(session, user, "linked") == [before.session_uuid]
        _swept(session, _file(session, user, "linked-meanwhile.txt"))
    engine.dispose()


def _indexed(session: Session, word: str) -> int:
    """How many attachments' names the index holds `word` in."""
    if session.get_bind().dialect.name == "sqlite":
        query = "SELECT count(*) FROM attachment_fts WHERE attachment_fts MATCH :w"
    else:
        query = "SELECT count(*) FROM attachment WHERE search_vector @@ to_tsquery('simple', :w)"
    return session.execute(sa.text(query), {"w": word}).scalar_one()


def _swept(session: Session, attachment_id: int) -> None:
    """The hourly sweep deletes the unused attachment: its name leaves the index."""
    assert _indexed(session, "meanwhile") == 1
    later = utcnow() + timedelta(days=2)
    assert delete_if_unused(session=session, attachment_id=attachment_id, before=later)
    assert _indexed(session, "meanwhile") == 0 and _indexed(session, "linked") == 1


def test_a_swept_attachment_leaves_the_index(session: Session, user: int) -> None:
    chat = create_session(session=session, user_id=user, title="t")
    _ask(session, chat, "hello", ["linked-meanwhile.txt", "linked-before.txt"])
    delete_session(session=session, user_id=user, session_uuid=chat.session_uuid)
    session.expunge_all()
    _swept(session, _file(session, user, "linked-meanwhile.txt"))

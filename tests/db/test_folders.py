"""Pins and folders (db/folders.py) and the sidebar's sections (sessions.list_sessions)."""

from __future__ import annotations

import pytest
from sqlmodel import Session, col, select

from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.folders import (
    create_folder,
    delete_folder,
    list_folders,
    move_session,
    rename_folder,
    set_collapsed,
    set_pinned,
)
from agent_chat.db.models import ChatSession
from agent_chat.db.sessions import create_session, delete_session, list_sessions, touch_session
from tests.support.users import default_owner


def _titles(session: Session, section: str | None) -> list[str]:
    return [
        c.title
        for c in list_sessions(
            user_id=default_owner(session=session), session=session, section=section
        )
    ]


def test_folders_are_created_renamed_listed_by_name_and_collapsed(
    session: Session, user: int
) -> None:
    work = create_folder(user_id=user, session=session, name="  Work\nstuff ")
    home = create_folder(user_id=user, session=session, name="home")
    assert work.name == "Work stuff"
    assert [f.name for f in list_folders(user_id=user, session=session)] == ["home", "Work stuff"]
    rename_folder(user_id=user, session=session, folder_id=home.id, name="Zoo")
    set_collapsed(user_id=user, session=session, folder_id=work.id, collapsed=True)
    assert [(f.name, f.collapsed) for f in list_folders(user_id=user, session=session)] == [
        ("Work stuff", True),
        ("Zoo", False),
    ]


@pytest.mark.parametrize("name", ["", "   ", "\n"])
def test_an_empty_folder_name_is_refused(session: Session, name: str, user: int) -> None:
    with pytest.raises(ValidationFailed, match="must not be empty"):
        create_folder(user_id=user, session=session, name=name)


def test_duplicate_names_are_refused_and_unknown_folders_are_not_found(
    session: Session, user: int
) -> None:
    folder = create_folder(user_id=user, session=session, name="Ideas")
    with pytest.raises(ValidationFailed, match="already exists"):
        create_folder(user_id=user, session=session, name="ideas")
    rename_folder(user_id=user, session=session, folder_id=folder.id, name="IDEAS")  # itself: fine
    with pytest.raises(NotFound):
        rename_folder(user_id=user, session=session, folder_id=9999, name="x")
    with pytest.raises(NotFound):
        delete_folder(user_id=user, session=session, folder_id=9999)
    chat = create_session(user_id=user, session=session, title="c")
    with pytest.raises(NotFound):
        move_session(user_id=user, session=session, session_uuid=chat.session_uuid, folder_id=9999)
    with pytest.raises(NotFound):
        set_pinned(user_id=user, session=session, session_uuid="not-a-uuid", pinned=True)


def test_deleting_a_folder_moves_its_conversations_back(session: Session, user: int) -> None:
    folder = create_folder(user_id=user, session=session, name="Project")
    a = create_session(user_id=user, session=session, title="a")
    b = create_session(user_id=user, session=session, title="b")
    create_session(user_id=user, session=session, title="c")
    for chat in (a, b):
        move_session(
            user_id=user, session=session, session_uuid=chat.session_uuid, folder_id=folder.id
        )
    assert sorted(_titles(session, "filed")) == ["a", "b"]
    assert _titles(session, "unfiled") == ["c"]
    assert delete_folder(user_id=user, session=session, folder_id=folder.id) == 2
    assert list_folders(user_id=user, session=session) == []
    assert sorted(_titles(session, "unfiled")) == ["a", "b", "c"]
    assert session.get(ChatSession, a.id).folder_id is None


def test_move_back_to_no_folder(session: Session, user: int) -> None:
    folder = create_folder(user_id=user, session=session, name="F")
    chat = create_session(user_id=user, session=session, title="x")
    move_session(user_id=user, session=session, session_uuid=chat.session_uuid, folder_id=folder.id)
    move_session(user_id=user, session=session, session_uuid=chat.session_uuid, folder_id=None)
    assert _titles(session, "unfiled") == ["x"] and _titles(session, "filed") == []


def test_pinned_conversations_come_first_newest_pin_on_top(session: Session, user: int) -> None:
    first = create_session(user_id=user, session=session, title="first")
    second = create_session(user_id=user, session=session, title="second")
    create_session(user_id=user, session=session, title="third")
    set_pinned(user_id=user, session=session, session_uuid=first.session_uuid, pinned=True)
    set_pinned(user_id=user, session=session, session_uuid=second.session_uuid, pinned=True)
    touch_session(session=session, session_id=first.id)  # activity does not reorder pins
    assert _titles(session, "pinned") == ["second", "first"]
    assert _titles(session, "unfiled") == ["third"]
    pinned_at = second.pinned_at
    set_pinned(
        user_id=user, session=session, session_uuid=second.session_uuid, pinned=True
    )  # again: kept
    assert second.pinned_at == pinned_at
    set_pinned(user_id=user, session=session, session_uuid=second.session_uuid, pinned=False)
    assert _titles(session, "pinned") == ["first"]
    assert _titles(session, "unfiled") == ["third", "second"]


def test_a_pinned_conversation_in_a_folder_shows_as_pinned_only(
    session: Session, user: int
) -> None:
    folder = create_folder(user_id=user, session=session, name="F")
    chat = create_session(user_id=user, session=session, title="both")
    move_session(user_id=user, session=session, session_uuid=chat.session_uuid, folder_id=folder.id)
    set_pinned(user_id=user, session=session, session_uuid=chat.session_uuid, pinned=True)
    assert (_titles(session, "pinned"), _titles(session, "filed")) == (["both"], [])
    delete_session(user_id=user, session=session, session_uuid=chat.session_uuid)
    assert _titles(session, None) == [] and len(list_folders(user_id=user, session=session)) == 1


def test_an_unknown_section_is_an_error(session: Session, user: int) -> None:
    with pytest.raises(ValueError, match="section"):
        list_sessions(user_id=user, session=session, section="bogus")


def test_sidebar_listing_groups_pins_folders_and_the_rest(session: Session, user: int) -> None:
    from agent_chat.db.folders import sidebar_listing
    from agent_chat.db.sessions import set_session_status
    from agent_chat.display.rows import session_row

    work = create_folder(user_id=user, session=session, name="Work")
    empty = create_folder(user_id=user, session=session, name="Empty")
    chats = {name: create_session(user_id=user, session=session, title=name) for name in "abcdef"}
    move_session(
        user_id=user, session=session, session_uuid=chats["a"].session_uuid, folder_id=work.id
    )
    move_session(
        user_id=user, session=session, session_uuid=chats["b"].session_uuid, folder_id=work.id
    )
    move_session(
        user_id=user, session=session, session_uuid=chats["c"].session_uuid, folder_id=work.id
    )
    set_pinned(user_id=user, session=session, session_uuid=chats["c"].session_uuid, pinned=True)
    set_pinned(user_id=user, session=session, session_uuid=chats["d"].session_uuid, pinned=True)
    set_session_status(user_id=user, session=session, session_id=chats["b"].id, status="ARCHIVED")
    listed = sidebar_listing(user_id=user, session=session, limit=1, include_archived=False)
    assert [c.title for c in listed.pinned] == ["d", "c"]
    assert [(f.folder.name, f.count, [c.title for c in f.sessions]) for f in listed.folders] == [
        ("Empty", 0, []),
        ("Work", 1, ["a"]),  # not c (pinned: shown under "Pinned" only), nor b (archived)
    ]
    assert [c.title for c in listed.unfiled] == ["f", "e"]  # one more than the page: has more
    row = session_row(listed.folders[1].sessions[0], "unread")
    assert (row["title"], row["folder_id"], row["pinned"], row["state"]) == (
        "a",
        work.id,
        False,
        "unread",
    )
    with_archived = sidebar_listing(user_id=user, session=session, limit=10, include_archived=True)
    assert [c.title for c in with_archived.folders[1].sessions] == ["b", "a"]
    assert with_archived.folders[1].count == 2
    assert empty.id != work.id


def _dated(session: Session, titles: str, folder_id: int | None, minutes: list[int]) -> None:
    """Conversations last used `minutes` after a fixed time (not in creation order)."""
    from datetime import datetime, timedelta

    for title, minute in zip(titles, minutes, strict=True):
        chat = create_session(user_id=default_owner(session=session), session=session, title=title)
        chat.last_message_at = datetime(2026, 1, 1) + timedelta(minutes=minute)
        chat.folder_id = folder_id
        session.add(chat)
    session.flush()


def test_a_folded_folder_has_its_count_and_no_rows_and_opening_it_shows_them(
    session: Session,
    user: int,
) -> None:
    from agent_chat.db.folders import sidebar_listing
    from agent_chat.db.sessions import set_session_status

    folder = create_folder(user_id=user, session=session, name="Work")
    _dated(session, "abcd", folder.id, [3, 1, 4, 2])
    archived = create_session(user_id=user, session=session, title="old")
    archived.folder_id = folder.id
    set_session_status(user_id=user, session=session, session_id=archived.id, status="ARCHIVED")
    _dated(session, "xy", None, [5, 6])
    set_collapsed(user_id=user, session=session, folder_id=folder.id, collapsed=True)

    def work(include_archived: bool = False):
        listed = sidebar_listing(
            user_id=default_owner(session=session),
            session=session,
            limit=50,
            include_archived=include_archived,
        )
        assert [c.title for c in listed.unfiled] == ["y", "x"]
        (only,) = listed.folders
        return only.folder.collapsed, only.count, [c.title for c in only.sessions]

    assert work() == (True, 4, [])
    assert work(include_archived=True) == (True, 5, [])
    set_collapsed(user_id=user, session=session, folder_id=folder.id, collapsed=False)
    assert work() == (False, 4, ["c", "a", "d", "b"])  # most recently used first


def test_an_open_folder_shows_its_newest_page_and_more_when_asked(
    session: Session, user: int
) -> None:
    from agent_chat.db.folders import FOLDER_PAGE, sidebar_listing
    from agent_chat.db.sessions import set_session_status

    big = create_folder(user_id=user, session=session, name="Big")
    small = create_folder(user_id=user, session=session, name="Small")
    total = FOLDER_PAGE + 5
    order = [(i * 7) % total for i in range(total)]  # a permutation: times not in id order
    titles = [f"t{i:02}" for i in range(total)]
    _dated(session, titles, big.id, order)
    _dated(session, ["s"], small.id, [100])
    newest = [t for _, t in sorted(zip(order, titles, strict=True), reverse=True)]

    def folders(**kwargs):
        listed = sidebar_listing(
            user_id=default_owner(session=session),
            session=session,
            limit=50,
            include_archived=False,
            **kwargs,
        )
        return {f.folder.name: (f.count, [c.title for c in f.sessions]) for f in listed.folders}

    assert folders() == {"Big": (total, newest[:FOLDER_PAGE]), "Small": (1, ["s"])}
    assert folders(folder_limits={big.id: 2 * FOLDER_PAGE}) == {
        "Big": (total, newest),
        "Small": (1, ["s"]),
    }
    # What the page asks for applies to that folder only; archived ones count when shown.
    chat = session.exec(select(ChatSession).where(ChatSession.title == newest[0])).one()
    set_session_status(user_id=user, session=session, session_id=chat.id, status="ARCHIVED")
    listed = sidebar_listing(
        user_id=user, session=session, limit=50, include_archived=True, folder_limits={small.id: 1}
    )
    assert [(f.count, len(f.sessions)) for f in listed.folders] == [(total, FOLDER_PAGE), (1, 1)]
    assert [c.title for c in listed.folders[0].sessions] == newest[:FOLDER_PAGE]
    assert folders()["Big"] == (total - 1, newest[1 : FOLDER_PAGE + 1])


def test_show_archived_merges_both_statuses_newest_first(session: Session, user: int) -> None:
    from agent_chat.db.folders import sidebar_listing
    from agent_chat.db.sessions import set_session_status

    _dated(session, "abcdef", None, [6, 5, 4, 3, 2, 1])  # archived ones in between
    for chat in session.exec(select(ChatSession).where(col(ChatSession.title).in_(list("bdf")))):
        set_session_status(user_id=user, session=session, session_id=chat.id, status="ARCHIVED")

    def unfiled(include_archived: bool, limit: int) -> list[str]:
        listed = sidebar_listing(
            user_id=default_owner(session=session),
            session=session,
            limit=limit,
            include_archived=include_archived,
        )
        return [c.title for c in listed.unfiled]

    assert unfiled(True, 3) == ["a", "b", "c", "d"]  # limit + 1, across both statuses
    assert unfiled(True, 10) == list("abcdef")
    assert unfiled(False, 10) == ["a", "c", "e"]


def test_the_sidebar_reads_walk_indexes_on_sqlite(session: Session, user: int) -> None:
    """SQLite has no statistics in the app: each read of chat_session must be an index
    search (a status condition once made it walk every conversation), and the unfiled page
    must come in index order (no sort of all unfiled conversations)."""
    from sqlalchemy import event

    from agent_chat.db.folders import sidebar_listing

    if session.get_bind().dialect.name != "sqlite":
        pytest.skip("query plans: SQLite's planner has no statistics in the app")
    folder = create_folder(user_id=user, session=session, name="Work")
    _dated(session, "ab", folder.id, [1, 2])
    _dated(session, "cd", None, [3, 4])
    statements: list[tuple[str, object]] = []
    engine = session.get_bind().engine

    def record(_conn, _cursor, statement, parameters, _context, _many) -> None:
        statements.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    try:
        for include_archived in (False, True):
            sidebar_listing(
                user_id=user, session=session, limit=50, include_archived=include_archived
            )
    finally:
        event.remove(engine, "before_cursor_execute", record)
    plans, open_folders = [], []
    for statement, parameters in statements:
        if "FROM chat_session" in statement:
            rows = session.connection().exec_driver_sql(
                "EXPLAIN QUERY PLAN " + statement, parameters
            )
            plan = " / ".join(r[-1] for r in rows)
            (open_folders if "row_number" in statement else plans).append(plan)
    assert len(plans) == 2 * (1 + 1) + (1 + 2)  # pins, counts; the unfiled ones per status
    for plan in plans:
        assert plan.startswith("SEARCH chat_session USING "), plan
        assert "TEMP B-TREE" not in plan and "ix_chat_session_status" not in plan, plan
    # The open folders' conversations: all of them (not all filed ones) from the index, then
    # numbered per folder.
    assert len(open_folders) == 2
    for plan in open_folders:
        assert (
            "SEARCH chat_session USING INDEX "
            "ix_chat_session_owner_folder_status_pinned_last (owner_id=? AND folder_id=?" in plan
        ), plan

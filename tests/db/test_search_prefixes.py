"""PostgreSQL's prefix lookup (db/search.py `_pg_prefix_condition`, the two-column GIN index of
db/search_schema.py): a query with a typed prefix finds exactly the rows of the plain query
`search_vector @@ to_tsquery(...)`, and the index serves it. The same searches on SQLite give
the same results (its FTS5 index has no prefix lookup of its own to test)."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import text
from sqlmodel import Session

from agent_chat.db.models import MessageRole, MessageStatus
from agent_chat.db.search import _pg_any_matches, _pg_prefix_condition, search
from agent_chat.db.search_schema import PG_MESSAGE_INDEX, PREFIX_FUNCTION
from agent_chat.db.search_text import parse_query, pg_prefix_lookup, pg_tsquery
from agent_chat.db.sessions import create_session
from tests.support.conversations import conversation_at_any_revision, message_at_any_revision
from tests.support.users import default_owner

TEXTS = [
    "Camera calibration needs a tripod; Größe café",
    "a calm tripod, cabbage and CAMELS",
    "cam cams camera cameraman camerawork",
    "ab abc abcd abcde abcdef abcdefg abcdefgh",
    "机器学习 needs data; 学习 camera 数据模型",
    "Ünïcödé ÉCOLE école ecole σοφία ΣΟΦΊΑ straße",
    "numbers 12345 1e5 0x1f 3rd v2 x86_64 ² ½ ٣",
    "it's O'Reilly's don't foo-bar foo_bar e-mail",
    "calibration-needs tripod-camera, the quick brown fox",
    "Ｆｕｌｌｗｉｄｔｈ ｃａｍｅｒａ and ﬁne ligatures",
    "한국어 텍스트 카메라 calibr",
    "the end",
]

QUERIES = [
    "c*",  # one character: not looked up by prefix
    "ca",
    "tripod ca",  # two characters, typed
    "tripod cam",
    "tripod camer",
    "tripod camera",  # a whole word typed as a prefix
    "tripod camera ",  # a whole word, not a prefix
    "calibrati",  # longer than 6 characters: looked up by its first 6
    "calibratix",
    "abcdefgh",
    "abcdefgi",
    "abcdef",
    "TRIPOD CAB",
    "gr* caf",  # two prefixes, one not ASCII
    "größ",
    "GRÖ",
    "éco",
    "ÉCO",
    "écol",
    "σοφ",
    "ΣΟΦ",
    "stra",
    "学习 ca",  # Chinese and a prefix
    "机器学习 dat",
    "学*",
    "数据模",
    "카메",
    "한국어 calib",
    "calibration-ne",  # a phrase whose last word is a prefix
    "tripod-cam",
    '"calibration needs" tri',
    '"quick brown" fo',
    "fox qui*",
    "123",
    "1e",
    "0x",
    "x86",
    "v2 3r",
    "o'rei",
    "reill",
    "don",
    "foo-ba",
    "foo_ba",
    "e-ma",
    "ｃａｍ",
    "fullw",
    "fi",
    "²",
    "zz*",
    "the en",
    "a* ca* tr*",
    "'ca",
    "ca'",
    "ca:*",
    "ca & tri",
    "!ca",
    "(ca | tri)",
    "ca <-> tri",
    "%ca",
    "ca\\",
    "\x00ca",
    "🙂 ca",
    "½ ca",
    "٣ ca",
    "a " * 30 + "ca",
]


def _add(session: Session, texts: list[str]) -> None:
    for n, body in enumerate(texts):
        # At the revision the test went down to: only the columns it had.
        chat = conversation_at_any_revision(
            session, user_id=default_owner(session=session), title=f"t{n}"
        )
        message_at_any_revision(
            session,
            chat_id=chat.id,
            parent_id=None,
            role=MessageRole.USER if n % 2 else MessageRole.ASSISTANT,
            content=body,
            status=MessageStatus.SENT,
        )


def _marked(segments: list[dict]) -> list[str]:
    return [s["text"] for s in segments if s["mark"]]


def _postgresql(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _ids(session: Session, where: str, params: dict) -> set[int]:
    rows = session.execute(text(f"SELECT id FROM chat_message WHERE {where}"), params).all()
    return {row[0] for row in rows}


def _same_as_the_plain_query(session: Session, query: str) -> int:
    """Asserts the prefix lookup's rows are the plain query's; returns how many."""
    terms = parse_query(query)
    if not terms:
        return 0
    q = pg_tsquery(terms)
    plain = _ids(session, "search_vector @@ to_tsquery('simple', :q)", {"q": q})
    prefix = _pg_prefix_condition(terms)
    if prefix is not None:
        where, params = prefix
        assert _ids(session, where, {"q": q, **params}) == plain, query
    where, params = _pg_any_matches(session, terms, q)  # what the app asks
    assert _ids(session, where, {"q": q, **params}) == plain, query
    return len(plain)


def test_the_prefix_lookup_finds_the_rows_of_the_plain_query(session: Session) -> None:
    _add(session, TEXTS)
    if not _postgresql(session):
        # SQLite has one path; it must at least answer every query.
        for query in QUERIES:
            assert isinstance(
                search(session=session, user_id=default_owner(session=session), query=query), list
            )
        return
    looked_up = [q for q in QUERIES if pg_prefix_lookup(parse_query(q)) is not None]
    assert len(looked_up) > 40  # the prefix path is the one tested
    found = {q: _same_as_the_plain_query(session, q) for q in QUERIES}
    # Some of them find something, so the comparison is not of two empty sets.
    for query in ("tripod cam", "calibrati", "éco", "σοφ", "学习 ca", "카메", "calibration-ne"):
        assert found[query] > 0, query
    assert found["tripod camera"] == 2 and found["abcdefgh"] == 1 and found["abcdefgi"] == 0


def test_random_queries_find_the_rows_of_the_plain_query(session: Session) -> None:
    if not _postgresql(session):
        pytest.skip("PostgreSQL's prefix lookup")
    rng = random.Random(16)
    letters = "abcdeéfgß"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 9))) for _ in range(300)]
    _add(session, [" ".join(rng.sample(words, 12)) for _ in range(150)] + TEXTS)
    found = 0
    for _ in range(300):
        picked = rng.sample(words, rng.randint(1, 3))
        typed = picked[-1][: rng.randint(1, len(picked[-1]))]
        quoted = rng.random() < 0.2 and len(picked) > 1
        head = f'"{picked[0]} {picked[1]}"' if quoted else " ".join(picked[:-1])
        query = f"{head} {typed.upper() if rng.random() < 0.2 else typed}".strip()
        found += _same_as_the_plain_query(session, query) > 0
    assert found > 100


def test_the_index_serves_the_prefix_lookup(session: Session) -> None:
    if not _postgresql(session):
        pytest.skip("PostgreSQL's index")
    _add(session, TEXTS * 20)
    session.execute(text("ANALYZE chat_message"))
    session.execute(text("SET LOCAL enable_seqscan = off"))
    terms = parse_query("tripod cam")
    where, params = _pg_prefix_condition(terms)
    plan = session.execute(
        text(f"EXPLAIN SELECT id FROM chat_message WHERE {where}"),
        {"q": pg_tsquery(terms), **params},
    ).all()
    plan_text = "\n".join(row[0] for row in plan)
    assert PG_MESSAGE_INDEX in plan_text
    index_cond = next(line for line in plan_text.splitlines() if "Index Cond" in line)
    assert PREFIX_FUNCTION in index_cond and "search_vector @@" in index_cond, plan_text
    # The prefixes are computed by the index, never for each row of a filter.
    filters = [line for line in plan_text.splitlines() if "Filter" in line or "Recheck" in line]
    assert not any(PREFIX_FUNCTION in line for line in filters if "Filter" in line), plan_text
    # Never run by parallel workers (a small table cannot show the plan it prevents: at 100k
    # messages, a lookup shared with workers took 36-43 ms instead of 4-18), computed by the
    # index (a cost the planner avoids in a scan), never inlined (PL/pgSQL).
    query = "SELECT proparallel, procost, l.lanname FROM pg_proc p JOIN pg_language l ON "
    query += "l.oid = p.prolang WHERE proname = :f"
    assert tuple(session.execute(text(query), {"f": PREFIX_FUNCTION}).one()) == (
        "r",
        1000,
        "plpgsql",
    )


def test_a_vector_too_big_for_its_prefixes_is_found_by_its_words(session: Session) -> None:
    # 14,000 different words of 6 four-byte letters (lower-case Deseret): their prefixes would
    # take more than a tsvector holds, so the row's prefixes are the lexeme `*` and the query
    # itself is tested on it.
    rng = random.Random(3)
    letters = [chr(c) for c in range(0x10428, 0x10450)]
    words = list({"".join(rng.choice(letters) for _ in range(6)) for _ in range(14_000)})
    _add(session, [" ".join(words) + " zebra", "zebu", "camera"])
    big = session.execute(
        text("SELECT session_id FROM chat_message WHERE content LIKE '%zebra'")
    ).scalar()
    hits = search(session=session, user_id=default_owner(session=session), query="zebr")
    assert len(hits) == 1
    assert len(search(session=session, user_id=default_owner(session=session), query="zeb")) == 2
    assert (
        len(
            search(
                session=session,
                user_id=default_owner(session=session),
                query=f"zebra {words[5][:3]}",
            )
        )
        == 1
    )
    assert (
        search(session=session, user_id=default_owner(session=session), query="cam")[0].session_uuid
        != hits[0].session_uuid
    )
    if _postgresql(session):
        prefixes = session.execute(
            text(
                f"SELECT {PREFIX_FUNCTION}(search_vector)::text FROM chat_message "
                "WHERE session_id = :s"
            ),
            {"s": big},
        ).scalar()
        assert prefixes == "'*'"
        for query in ("zebr", "zeb", f"zebra {words[5][:3]}", words[7][:4], "cam"):
            _same_as_the_plain_query(session, query)


def test_the_migration_replaces_the_index_and_its_downgrade_restores_it(
    empty_db_url: str,
) -> None:
    from alembic import command

    from agent_chat.db.engine import make_engine, migrate, open_session
    from agent_chat.db.search_schema import PG_INDEXES
    from tests.support.databases import alembic_config

    def indexes() -> set[str]:
        engine = make_engine(empty_db_url)
        with engine.connect() as connection:
            names = set(
                connection.execute(
                    text("SELECT indexname FROM pg_indexes WHERE tablename = 'chat_message'")
                ).scalars()
            )
        engine.dispose()
        return names

    def camera_found() -> int:
        engine = make_engine(empty_db_url)
        with open_session(engine) as session:
            found = len(
                search(session=session, user_id=default_owner(session=session), query="tripod cam")
            )
        engine.dispose()
        return found

    def analyzed() -> bool:
        engine = make_engine(empty_db_url)
        with engine.connect() as connection:
            query = "SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'chat_message'"
            when = connection.execute(text(query)).scalar()
        engine.dispose()
        return when is not None

    if not empty_db_url.startswith("postgresql"):
        pytest.skip("PostgreSQL's index (nothing changes on SQLite)")
    # A new install: no ANALYZE of the empty table (its "no rows" would make the first plans
    # of foreign key checks scan the table for the connection's life).
    migrate(empty_db_url)
    assert PG_MESSAGE_INDEX in indexes() and not analyzed()
    command.downgrade(alembic_config(empty_db_url), "b3d5f7a9c1e2")
    engine = make_engine(empty_db_url)
    with open_session(engine) as session:
        _add(session, TEXTS)  # rows that exist before the index is built
    engine.dispose()
    assert PG_INDEXES[0] in indexes() and PG_MESSAGE_INDEX not in indexes()
    migrate(empty_db_url)
    assert PG_MESSAGE_INDEX in indexes() and PG_INDEXES[0] not in indexes()
    assert analyzed()  # the existing rows: the planner gets the prefixes' statistics
    assert camera_found() == 3  # texts 0, 1 (CAMELS) and 8
    command.downgrade(alembic_config(empty_db_url), "b3d5f7a9c1e2")
    assert PG_INDEXES[0] in indexes() and PG_MESSAGE_INDEX not in indexes()
    engine = make_engine(empty_db_url)
    with engine.connect() as connection:  # the old schema's query (not this code's)
        plain = "SELECT count(*) FROM chat_message WHERE search_vector @@ to_tsquery('simple', :q)"
        assert connection.execute(text(plain), {"q": "tripod & cam:*"}).scalar() == 3
        functions = "SELECT count(*) FROM pg_proc WHERE proname = :f"
        assert connection.execute(text(functions), {"f": PREFIX_FUNCTION}).scalar() == 0
    engine.dispose()
    migrate(empty_db_url)
    assert PG_MESSAGE_INDEX in indexes()


def test_the_app_looks_a_prefix_up_unless_the_matches_are_dense(session: Session) -> None:
    if not _postgresql(session):
        pytest.skip("PostgreSQL's planner")
    chats = [
        create_session(session=session, user_id=default_owner(session=session), title=f"c{n}")
        for n in range(50)
    ]
    session.execute(
        text(
            "INSERT INTO chat_message (session_id, is_active, branch_order, role, content, "
            "status, created_at) SELECT :first + g % 50, true, 0, 'USER', "
            "'alpha' || (g % 2000) || ' beta' || (g % 7) || ' common', 'SENT', now() "
            "FROM generate_series(1, 20000) g"
        ),
        {"first": chats[0].id},
    )
    session.execute(text("ANALYZE chat_message"))

    def lookup(query: str) -> bool:
        terms = parse_query(query)
        return bool(_pg_any_matches(session, terms, pg_tsquery(terms))[1])

    # Dense matches (every row): the plain query's scan, which stops at 3,001 at once.
    assert not lookup("common alp")
    assert (
        len(search(session=session, user_id=default_owner(session=session), query="common alp"))
        == 30
    )
    # At 20,000 rows the planner scans the table for any word; a bigger table's planner would
    # use the index for a rare one: then the prefix is looked up there.
    assert not lookup("alpha17 bet")
    session.execute(text("SET LOCAL enable_seqscan = off"))
    assert lookup("alpha17 bet") and not lookup("alpha17 beta3 ")
    hits = search(
        session=session, user_id=default_owner(session=session), query="alpha17 bet"
    )  # g = 17 + 2000k, k < 10
    assert [h.session_uuid for h in hits] == [chats[17].session_uuid]
    assert _marked(hits[0].snippet) == ["alpha17", "beta6"]  # the newest: g = 18017
    for query in ("alpha17 bet", "alpha17 beta3", "common alp", "alpha1999 c", "alp", "bet"):
        _same_as_the_plain_query(session, query)

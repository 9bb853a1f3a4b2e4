"""The synthetic conversations of benchmarks/search.py and their bulk load.

Conversations of 10 messages (user and answer in turn, ids and times increasing), each
message 20–60 words drawn from a 30,000-word vocabulary with a Zipf distribution (as natural
text), one message in 10 with a Chinese sentence; 1 % of the conversations archived.

The load builds the full-text index the way the app's migration does for existing rows,
after the rows are in (equivalent to the per-row triggers, much faster in bulk):
- SQLite: the index triggers and FTS5 tables are dropped, the rows inserted (executemany),
  then `search_schema.create_sqlite` creates the tables, fills them from the rows
  (`INSERT … SELECT agent_chat_search_form(content)`) and adds the triggers back.
- PostgreSQL: the two GIN indexes are dropped, the rows COPYed (the generated tsvector column
  is computed per row, as in the app), then the indexes are created again (the same
  statements as the migrations', the messages' two-column index not CONCURRENTLY).
"""

from __future__ import annotations

import random
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from agent_chat.db import search_schema
from agent_chat.db.search_schema import register_sqlite_function

VOCABULARY = 30_000
PER_CONVERSATION = 10
CJK = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可也你能学习机器数据模型代码问题方法"
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
START = datetime(2025, 1, 1)


def vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words, key=lambda w: (len(w), w))  # short words are the frequent ones


def messages(count: int, seed: int = 16):
    """(session index, role, content, created_at) per message, and the vocabulary."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    cumulative, total = [], 0.0
    for rank in range(VOCABULARY):
        total += 1 / (rank + 1)
        cumulative.append(total)
    out = []
    for i in range(count):
        chosen = rng.choices(words, cum_weights=cumulative, k=rng.randint(20, 60))
        text = " ".join(chosen)
        if i % 10 == 7:
            text += " " + "".join(rng.choice(CJK) for _ in range(rng.randint(8, 30))) + "。"
        role = "USER" if i % 2 == 0 else "ASSISTANT"
        out.append((i // PER_CONVERSATION, role, text, START + timedelta(seconds=30 * i)))
    return out, words


BENCH_OWNER_SQL = (
    "INSERT INTO app_user (id, username, display_name, password_hash, role, disabled,"
    " password_changed_at, created_at) SELECT 1, 'bench', 'bench', '!bench', 'admin',"
    " false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP WHERE NOT EXISTS (SELECT 1 FROM app_user)"
)


def sessions(count: int) -> list[tuple]:
    rows = []
    for s in range(count):
        at = START + timedelta(seconds=30 * PER_CONVERSATION * (s + 1))
        status = "ARCHIVED" if s % 100 == 99 else "ACTIVE"
        rows.append((s + 1, session_uuid(s + 1), f"Conversation {s}", status, at))
    return rows


def session_uuid(session_id: int) -> str:
    return str(uuid.UUID(int=session_id, version=4))


def _message_rows(rows: list[tuple]):
    for i, (s, role, text, at) in enumerate(rows):
        parent = None if i % PER_CONVERSATION == 0 else i
        yield i + 1, s + 1, parent, role, text, "SENT" if role == "USER" else "SUCCESS", at


def populate_sqlite(path: Path, rows: list[tuple]) -> None:
    import sqlite3

    db = sqlite3.connect(path)
    register_sqlite_function(db)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    search_schema.drop_sqlite(db.execute)
    db.execute(BENCH_OWNER_SQL)  # every conversation has an owner: user 1
    db.executemany(
        "INSERT INTO chat_session (id, session_uuid, title, status, created_at, last_message_at,"
        " updated_at, hermes_session, tool_profile, unread, owner_id) VALUES (?, ?, ?, ?, ?, ?,"
        " ?, ?, 'chat', 0, 1)",
        [(i, u, t, st, at, at, at, u) for i, u, t, st, at in sessions(rows[-1][0] + 1)],
    )
    db.executemany(
        "INSERT INTO chat_message (id, session_id, parent_id, is_active, branch_order, role,"
        " content, status, created_at) VALUES (?, ?, ?, 1, 0, ?, ?, ?, ?)",
        ((i, s, p, role, text, st, at) for i, s, p, role, text, st, at in _message_rows(rows)),
    )
    search_schema.create_sqlite(db.execute)
    db.commit()  # no ANALYZE: the app never runs it, its planner works without statistics
    db.close()


def pg_dsn(url: str) -> str:
    from agent_chat.config import normalize_db_url

    return normalize_db_url(url).replace("postgresql+psycopg://", "postgresql://")


def populate_postgresql(url: str, rows: list[tuple]) -> None:
    import psycopg

    with psycopg.connect(pg_dsn(url)) as db, db.cursor() as cur:
        cur.execute(f"DROP INDEX {search_schema.PG_MESSAGE_INDEX}")
        cur.execute(f"DROP INDEX {search_schema.PG_INDEXES[1]}")
        cur.execute(BENCH_OWNER_SQL)  # every conversation has an owner: user 1
        with cur.copy(
            "COPY chat_session (id, session_uuid, title, status, created_at, last_message_at,"
            " updated_at, hermes_session, owner_id) FROM STDIN"
        ) as copy:
            for i, u, t, st, at in sessions(rows[-1][0] + 1):
                copy.write_row((i, u, t, st, at, at, at, u, 1))
        with cur.copy(
            "COPY chat_message (id, session_id, parent_id, is_active, branch_order, role, content,"
            " status, created_at) FROM STDIN"
        ) as copy:
            for i, s, parent, role, text, status, at in _message_rows(rows):
                copy.write_row((i, s, parent, True, 0, role, text, status, at))
        for table in ("chat_session", "chat_message"):
            cur.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
            )
        cur.execute("SET maintenance_work_mem = '256MB'")  # as the migration
        cur.execute(
            f"CREATE INDEX {search_schema.PG_INDEXES[1]} ON chat_session USING gin (search_vector)"
        )
        t0 = time.perf_counter()
        search_schema.create_postgresql_prefixes(cur.execute)
        db.commit()
        cur.execute(
            "SELECT pg_relation_size(%(i)s::regclass)", {"i": search_schema.PG_MESSAGE_INDEX}
        )
        size = cur.fetchone()[0]
        db.commit()  # that SELECT began a transaction: VACUUM needs autocommit, outside one
        print(
            f"message index (two columns) built in {time.perf_counter() - t0:.0f} s "
            f"(with ANALYZE), {size / 1e6:.0f} MB",
            flush=True,
        )
        db.autocommit = True
        cur.execute("VACUUM ANALYZE")

"""Issue 16: full-text search at 100,000 and 1,000,000 messages, and the sidebar's first
page at 100,000 conversations, server side, on SQLite and PostgreSQL.

Synthetic data, bulk inserted straight into a migrated database (executemany on SQLite, so
the index triggers run per row as in the app; COPY on PostgreSQL, whose generated tsvector
column is computed per row): conversations of 10 messages (user and answer in turn, ids and
times increasing), each message 20–60 words drawn from a 30,000-word vocabulary with a Zipf
distribution (as natural text), one message in 10 with a Chinese sentence. 1 % of the
conversations are archived, 20 are pinned and 500 are in 20 folders.

Timed: `agent_chat.db.search.search(query)`, the whole store function as the sidebar calls
it (index query, one result per conversation, rows, snippets), each call in its own
transaction, for typical two-word queries: two words of middle frequency (ranks 100–3,000),
the second one as typed, i.e. a prefix. p50/p95 over N distinct queries after a warm-up.
Also reported: a rare word, a very common word, a quoted phrase, a 2- and a 4-character
Chinese query; and `sidebar_listing(limit=50)` (pins, folders, first page) with p95.
Targets: search p95 ≤ 50 ms; sidebar first page ≤ 50 ms.

Run: python benchmarks/search.py [--quick] [--sizes 100000,1000000] [--db sqlite,postgresql]
     [--pg-url URL] [--repeat N]
Without --pg-url a throwaway PostgreSQL server is started (scripts/postgres.sh).
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402

from agent_chat.db.engine import make_engine, migrate, open_session  # noqa: E402
from agent_chat.db.folders import sidebar_listing  # noqa: E402
from agent_chat.db.search import search  # noqa: E402
from agent_chat.db.search_schema import register_sqlite_function  # noqa: E402

VOCABULARY = 30_000
PER_CONVERSATION = 10
CJK = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可也你能学习机器数据模型代码问题方法"
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words, key=lambda w: (len(w), w))  # short words are the frequent ones


def messages(count: int, seed: int = 16):
    """(session index, role, content, created_at) per message, and the vocabulary."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(VOCABULARY)]
    cumulative, total = [], 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    start = datetime(2025, 1, 1)
    out = []
    for i in range(count):
        chosen = rng.choices(words, cum_weights=cumulative, k=rng.randint(20, 60))
        text = " ".join(chosen)
        if i % 10 == 7:
            text += " " + "".join(rng.choice(CJK) for _ in range(rng.randint(8, 30))) + "。"
        role = "USER" if i % 2 == 0 else "ASSISTANT"
        out.append((i // PER_CONVERSATION, role, text, start + timedelta(seconds=30 * i)))
    return out, words


def _sessions(count: int) -> list[tuple]:
    start = datetime(2025, 1, 1)
    rows = []
    for s in range(count):
        at = start + timedelta(seconds=30 * PER_CONVERSATION * (s + 1))
        status = "ARCHIVED" if s % 100 == 99 else "ACTIVE"
        title = f"Conversation {s}"
        rows.append((s + 1, str(uuid.UUID(int=s + 1, version=4)), title, status, at))
    return rows


def populate_sqlite(path: Path, rows: list[tuple]) -> None:
    import sqlite3

    sessions = _sessions(rows[-1][0] + 1)
    db = sqlite3.connect(path)
    register_sqlite_function(db)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    db.executemany(
        "INSERT INTO chat_session (id, session_uuid, title, status, created_at, last_message_at,"
        " updated_at, hermes_session, tool_profile, unread) VALUES (?, ?, ?, ?, ?, ?, ?, ?,"
        " 'chat', 0)",
        [(i, u, t, st, at, at, at, u) for i, u, t, st, at in sessions],
    )
    db.executemany(
        "INSERT INTO chat_message (id, session_id, parent_id, is_active, branch_order, role,"
        " content, status, created_at) VALUES (?, ?, ?, 1, 0, ?, ?, ?, ?)",
        [
            (
                i + 1,
                s + 1,
                None if i % PER_CONVERSATION == 0 else i,
                role,
                text,
                "SENT" if role == "USER" else "SUCCESS",
                at,
            )
            for i, (s, role, text, at) in enumerate(rows)
        ],
    )
    db.commit()
    db.close()


def populate_postgresql(url: str, rows: list[tuple]) -> None:
    import psycopg

    from agent_chat.config import normalize_db_url

    dsn = normalize_db_url(url).replace("postgresql+psycopg://", "postgresql://")
    sessions = _sessions(rows[-1][0] + 1)
    with psycopg.connect(dsn) as db, db.cursor() as cur:
        with cur.copy(
            "COPY chat_session (id, session_uuid, title, status, created_at, last_message_at,"
            " updated_at, hermes_session) FROM STDIN"
        ) as copy:
            for i, u, t, st, at in sessions:
                copy.write_row((i, u, t, st, at, at, at, u))
        with cur.copy(
            "COPY chat_message (id, session_id, parent_id, is_active, branch_order, role, content,"
            " status, created_at) FROM STDIN"
        ) as copy:
            for i, (s, role, text, at) in enumerate(rows):
                parent = None if i % PER_CONVERSATION == 0 else i
                status = "SENT" if role == "USER" else "SUCCESS"
                copy.write_row((i + 1, s + 1, parent, True, 0, role, text, status, at))
        for table in ("chat_session", "chat_message"):
            cur.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
            )
        cur.execute("ANALYZE")


def organise(engine, conversations: int) -> None:
    """20 pinned conversations and 500 in 20 folders, as a person would have."""
    from agent_chat.db import folders

    rng = random.Random(7)
    with open_session(engine) as session:
        ids = [folders.create_folder(session=session, name=f"Folder {i}").id for i in range(20)]
        picks = rng.sample(range(1, conversations + 1), 520)
        for n, s in enumerate(picks):
            chat_uuid = str(uuid.UUID(int=s, version=4))
            if n < 20:
                folders.set_pinned(session=session, session_uuid=chat_uuid, pinned=True)
            else:
                folders.move_session(session=session, session_uuid=chat_uuid, folder_id=ids[n % 20])


def timed(engine, fn, **kwargs) -> tuple[float, int]:
    t0 = time.perf_counter()
    with open_session(engine) as session:
        result = fn(session=session, **kwargs)
    return (time.perf_counter() - t0) * 1000, len(getattr(result, "unfiled", result))


def queries(words: list[str], count: int, rng: random.Random) -> list[str]:
    out = []
    for _ in range(count):
        first, second = rng.sample(words[100:3000], 2)
        out.append(f"{first} {second[: max(3, len(second) - 1)]}")  # the last word as typed
    return out


def measure(engine, words: list[str], repeat: int, label: str, report: h.Report) -> dict:
    rng = random.Random(99)
    for q in queries(words, 5, random.Random(1)):  # warm the caches
        timed(engine, search, query=q)
    times, found = [], []
    for q in queries(words, repeat, rng):
        ms, n = timed(engine, search, query=q)
        times.append(ms)
        found.append(n)
    p50, p95 = h.percentile(times, 50), h.percentile(times, 95)
    report.add(
        f"{label}: search p95, two-word query",
        f"{p95:.1f} ms",
        "≤ 50 ms",
        p95 <= 50,
        f"p50 {p50:.1f} ms, max {max(times):.1f} ms over {repeat} queries; "
        f"conversations found per query: median {h.median(found):.0f}, max {max(found)}",
    )
    extra = {
        "rare word": words[25_000],
        "very common word": words[3],
        "quoted phrase": f'"{words[10]} {words[11]}"',
        "Chinese, 2 characters": "学习",
        "Chinese, 4 characters": "机器数据",
    }
    figures = {"p50_ms": p50, "p95_ms": p95}
    for name, q in extra.items():
        runs = [timed(engine, search, query=q) for _ in range(max(5, repeat // 10))]
        ms = h.median([r[0] for r in runs])
        report.add(f"{label}: {name}", f"{ms:.1f} ms", "report", None, f"{q!r}, {runs[0][1]} found")
        figures[name] = ms
    return figures


def sidebar(engine, repeat: int, label: str, report: h.Report) -> dict:
    timed(engine, sidebar_listing, limit=50, include_archived=False)
    times = [
        timed(engine, sidebar_listing, limit=50, include_archived=False)[0] for _ in range(repeat)
    ]
    p50, p95 = h.percentile(times, 50), h.percentile(times, 95)
    report.add(
        f"{label}: sidebar first page",
        f"{p95:.1f} ms",
        "≤ 50 ms",
        p95 <= 50,
        f"p95 (p50 {p50:.1f} ms) of {repeat}: 20 pins, 20 folders with 500 conversations, 51 rows",
    )
    return {"sidebar_p50_ms": p50, "sidebar_p95_ms": p95}


def start_postgres(tmp: Path) -> str:
    script = h.ROOT / "scripts" / "postgres.sh"
    out = subprocess.run([str(script), "start", str(tmp / "pg")], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return out.stdout.strip()


def fresh_pg_database(server: str, name: str) -> str:
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    url = make_url(server)
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--sizes", default="100000,1000000")
        p.add_argument("--db", default="sqlite,postgresql")
        p.add_argument("--pg-url", default="")

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    sizes = [10_000, 30_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    repeat = args.repeat or (20 if args.quick else 100)
    kinds = args.db.split(",")
    report = h.Report("search", "full-text search and the sidebar, server side")
    with tempfile.TemporaryDirectory(prefix="agent-chat-search-") as tmp_name:
        tmp = Path(tmp_name)
        pg_server = args.pg_url or (start_postgres(tmp) if "postgresql" in kinds else "")
        try:
            for size in sizes:
                t0 = time.perf_counter()
                rows, words = messages(size)
                generate_s = time.perf_counter() - t0
                conversations = rows[-1][0] + 1
                for kind in kinds:
                    label = f"{kind} {size:,} msgs"
                    if kind == "sqlite":
                        path = tmp / f"search-{size}.db"
                        url = h.sqlite_url(path)
                        migrate(url)
                        t0 = time.perf_counter()
                        populate_sqlite(path, rows)
                    else:
                        url = fresh_pg_database(pg_server, f"bench_search_{size}")
                        migrate(url)
                        t0 = time.perf_counter()
                        populate_postgresql(url, rows)
                    load_s = time.perf_counter() - t0
                    engine = make_engine(url)
                    organise(engine, conversations)
                    h.log(f"{label}: loaded in {load_s:.0f} s; measuring")
                    figures = measure(engine, words, repeat, label, report)
                    figures.update(
                        sidebar(engine, repeat, f"{kind} {conversations:,} conversations", report)
                    )
                    engine.dispose()
                    if kind == "sqlite":
                        figures["db_mb"] = path.stat().st_size / 1e6
                    report.runs.append(
                        {
                            "db": kind,
                            "messages": size,
                            "load_s": load_s,
                            "generate_s": generate_s,
                            **figures,
                        }
                    )
                    report.notes.append(
                        f"{label}: generated in {generate_s:.0f} s, bulk insert (with indexing) "
                        f"{load_s:.0f} s"
                        + (f", file {figures['db_mb']:.0f} MB" if "db_mb" in figures else "")
                    )
        finally:
            if pg_server and not args.pg_url:
                subprocess.run(
                    [str(h.ROOT / "scripts" / "postgres.sh"), "stop", str(tmp / "pg")], check=False
                )
    report.notes.append("shared 2-core machine (other agents' tests running)")
    report.finish()
    return report


if __name__ == "__main__":
    main()

"""The sidebar's first page with 10,000 sessions in the database, server side.

10,000 sessions (10 % archived, spread over a year of activity, two messages each) are bulk
inserted into a migrated SQLite database; then `agent_chat.db.sessions.list_sessions(limit=50)`
is timed, each call in its own transaction as the app makes it (median of N).
Also reported: what the sidebar's refresh does in all (51 rows + the open-questions query),
the next page (offset 50) and a search (title or any message containing a word).
Target: first page ≤ 50 ms.

Run: python benchmarks/sidebar.py [--quick] [--sessions N] [--repeat N]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
from sqlalchemy import insert  # noqa: E402

from agent_chat.db import pauses, sessions  # noqa: E402
from agent_chat.db.engine import open_session  # noqa: E402
from agent_chat.db.models import ChatMessage, ChatSession  # noqa: E402


def populate(engine, count: int, *, owner: int = h.BENCH_OWNER, first_id: int = 1) -> None:
    """`count` conversations of `owner` (ids from `first_id`), two messages each."""
    rng = random.Random(5 + first_id)  # 6 for the default: the same data as before
    now = datetime(2026, 1, 1)
    rows, msgs = [], []
    for i in range(first_id, first_id + count):
        at = now - timedelta(seconds=rng.randrange(365 * 86400))
        rows.append(
            {
                "id": i,
                "session_uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                "hermes_session": uuid.uuid4().hex,
                "owner_id": owner,
                "title": f"Conversation {i} about {rng.choice(['cats', 'taxes', 'rust', 'soup', 'trains'])}",
                "status": "ARCHIVED" if i % 10 == 0 else "ACTIVE",
                "created_at": at,
                "last_message_at": at,
                "updated_at": at,
            }
        )
        msgs.append(
            {
                "session_id": i,
                "role": "USER",
                "content": f"question {i} lorem ipsum",
                "status": "SENT",
                "is_active": True,
                "branch_order": 0,
                "created_at": at,
            }
        )
        msgs.append(
            {
                "session_id": i,
                "role": "ASSISTANT",
                "content": f"answer {i} " + "dolor sit amet " * 20,
                "status": "SUCCESS",
                "is_active": True,
                "branch_order": 0,
                "created_at": at,
            }
        )
    with open_session(engine) as session:
        h.ensure_bench_owner(session)
        session.execute(insert(ChatSession), rows)
        session.execute(insert(ChatMessage), msgs)


def timed(engine, fn, repeat: int, **kwargs) -> tuple[float, int]:
    """Median milliseconds of `fn(session=..., **kwargs)` in a fresh transaction; result size."""
    times, size = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        with open_session(engine) as session:
            result = fn(session=session, user_id=h.BENCH_OWNER, **kwargs)
        times.append((time.perf_counter() - t0) * 1000)
        size = len(result)
    return h.median(times), size


def sidebar_refresh(*, session, user_id: int, limit: int = 51):
    rows = sessions.list_sessions(session=session, user_id=user_id, limit=limit)
    pauses.open_pauses_by_session(session=session, user_id=user_id)
    return rows


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--sessions", type=int, default=10000)

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    repeat = args.repeat or (20 if args.quick else 100)
    report = h.Report("sidebar", f"sidebar with {args.sessions:,} sessions (SQLite)")
    with tempfile.TemporaryDirectory(prefix="agent-chat-bench-") as tmp_name:
        engine = h.engine_for(h.sqlite_url(Path(tmp_name) / "app.db"))
        t0 = time.perf_counter()
        populate(engine, args.sessions)
        insert_s = time.perf_counter() - t0
        timed(engine, sessions.list_sessions, 3, limit=50)  # warm the page cache
        first, size = timed(engine, sessions.list_sessions, repeat, limit=50)
        refresh, _ = timed(engine, sidebar_refresh, repeat)
        second, _ = timed(engine, sessions.list_sessions, repeat, limit=50, offset=50)
        archived, _ = timed(engine, sessions.list_sessions, repeat, limit=50, include_archived=True)
        search, hits = timed(
            engine, sessions.list_sessions, max(5, repeat // 10), limit=51, search="dolor"
        )
        search_miss, _ = timed(
            engine, sessions.list_sessions, max(5, repeat // 10), limit=51, search="zebra"
        )
        with open_session(engine) as session:
            plan = (
                session.connection()
                .exec_driver_sql(
                    "EXPLAIN QUERY PLAN SELECT * FROM chat_session WHERE owner_id = 1 "
                    "AND status = 'ACTIVE' ORDER BY last_message_at DESC, id DESC LIMIT 50"
                )
                .all()
            )
        engine.dispose()
    report.runs = [
        {
            "insert_s": insert_s,
            "first_ms": first,
            "refresh_ms": refresh,
            "second_ms": second,
            "archived_ms": archived,
            "search_ms": search,
            "search_miss_ms": search_miss,
        }
    ]
    report.add(
        "#7 list_sessions(limit=50), first page",
        f"{first:.2f} ms",
        "≤ 50 ms",
        first <= 50,
        f"median of {repeat}; {size} rows",
    )
    report.add(
        "sidebar refresh (51 rows + open questions)",
        f"{refresh:.2f} ms",
        "report",
        None,
        f"median of {repeat}",
    )
    report.add("next page (offset 50)", f"{second:.2f} ms", "report", None, f"median of {repeat}")
    report.add(
        "first page incl. archived", f"{archived:.2f} ms", "report", None, f"median of {repeat}"
    )
    report.add(
        "search, matches every session",
        f"{search:.1f} ms",
        "report",
        None,
        f"median of {max(5, repeat // 10)}; {hits} rows",
    )
    report.add(
        "search, matches none (scans all)",
        f"{search_miss:.1f} ms",
        "report",
        None,
        f"median of {max(5, repeat // 10)}; 20,000 messages scanned",
    )
    report.notes.append(
        f"bulk insert of {args.sessions:,} sessions + {2 * args.sessions:,} messages: {insert_s:.2f} s"
    )
    report.notes.append("query plan of the first page: " + "; ".join(str(r[-1]) for r in plan))
    report.notes.append("shared 2-core machine")
    report.finish()
    return report


if __name__ == "__main__":
    main()

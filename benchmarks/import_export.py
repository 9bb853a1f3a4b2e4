"""Import of a 2,000-message export (a tree with versions and logs), server side.

The file is made by the app's own export: a conversation of 2,000 messages (user questions and
answers, every 8th answer regenerated so it has 2 versions, every 4th question edited once,
each answer with a run log of 7 rows: reasoning, a tool call and its result, the text, the
end; a question asked back on every 10th answer) is bulk inserted and exported
(`branch=all`). Then `export/importing.py:read_export` and `db/imports.py:import_conversation`
(parse, check, write in one transaction, as `POST /api/chat/sessions/import` and the
sidebar's button do through `services/imports.py`) is timed: median of N.
Target: ≤ 5 s. The export of the same conversation is reported too.

Run: python benchmarks/import_export.py [--quick] [--messages N] [--repeat N] [--db-url URL]
(`--db-url` a PostgreSQL URL for that database; default a fresh SQLite file.)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402

from agent_chat.db.engine import open_session  # noqa: E402
from agent_chat.db.imports import import_conversation  # noqa: E402
from agent_chat.db.models import (  # noqa: E402
    ChatMessage,
    ChatMessageLog,
    ChatSession,
    RunPause,
)
from agent_chat.export import collect, to_json_text  # noqa: E402
from agent_chat.export.importing import read_export as parse_export  # noqa: E402


def _log_rows(message_id: int, n: int, at: datetime) -> list[ChatMessageLog]:
    events = [
        ("run_started", "", {"session_id": "h", "model": "fake-model"}),
        ("reasoning_delta", f"Thinking about question {n} " * 8, {"seq_to": 12}),
        ("tool_start", "", {"call_id": f"c{n}", "tool": "web_search", "args": {"q": f"q{n}"}}),
        ("tool_end", "", {"call_id": f"c{n}", "result": '{"hits": [1, 2, 3]}' * 5}),
        ("text_delta", f"Answer {n}: " + "lorem ipsum dolor sit amet " * 12, {"seq_to": 60}),
        ("status", "", {"category": "info", "message": "done"}),
        ("run_completed", "", {"final_text": f"Answer {n}", "usage": {"total_tokens": 300}}),
    ]
    seqs = [1, 2, 13, 14, 15, 61, 62]
    return [
        ChatMessageLog(
            message_id=message_id,
            seq=seq,
            kind=kind,
            content=content,
            tool_name="web_search" if kind.startswith("tool") else None,
            meta_json=json.dumps(meta),
            created_at=at,
        )
        for seq, (kind, content, meta) in zip(seqs, events, strict=True)
    ]


def populate(engine, messages: int) -> str:
    """A conversation of about `messages` messages; returns its uuid."""
    at = datetime(2026, 1, 1)
    with open_session(engine) as session:
        owner = h.ensure_bench_owner(session)  # the export and the import are the owner's
        chat = ChatSession(title="A long conversation with versions", owner_id=owner)
        session.add(chat)
        session.flush()
        parent: int | None = None
        made, n = 0, 0
        while made < messages:
            n += 1
            at += timedelta(seconds=30)
            versions = 2 if n % 4 == 0 and made + 4 <= messages else 1
            users = []
            for v in range(versions):
                user = ChatMessage(
                    session_id=chat.id, parent_id=parent, role="USER", status="SENT",
                    content=f"Question {n} (version {v + 1}) " + "why? " * 10,
                    is_active=v == versions - 1, branch_order=v, created_at=at,
                )  # fmt: skip
                session.add(user)
                users.append(user)
            session.flush()
            made += versions
            for user in users:
                answers = 2 if n % 8 == 0 and made + 2 <= messages else 1
                rows = []
                for v in range(answers):
                    answer = ChatMessage(
                        session_id=chat.id, parent_id=user.id, role="ASSISTANT",
                        status="SUCCESS", content=f"Answer {n}: " + "lorem ipsum " * 40,
                        is_active=v == answers - 1, branch_order=v, run_id=str(uuid.uuid4()),
                        input_tokens=100, output_tokens=200, total_tokens=300,
                        created_at=at, completed_at=at,
                    )  # fmt: skip
                    session.add(answer)
                    rows.append(answer)
                session.flush()
                made += answers
                for answer in rows:
                    session.add_all(_log_rows(answer.id, n, at))
                    if n % 10 == 0:
                        session.add(
                            RunPause(
                                run_id=answer.run_id, message_id=answer.id, clarify_id="q1",
                                question="Which one?", choices_json='["a", "b"]',
                                status="ANSWERED", answer="a", created_at=at, answered_at=at,
                            )
                        )  # fmt: skip
                parent = rows[-1].id
        session.flush()
        return chat.session_uuid


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--messages", type=int, default=2000)
        p.add_argument("--db-url", default=None)

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    repeat = args.repeat or (1 if args.quick else 3)
    with tempfile.TemporaryDirectory(prefix="agent-chat-bench-") as tmp_name:
        url = args.db_url or h.sqlite_url(Path(tmp_name) / "app.db")
        engine = h.engine_for(url)
        backend = engine.dialect.name
        report = h.Report(
            f"import_export_{backend}", f"import of a {args.messages:,}-message export ({backend})"
        )
        uuid_ = populate(engine, args.messages)
        t0 = time.perf_counter()
        with open_session(engine) as session:
            data = collect(session=session, session_uuid=uuid_, user_id=h.BENCH_OWNER, branch="all")
            text = to_json_text(data, exported_at=datetime(2026, 1, 2))
        export_s = time.perf_counter() - t0
        doc = json.loads(text)
        count = len(doc["messages"])
        logs = sum(len(m["logs"]) for m in doc["messages"])
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            with open_session(engine) as session:
                done = import_conversation(
                    session=session, plan=parse_export(text.encode("utf-8")), user_id=h.BENCH_OWNER
                )
            times.append(time.perf_counter() - t0)
            assert done.messages == count
        engine.dispose()
    median = h.median(times)
    report.runs = [{"import_s": t, "export_s": export_s} for t in times]
    report.add(
        f"import of {count:,} messages (parse, check, write)",
        f"{median:.2f} s",
        "≤ 5 s",
        median <= 5,
        f"median of {repeat}; {logs:,} log rows; file {len(text) / 1e6:.1f} MB",
    )
    report.add("export of the same conversation (branch=all)", f"{export_s:.2f} s")
    report.finish()
    return report


if __name__ == "__main__":
    main()

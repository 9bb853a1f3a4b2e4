"""Persisting a 10,000-event run: the batch writer vs one transaction per event.

SQLite (WAL, as the app configures it) in a temp dir, migrated to head; one assistant message
per variant, each in its own database file.

- batch writer: `agent_chat.runs.batch_writer.LogBatchWriter` with the RunManager's write
  function (one transaction per flush), events added as fast as the event loop takes them;
  timed until `close()` has flushed everything.
- one transaction per event: `agent_chat.db.logs.append_logs` with one row per `open_session`.

Both must store every seq exactly once (`agent_chat.protocol.log_codec.seqs_covered`).
Target: ≥ 10 × faster, 0 lost. Median of 3 repetitions (the per-event variant once in --quick).

Run: python benchmarks/persistence.py [--quick] [--events N] [--repeat K]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402

from agent_chat.db import logs, messages, sessions  # noqa: E402
from agent_chat.db.engine import open_session  # noqa: E402
from agent_chat.db.logs import LogRow  # noqa: E402
from agent_chat.db.models import MessageRole, MessageStatus  # noqa: E402
from agent_chat.protocol.log_codec import event_to_row, seqs_covered  # noqa: E402
from agent_chat.runs.batch_writer import LogBatchWriter  # noqa: E402


def make_events(count: int) -> list[tuple[str, int, dict]]:
    """A run's events: mostly text deltas, with reasoning, tool calls and TODO updates mixed in."""
    events: list[tuple[str, int, dict]] = [
        ("run_started", 1, {"session_id": "s", "model": "m", "ts": 0.0})
    ]
    for seq in range(2, count):
        phase = seq % 100
        if phase < 20:
            events.append(("reasoning_delta", seq, {"text": f"thought {seq} ", "ts": 0.0}))
        elif phase == 20:
            events.append(("text_break", seq, {"ts": 0.0}))
        elif phase == 21:
            events.append(
                (
                    "tool_start",
                    seq,
                    {"call_id": f"c{seq}", "tool": "todo", "args": {"todos": []}, "ts": 0.0},
                )
            )
        elif phase == 22:
            todos = [{"id": "1", "content": "step", "status": "completed"}]
            events.append(("todo_update", seq, {"todos": todos, "summary": "1/1", "ts": 0.0}))
        elif phase == 23:
            events.append(
                (
                    "tool_end",
                    seq,
                    {
                        "call_id": f"c{seq - 2}",
                        "tool": "todo",
                        "result": "ok",
                        "duration_ms": 3,
                        "is_error": False,
                        "ts": 0.0,
                    },
                )
            )
        else:
            events.append(("text_delta", seq, {"text": f"word{seq} ", "ts": 0.0}))
    events.append(("run_completed", count, {"final_text": "", "usage": {}, "ts": 0.0}))
    return events


def fresh_db(tmp: Path, name: str):
    """A migrated database with one session and an assistant message; (engine, message id)."""
    engine = h.engine_for(h.sqlite_url(tmp / f"{name}.db"))
    with open_session(engine) as session:
        chat = sessions.create_session(
            session=session, user_id=h.ensure_bench_owner(session), title="bench"
        )
        user = messages.append_message(
            session=session,
            chat_session_id=chat.id,
            parent_id=None,
            role=MessageRole.USER,
            content="q",
            status=MessageStatus.SENT,
        )
        assistant = messages.append_message(
            session=session,
            chat_session_id=chat.id,
            parent_id=user.id,
            role=MessageRole.ASSISTANT,
            content="",
            status=MessageStatus.RUNNING,
            run_id="bench",
        )
        return engine, assistant.id


def coverage(engine, message_id: int, count: int) -> tuple[int, int, int]:
    """(missing seqs, duplicated seqs, rows stored)."""
    with open_session(engine) as session:
        rows = logs.list_logs(session=session, message_id=message_id)
    seen: dict[int, int] = {}
    for row in rows:
        for seq in seqs_covered(row.seq, row.meta_json):
            seen[seq] = seen.get(seq, 0) + 1
    missing = sum(1 for seq in range(1, count + 1) if seq not in seen)
    dups = sum(n - 1 for n in seen.values()) + sum(1 for seq in seen if not 1 <= seq <= count)
    return missing, dups, len(rows)


async def batched(engine, message_id: int, events) -> dict:
    def write(batch: dict[int, list[LogRow]]) -> None:  # as RunManager._write_logs
        with open_session(engine) as session:
            for mid, rows in batch.items():
                logs.append_logs(session=session, message_id=mid, rows=rows)

    writer = LogBatchWriter(write)
    writer.start()
    t0 = time.perf_counter()
    for kind, seq, data in events:
        writer.add(message_id, event_to_row(kind, seq, data))
        if kind in ("run_completed", "clarify_request"):
            await writer.flush()  # what the RunManager does at terminal/clarify events
        await asyncio.sleep(0)  # let the writer's loop run between events, as a live stream does
    await writer.close()
    return {"seconds": time.perf_counter() - t0, "flushes": writer.flushes}


def per_event(engine, message_id: int, events) -> dict:
    t0 = time.perf_counter()
    for kind, seq, data in events:
        with open_session(engine) as session:
            logs.append_logs(
                session=session, message_id=message_id, rows=[event_to_row(kind, seq, data)]
            )
    return {"seconds": time.perf_counter() - t0, "flushes": len(events)}


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--events", type=int, default=None, help="events in the run (default 10000)")

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    count = args.events or (2000 if args.quick else 10000)
    repeat = args.repeat or (1 if args.quick else 3)
    events = make_events(count)
    report = h.Report("persistence", f"a {count:,}-event run persisted to SQLite")
    runs = []
    with tempfile.TemporaryDirectory(prefix="agent-chat-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for i in range(repeat):
            engine, mid = fresh_db(tmp, f"batch{i}")
            b = asyncio.run(batched(engine, mid, events))
            b["missing"], b["dups"], b["rows"] = coverage(engine, mid, count)
            engine.dispose()
            engine, mid = fresh_db(tmp, f"single{i}")
            p = per_event(engine, mid, events)
            p["missing"], p["dups"], p["rows"] = coverage(engine, mid, count)
            engine.dispose()
            runs.append({"batch": b, "per_event": p})
            h.log(
                f"repetition {i + 1}/{repeat}: batch {b['seconds']:.3f} s ({b['rows']} rows), per event {p['seconds']:.2f} s"
            )
    report.runs = runs
    bs = h.median([r["batch"]["seconds"] for r in runs])
    ps = h.median([r["per_event"]["seconds"] for r in runs])
    lost = sum(r[v]["missing"] + r[v]["dups"] for r in runs for v in ("batch", "per_event"))
    n = f"median of {len(runs)}"
    report.add(
        "#6 speed-up: batch writer vs one transaction per event",
        f"{ps / bs:,.0f} ×",
        "≥ 10 ×",
        ps / bs >= 10,
        f"{n}; batch writer {bs:.3f} s ({count / bs:,.0f} events/s, {runs[0]['batch']['flushes']} flushes, "
        f"{runs[0]['batch']['rows']:,} rows after merging deltas); one transaction per event {ps:.2f} s "
        f"({count / ps:,.0f} events/s, {runs[0]['per_event']['rows']:,} rows)",
    )
    report.add("#6 seqs missing or duplicated (both variants, all runs)", str(lost), "0", lost == 0)
    report.notes.append(
        "SQLite file in a temp dir, WAL, synchronous at SQLite's default (the app's engine settings); shared 2-core machine"
    )
    report.finish()
    return report


if __name__ == "__main__":
    main()

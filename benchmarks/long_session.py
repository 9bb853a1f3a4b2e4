"""One conversation of 2,000 messages with branches.

The database gets one session whose active branch holds 2,000 messages (user/assistant
alternating, assistant messages with a few log rows: thinking, a tool call, a TODO list), and
every 10th user message has two older versions (inactive siblings, each answered): 2,400
messages in the tree. Then:

- server side: `agent_chat.db.conversation.load_conversation(limit=50)`, median of N (≤ 300 ms);
- browser: navigate to /chat/<uuid> in a fresh browser context and time until the last message
  is in the viewport (median of 3, ≤ 1.5 s); a 2-message conversation is timed the same way for
  comparison;
- the Reflex backend's memory (PSS and RSS of its process tree) after the page loads (report).

Run: python benchmarks/long_session.py [--quick] [--messages N] [--repeat K]
"""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
from sqlalchemy import insert  # noqa: E402

from agent_chat.db.conversation import load_conversation  # noqa: E402
from agent_chat.db.engine import open_session  # noqa: E402
from agent_chat.db.models import ChatMessage, ChatMessageLog, ChatSession  # noqa: E402

LAST_WORD = "zzlast"
LAST_VISIBLE_JS = """
(word) => {
  const all = document.querySelectorAll('[data-testid=message-assistant], [data-testid=message-user]');
  const last = all[all.length - 1];
  if (!last || !last.textContent.includes(word)) return false;
  const r = last.getBoundingClientRect();
  return r.height > 0 && r.bottom > 0 && r.top < window.innerHeight;
}
"""


def populate(engine, count: int) -> tuple[str, str, int]:
    """The long session (its uuid) and a 2-message session for comparison."""
    start = datetime(2026, 1, 1)
    long_uuid, short_uuid = str(uuid.uuid4()), str(uuid.uuid4())
    sessions = [
        {
            "id": 1,
            "session_uuid": long_uuid,
            "hermes_session": uuid.uuid4().hex,
            "owner_id": h.BENCH_OWNER,
            "title": "A long conversation",
            "status": "ACTIVE",
            "created_at": start,
            "last_message_at": start + timedelta(days=1),
            "updated_at": start,
        },
        {
            "id": 2,
            "session_uuid": short_uuid,
            "hermes_session": uuid.uuid4().hex,
            "owner_id": h.BENCH_OWNER,
            "title": "A short conversation",
            "status": "ACTIVE",
            "created_at": start,
            "last_message_at": start,
            "updated_at": start,
        },
    ]
    msgs, log_rows = [], []
    next_id = 1

    def add(session_id, parent, role, content, active, order, at):
        nonlocal next_id
        mid = next_id
        next_id += 1
        msgs.append(
            {
                "id": mid,
                "session_id": session_id,
                "parent_id": parent,
                "role": role,
                "content": content,
                "status": "SENT" if role == "USER" else "SUCCESS",
                "is_active": active,
                "branch_order": order,
                "created_at": at,
                "run_id": None if role == "USER" else uuid.uuid4().hex,
            }
        )
        if role == "ASSISTANT":
            log_rows.extend(
                [
                    {
                        "message_id": mid,
                        "seq": 1,
                        "kind": "reasoning_delta",
                        "content": "Let me think about this step by step.",
                        "meta_json": '{"ts": 0, "seq_to": 12}',
                        "created_at": at,
                    },
                    {
                        "message_id": mid,
                        "seq": 13,
                        "kind": "tool_start",
                        "content": "",
                        "tool_name": "todo",
                        "meta_json": '{"call_id": "c1", "tool": "todo", "args": {}}',
                        "created_at": at,
                    },
                    {
                        "message_id": mid,
                        "seq": 14,
                        "kind": "todo_update",
                        "content": "",
                        "meta_json": '{"todos": [{"id": "1", "content": "a", "status": "completed"}], "summary": "1/1"}',
                        "created_at": at,
                    },
                    {
                        "message_id": mid,
                        "seq": 15,
                        "kind": "tool_end",
                        "content": "",
                        "tool_name": "todo",
                        "meta_json": '{"call_id": "c1", "tool": "todo", "result": "ok", "duration_ms": 2, "is_error": false}',
                        "created_at": at,
                    },
                    {
                        "message_id": mid,
                        "seq": 16,
                        "kind": "text_delta",
                        "content": content,
                        "meta_json": '{"seq_to": 80}',
                        "created_at": at,
                    },
                ]
            )
        return mid

    parent = None
    for i in range(count):
        at = start + timedelta(seconds=i * 30)
        if i % 2 == 0:
            if i % 20 == 0:
                for version in range(2):  # older versions of this question, each answered
                    old = add(
                        1,
                        parent,
                        "USER",
                        f"Question {i} (version {version + 1}) about item {i}?",
                        False,
                        version,
                        at,
                    )
                    add(1, old, "ASSISTANT", f"Old answer {i}.{version}.", True, 0, at)
                order = 2
            else:
                order = 0
            parent = add(
                1, parent, "USER", f"Question {i}: how does **item {i}** work?", True, order, at
            )
        else:
            last = i == count - 1
            text = (
                f"Answer {i}. Item {i - 1} works like this:\n\n- first, a point\n- then another\n\n"
                "Some `code` and a longer paragraph of explanation that goes on for a while. "
                * 2
                + (f"\n\nThe end {LAST_WORD}." if last else "")
            )
            parent = add(1, parent, "ASSISTANT", text, True, 0, at)
    q = add(2, None, "USER", "Hello?", True, 0, start)
    add(2, q, "ASSISTANT", f"Hi. {LAST_WORD}", True, 0, start)
    with open_session(engine) as session:
        session.execute(insert(ChatSession), sessions)
        session.execute(insert(ChatMessage), msgs)
        session.execute(insert(ChatMessageLog), log_rows)
    return long_uuid, short_uuid, len(msgs)


def first_paint(b, app_url: str, session_uuid: str) -> float:
    context = h.signed_in_context(b, app_url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        t0 = time.perf_counter()
        page.goto(f"{app_url}/chat/{session_uuid}", wait_until="commit")
        page.wait_for_function(LAST_VISIBLE_JS, arg=LAST_WORD, polling="raf", timeout=120_000)
        return time.perf_counter() - t0
    finally:
        context.close()


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--messages", type=int, default=2000)

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    repeat = args.repeat or (1 if args.quick else 3)
    server_repeat = 10 if args.quick else 30
    report = h.Report("long_session", f"a conversation of {args.messages:,} messages with branches")
    with tempfile.TemporaryDirectory(prefix="agent-chat-bench-db-") as tmp_name:
        db_path = Path(tmp_name) / "app.db"
        with h.stack(rate=1000, db_path=db_path) as s, h.browser() as b:
            # After the app started: it migrates the database and makes its administrator,
            # user 1, who owns the conversations (an empty database has no user 1).
            engine = h.engine_for(h.sqlite_url(db_path))
            long_uuid, short_uuid, total = populate(engine, args.messages)
            times = []
            for _ in range(server_repeat + 2):
                t0 = time.perf_counter()
                with open_session(engine) as session:
                    view = load_conversation(
                        session=session, session_uuid=long_uuid, user_id=h.BENCH_OWNER, limit=50
                    )
                times.append((time.perf_counter() - t0) * 1000)
            server_ms = h.median(times[2:])
            engine.dispose()
            assert view.total == args.messages and len(view.messages) == 50, (
                view.total,
                len(view.messages),
            )
            mem_before = h.tree_memory(s.app_pid)
            first_paint(b, s.app_url, short_uuid)  # warm-up: the app's first page view
            long_times, short_times = [], []
            for i in range(repeat):
                long_times.append(first_paint(b, s.app_url, long_uuid))
                short_times.append(first_paint(b, s.app_url, short_uuid))
                h.log(
                    f"repetition {i + 1}/{repeat}: long {long_times[-1]:.2f} s, short {short_times[-1]:.2f} s"
                )
            time.sleep(1)
            mem_after = h.tree_memory(s.app_pid)
    report.runs = [
        {
            "server_ms": times,
            "long_s": long_times,
            "short_s": short_times,
            "mem_before": mem_before,
            "mem_after": mem_after,
        }
    ]
    report.add(
        "#8 load_conversation(limit=50), server side",
        f"{server_ms:.1f} ms",
        "≤ 300 ms",
        server_ms <= 300,
        f"median of {server_repeat}; {total:,} messages in the tree, {args.messages:,} on the active branch",
    )
    paint = h.median(long_times)
    report.add(
        "#8 first paint: navigate → last message in view",
        f"{paint:.2f} s",
        "≤ 1.5 s",
        paint <= 1.5,
        f"median of {repeat}, fresh browser context each; the same for a 2-message conversation: {h.median(short_times):.2f} s",
    )
    report.add(
        "#8 app memory after (PSS / RSS of the backend tree)",
        f"{mem_after[0]:.0f} / {mem_after[1]:.0f} MiB",
        "report",
        None,
        f"after start: {mem_before[0]:.0f} / {mem_before[1]:.0f} MiB",
    )
    report.notes.append("figures from a shared 2-core machine")
    report.finish()
    return report


if __name__ == "__main__":
    main()

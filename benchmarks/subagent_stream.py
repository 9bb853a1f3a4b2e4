"""The websocket cost of child agents: an answer whose delegate_task call runs 4 children at
once, each streaming reasoning and text and calling `todo` every turn (the benchmark model's
``bench-mixed``), followed live in headless chromium from a real conversation page.

Per repetition (median of 3 reported):
- websocket bytes the page received (send → answer finalised) ÷ the text the run streamed (the
  answer's and its children's text and reasoning deltas, from the bridge's events): target
  ≤ 2 ×, as for a plain answer (benchmarks/stream_cost.py #1); the cards' share (the state
  deltas) is reported apart;
- the same bytes ÷ the answer's own final text (report).

The children's text is not on their cards (goal, status, tools, TODOs, summary), so what their
streaming costs the page is the cards' updates: one `subagents` var, an unchanged child's row
reused (display/feed.py).

Run: python benchmarks/subagent_stream.py [--quick] [--children N] [--turns T] [--per P]
     [--rate R] [--repeat K]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import httpx  # noqa: E402

TEXT_EVENTS = {"text_delta", "reasoning_delta", "subagent_text_delta", "subagent_reasoning_delta"}


def message(children: int, turns: int, per: int, rate: float) -> str:
    # The benchmark model answers a request whose last user message holds its script, and a
    # child's first user message is its goal; the parent's own message must not match, so
    # the goals spell the dash as a JSON escape (the tool's arguments hold a plain dash).
    goal = f"child {{n}}: bench\\u002dmixed {turns} per={per} rate={rate:g}"
    tasks = ", ".join(f'{{"goal": "{goal.format(n=n)}"}}' for n in range(children))
    return f'Split the work\nCALL delegate_task {{"tasks": [{tasks}]}}'


def run_events(s: h.Stack, run_id: str) -> list[tuple[str, dict]]:
    events = []
    url = f"{s.bridge_url}/runs/{run_id}/events?last_event_id=0"
    with httpx.stream("GET", url, timeout=60) as response:
        kind = None
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                events.append((kind or "", json.loads(line.split(":", 1)[1])))
                if kind in ("run_completed", "run_failed", "run_stopped"):
                    break
    return events


class VarCounter(h.WsCounter):
    """Also the state delta's bytes per var, to see what the cards cost."""

    def reset(self) -> None:
        super().reset()
        self.by_var: dict[str, int] = {}

    def _on_frame(self, payload) -> None:
        super()._on_frame(payload)
        if not isinstance(payload, str) or "[" not in payload:
            return
        try:
            body = json.loads(payload[payload.index("[") :])[1]
        except (ValueError, IndexError, TypeError):
            return
        for state in (body.get("delta") or {}).values() if isinstance(body, dict) else ():
            for name, value in state.items() if isinstance(state, dict) else ():
                size = len(json.dumps(value, ensure_ascii=False).encode())
                self.by_var[name] = self.by_var.get(name, 0) + size


def one_run(s: h.Stack, b, text: str) -> dict:
    session_uuid = h.create_chat_session(s.db_url)
    context = h.signed_in_context(b, s.app_url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    ws = VarCounter(page)
    try:
        h.open_chat(page, s.app_url, session_uuid)
        ws.reset()
        h.send(page, text)
        page.get_by_test_id("subagent-card").first.wait_for(timeout=120_000)
        cards_seen = page.get_by_test_id("subagent-card").count()
        page.wait_for_function(
            "() => { const all = document.querySelectorAll('[data-testid=message-assistant]');"
            " const last = all[all.length - 1]; return last && last.dataset.status !== 'RUNNING'; }",
            polling=200,
            timeout=600_000,
        )
        page.wait_for_timeout(1000)
    finally:
        context.close()
    run = h.assistant_run(s.db_url, session_uuid)
    events = run_events(s, run["run_id"])
    streamed = sum(len(str(d.get("text", "")).encode()) for k, d in events if k in TEXT_EVENTS)
    final = next((d for k, d in events if k == "run_completed"), {})
    failed = next((d for k, d in events if k == "run_failed"), {})
    answer = len(str(final.get("final_text", "")).encode())
    return {
        "ws_bytes": ws.bytes,
        "ws_frames": ws.frames,
        "ws_delta_bytes": ws.delta_bytes,
        "ws_event_bytes": ws.event_bytes,
        "streamed_text_bytes": streamed,
        "answer_bytes": answer,
        "children": sum(1 for k, _ in events if k == "subagent_start"),
        "children_ok": sum(
            1 for k, d in events if k == "subagent_end" and d.get("state") == "succeeded"
        ),
        "child_events": sum(1 for k, _ in events if k.startswith("subagent_")),
        "events": len(events),
        "cards_seen": cards_seen,
        "status": run["status"],
        "error": str(failed.get("error") or "")[:300],
        "delta_bytes_by_var": dict(sorted(ws.by_var.items(), key=lambda kv: -kv[1])[:8]),
    }


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--children", type=int, default=4, help="children at once (default 4)")
        p.add_argument("--turns", type=int, default=None, help="todo turns per child (default 4)")
        p.add_argument("--per", type=int, default=60, help="reasoning and text chunks per turn")
        p.add_argument("--rate", type=float, default=100.0, help="chunks/s per child")

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    turns = args.turns or (2 if args.quick else 4)
    repeat = args.repeat or (1 if args.quick else 3)
    report = h.Report(
        "subagent_stream",
        f"{args.children} children at once, each {turns} todo turns of 2×{args.per} chunks "
        f"at {args.rate:g} chunks/s",
    )
    # The Chat profile gets the delegation toolset only with this setting (bridge/settings.py).
    os.environ["AGENT_CHAT_DELEGATION_IN_CHAT"] = "on"
    runs = []
    with h.stack(rate=args.rate) as s:
        # hermes reads its delegation settings per call: 4 at once needs a higher cap than 3.
        config = s.tmp / "hermes" / "config.yaml"
        config.write_text(
            config.read_text(encoding="utf-8")
            + f"delegation:\n  max_concurrent_children: {max(args.children, 3)}\n",
            encoding="utf-8",
        )
        with h.browser() as b:
            for n in range(repeat):
                h.log(f"repetition {n + 1}/{repeat}")
                result = one_run(s, b, message(args.children, turns, args.per, args.rate))
                h.log(json.dumps(result))
                runs.append(result)
                time.sleep(1)
    report.runs = runs
    ratio = h.median([r["ws_bytes"] / max(r["streamed_text_bytes"], 1) for r in runs])
    last = runs[-1]
    report.add(
        "websocket bytes ÷ streamed text (answer + children)",
        f"{ratio:.2f} ×",
        "≤ 2 ×",
        ratio <= 2,
        f"median of {len(runs)}; last: {last['ws_bytes']:,} B in {last['ws_frames']} frames "
        f"(state deltas {last['ws_delta_bytes']:,} B, scripts {last['ws_event_bytes']:,} B) "
        f"for {last['streamed_text_bytes']:,} B streamed",
    )
    per_answer = h.median([r["ws_bytes"] / max(r["answer_bytes"], 1) for r in runs])
    report.add(
        "websocket bytes ÷ the answer's own final text",
        f"{per_answer:.1f} ×",
        "report",
        None,
        f"last: {last['answer_bytes']:,} B answer",
    )
    report.add(
        "children, cards",
        f"{last['children_ok']}/{last['children']} succeeded, {last['cards_seen']} cards",
        f"{args.children}/{args.children}",
        last["children_ok"] == last["children"] == args.children,
        f"{last['child_events']:,} child events of {last['events']:,}; status {last['status']}",
    )
    report.finish()
    return report


if __name__ == "__main__":
    main()

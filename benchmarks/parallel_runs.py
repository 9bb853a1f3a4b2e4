"""8 runs streaming at once; all complete, every event persisted.

The app's run engine is driven in-process (`services.runtime.start_services` with Settings
pointing at a temp SQLite database and a real bridge + paced fake model started for the
benchmark; `services().runs.send(...)`), without Reflex and without a browser: the figure is
the RunManager's own cost (bridge client, reducer, batch writer, database), not the
websocket fan-out to tabs (stream_cost.py measures that).

First one run alone, then 8 at once (each: N tokens at R tokens/s). Per phase: wall time,
every message SUCCESS, every seq 1..last stored exactly once, this process's CPU seconds per
1,000 events (and the bridge's, for comparison). Median of 3 repetitions of each phase.

Run: python benchmarks/parallel_runs.py [--quick] [--runs 8] [--tokens N] [--rate R] [--repeat K]
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import psutil  # noqa: E402

from agent_chat.config import Settings  # noqa: E402
from agent_chat.db import sessions  # noqa: E402
from agent_chat.db.models import ChatMessage  # noqa: E402
from agent_chat.services.runtime import start_services, stop_services  # noqa: E402


def own_cpu() -> float:
    t = psutil.Process().cpu_times()
    return t.user + t.system


async def phase(svc, s: h.Stack, runs: int, message: str) -> dict:
    uuids = [
        (
            await svc.storage.call(
                sessions.create_session, user_id=h.BENCH_OWNER, title=f"bench {i}"
            )
        ).session_uuid
        for i in range(runs)
    ]
    cpu0, bridge0, t0 = own_cpu(), h.tree_cpu(s.bridge_pid), time.perf_counter()
    started = await asyncio.gather(
        *(svc.runs.send(user_id=h.BENCH_OWNER, session_uuid=u, text=message) for u in uuids)
    )
    while any(svc.runs.consumed.get(r.run_id) for r in started):
        await svc.runs.wait_activity(0.5)  # set when a run ends
    wall = time.perf_counter() - t0
    cpu, bridge_cpu = own_cpu() - cpu0, h.tree_cpu(s.bridge_pid) - bridge0
    events = lost = dups = 0
    statuses = []
    for r in started:
        msg = await svc.storage.call(
            lambda session, mid=r.assistant_message_id: session.get(ChatMessage, mid)
        )
        statuses.append(msg.status)
        distinct, dup, top = h.seq_coverage(s.db_url, r.assistant_message_id)
        events += top
        lost += top - distinct
        dups += dup
    return {
        "runs": runs,
        "wall_s": wall,
        "events": events,
        "app_cpu_s": cpu,
        "bridge_cpu_s": bridge_cpu,
        "app_cpu_per_1k": cpu / events * 1000,
        "bridge_cpu_per_1k": bridge_cpu / events * 1000,
        "lost": lost,
        "dups": dups,
        "succeeded": sum(1 for st in statuses if st == "SUCCESS"),
        "statuses": statuses,
    }


async def run_all(args, s: h.Stack) -> list[dict]:
    settings = Settings(
        db_url=s.db_url,
        bridge_url=s.bridge_url,
        bridge_token=None,
        app_host="127.0.0.1",
        app_port=0,
        skills_dir=s.tmp / "skills",
        max_active_runs=args.runs,
        max_message_chars=100_000,
        env_model_base_url=f"{s.model_url}/v1",
        env_model_api_key="bench",
        env_model_name=h.MODEL_NAME,
        env_model_context_length=h.CONTEXT_LENGTH,
    )
    svc = await start_services(settings)
    message = f"bench-text {args.tokens} rate={args.rate:g}"
    results = []
    try:
        await phase(svc, s, 1, "bench-text 50 rate=0")  # warm-up
        for i in range(args.repeat):
            single = await phase(svc, s, 1, message)
            many = await phase(svc, s, args.runs, message)
            h.log(
                f"repetition {i + 1}/{args.repeat}: 1 run {single['wall_s']:.1f} s, {single['app_cpu_per_1k']:.3f} s/1k; "
                f"{args.runs} runs {many['wall_s']:.1f} s, {many['app_cpu_per_1k']:.3f} s/1k, {many['succeeded']}/{args.runs} ok, lost {many['lost']}"
            )
            results.append({"single": single, "parallel": many})
    finally:
        await stop_services()
    return results


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--runs", type=int, default=8)
        p.add_argument("--tokens", type=int, default=None, help="tokens per run (default 1000)")
        p.add_argument("--rate", type=float, default=100.0, help="tokens per second per run")

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    args.tokens = args.tokens or (300 if args.quick else 1000)
    args.repeat = args.repeat or (1 if args.quick else 3)
    report = h.Report(
        "parallel_runs",
        f"{args.runs} runs at once, {args.tokens:,} tokens each at {args.rate:g} tokens/s (RunManager in-process)",
    )
    with h.stack(rate=args.rate, app=False, max_active_runs=args.runs) as s:
        results = asyncio.run(run_all(args, s))
    report.runs = results

    def med(which: str, key: str) -> float:
        return h.median([r[which][key] for r in results])

    n = f"median of {len(results)}"
    lost = sum(r[w]["lost"] + r[w]["dups"] for r in results for w in ("single", "parallel"))
    failed = sum(r["parallel"]["runs"] - r["parallel"]["succeeded"] for r in results)
    report.add(
        f"#9 {args.runs} runs: completed, events lost or duplicated",
        f"{failed} failed, {lost} lost",
        "0 lost",
        lost == 0 and failed == 0,
        f"{n}; {med('parallel', 'events'):,.0f} events per phase",
    )
    single, many = med("single", "app_cpu_per_1k"), med("parallel", "app_cpu_per_1k")
    report.add(
        "#9 app CPU s per 1,000 events: 1 run / 8 runs",
        f"{single:.3f} / {many:.3f} s",
        "report",
        None,
        f"{n}; ratio {many / single:.2f}; bridge (hermes) for comparison: {med('single', 'bridge_cpu_per_1k'):.3f} / {med('parallel', 'bridge_cpu_per_1k'):.3f} s",
    )
    ideal = args.tokens / args.rate if args.rate else 0
    report.add(
        "#9 wall time: 1 run / 8 runs",
        f"{med('single', 'wall_s'):.1f} / {med('parallel', 'wall_s'):.1f} s",
        "report",
        None,
        f"{n}; the model paces each run to {ideal:.1f} s; 8 runs = {args.runs * args.rate:g} events/s into the bridge",
    )
    report.notes.append(
        "figures from a shared 2-core machine; the bridge runs hermes in one thread per run (one GIL)"
    )
    report.finish()
    return report


if __name__ == "__main__":
    main()

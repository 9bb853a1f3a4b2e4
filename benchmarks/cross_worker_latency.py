"""Event → DOM delay for a tab on the worker that does NOT consume the run, at
~200 events/s; the goal is p95 ≤ 150 ms.

Two web workers on two ports over one PostgreSQL and Redis (two_workers.py). Per repetition
one conversation is opened in two tabs at once, one on worker A and one on worker B; the run
is started through A's HTTP API, so A takes the lease and reads the bridge (checked from the
lease's owner), and B's tab follows through Redis (the run's stream mirrored into B). The
run is mixed_events.py's `bench-mixed` (reasoning, text and TODO chunks, each with a marker);
a MutationObserver in each page notes when each marker first reaches the DOM (Date.now(),
the bridge's `ts` clock). Both tabs see the same events at the same time: the difference of
their delays is what following from the other worker costs.

Run: python benchmarks/cross_worker_latency.py [--quick] [--turns T] [--rate R] [--repeat K]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import httpx  # noqa: E402
from mixed_events import WATCH_MARKERS_JS  # noqa: E402
from two_workers import Workers, two_workers  # noqa: E402

from agent_chat.auth import COOKIE_NAME  # noqa: E402
from tests.support.accounts import session_cookie  # noqa: E402
from tests.support.api import new_session, start_run  # noqa: E402


def emit_times(w: Workers, run_id: str) -> tuple[dict[str, float], list[dict]]:
    import mixed_events

    class _S:  # mixed_events.emit_times reads the bridge's URL only
        bridge_url = w.bridge_url

    return mixed_events.emit_times(_S, run_id)  # type: ignore[arg-type]


def page_on(b, url: str, cookie: str, session_id: str):
    context = b.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([{"name": COOKIE_NAME, "value": cookie, "url": url, "httpOnly": True}])
    page = context.new_page()
    page.set_default_timeout(60_000)
    h.open_chat(page, url, session_id)
    page.evaluate(WATCH_MARKERS_JS)
    return context, page


def one_run(w: Workers, b, cookies: list[str], args) -> dict:
    a_url, b_url = w.app_urls
    client = httpx.Client(
        base_url=a_url, headers={"Cookie": f"{COOKIE_NAME}={cookies[0]}"}, timeout=60
    )
    contexts = []
    try:
        session_id = new_session(client)
        ca, pa = page_on(b, a_url, cookies[0], session_id)
        cb, pb = page_on(b, b_url, cookies[1], session_id)
        contexts = [ca, cb]
        cpu0 = [w.app_cpu(0), w.app_cpu(1)]
        run = start_run(
            client, session_id, f"bench-mixed {args.turns} rate={args.rate:g} per={args.per}"
        )
        consumer = None
        for _ in range(50):
            consumer = w.consumer(run["runId"])
            if consumer is not None:
                break
            time.sleep(0.1)
        seen: dict[str, dict[str, float]] = {}
        followed: dict[str, bool] = {}
        deadline = time.monotonic() + args.timeout
        for name, page in (("A", pa), ("B", pb)):
            left = max(1.0, deadline - time.monotonic())
            try:
                page.wait_for_function(
                    "() => window.__bench.done", polling=200, timeout=left * 1000
                )
                followed[name] = True
            except Exception:  # Playwright's TimeoutError: this tab never got the end
                followed[name] = False
            seen[name] = page.evaluate("() => window.__bench.seen")
        cpu1 = [w.app_cpu(0), w.app_cpu(1)]
    finally:
        for c in contexts:
            c.close()
        client.close()
    time.sleep(1)
    emitted, events = emit_times(w, run["runId"])
    out = {
        "run_id": run["runId"],
        "consumer": "AB"[consumer] if consumer is not None else "?",
        "events": len(events),
        "markers_emitted": len(emitted),
        "app_cpu_s": [cpu1[i] - cpu0[i] for i in range(2)],
    }
    first = next(
        (e["ts"] for e in events if e["type"] in ("reasoning_delta", "text_delta")), events[0]["ts"]
    )
    span = events[-1]["ts"] - first
    out["events_per_s"] = len([e for e in events if e["ts"] >= first]) / span if span else 0
    for name in ("A", "B"):
        delays = [
            (seen[name][m] / 1000 - ts) * 1000 for m, ts in emitted.items() if m in seen[name]
        ]
        out[name] = {
            "followed_to_end": followed[name],
            "markers_seen": len(delays),
            "p50_ms": h.percentile(delays, 50),
            "p95_ms": h.percentile(delays, 95),
            "max_ms": max(delays, default=float("nan")),
        }
    return out


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--turns", type=int, default=None, help="tool turns (default 8)")
        p.add_argument("--per", type=int, default=120, help="reasoning and text chunks per turn")
        p.add_argument("--rate", type=float, default=210.0, help="model chunks/s (~200 events/s)")
        p.add_argument("--timeout", type=float, default=240.0, help="seconds per run")

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    args.turns = args.turns or (3 if args.quick else 8)
    repeat = args.repeat or (1 if args.quick else 3)
    report = h.Report(
        "cross_worker_latency",
        f"event → DOM, tab on the consuming worker (A) and on the other (B): "
        f"{args.turns} turns of 2×{args.per} chunks at {args.rate:g} chunks/s",
    )
    with two_workers(args.rate) as w, h.browser() as b:
        cookies = [session_cookie(url) for url in w.app_urls]
        for i in range(repeat):
            r = one_run(w, b, cookies, args)
            r["load"] = h.load()
            report.runs.append(r)
            h.log(
                f"repetition {i + 1}/{repeat}: consumer {r['consumer']}, {r['events_per_s']:.0f} ev/s; "
                f"A p95 {r['A']['p95_ms']:.0f} ms ({r['A']['markers_seen']}/{r['markers_emitted']}), "
                f"B p95 {r['B']['p95_ms']:.0f} ms ({r['B']['markers_seen']}/{r['markers_emitted']}); "
                f"load {r['load']}"
            )
    runs = report.runs
    n = f"median of {len(runs)}"

    def med(tab: str, key: str) -> float:
        return h.median([r[tab][key] for r in runs])

    b95 = med("B", "p95_ms")
    report.add(
        "p95 event → DOM, tab on the non-consuming worker (B)",
        f"{b95:.0f} ms",
        "≤ 150 ms",
        b95 <= 150 and all(r["B"]["followed_to_end"] for r in runs),
        f"{n}; p50 {med('B', 'p50_ms'):.0f} ms, max {med('B', 'max_ms'):.0f} ms; "
        f"followed to the end: {sum(r['B']['followed_to_end'] for r in runs)}/{len(runs)}",
    )
    report.add(
        "same run, tab on the consuming worker (A): p95 / p50",
        f"{med('A', 'p95_ms'):.0f} / {med('A', 'p50_ms'):.0f} ms",
        "report",
        None,
        f"{n}; B − A p95: {b95 - med('A', 'p95_ms'):.0f} ms; consumers: "
        + "".join(r["consumer"] for r in runs),
    )
    lost = sum(r["markers_emitted"] - r[t]["markers_seen"] for r in runs for t in "AB")
    report.add(
        "markers never seen (both tabs)",
        str(lost),
        "0",
        lost == 0,
        f"{h.median([r['events_per_s'] for r in runs]):.0f} events/s at the bridge; loads: "
        + ", ".join(r["load"] for r in runs),
    )
    report.add(
        "app CPU s per run, A / B",
        f"{h.median([r['app_cpu_s'][0] for r in runs]):.2f} / {h.median([r['app_cpu_s'][1] for r in runs]):.2f}",
        "report",
        None,
        f"{n}; {h.median([r['events'] for r in runs]):,.0f} events per run",
    )
    report.notes.append(
        "two app processes on two ports (not Reflex's one-port workers: a browser cannot pick "
        "one of those); shared 2-core machine, browser + 2 apps + bridge + model + servers"
    )
    report.finish()
    return report


if __name__ == "__main__":
    main()

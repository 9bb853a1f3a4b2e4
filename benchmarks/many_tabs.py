"""100 tabs following 20 concurrent runs over two web workers: nothing lost, app CPU
per followed event.

Two web workers on two ports over one PostgreSQL and Redis (two_workers.py). 20 conversations,
each opened in `--tabs-per-run` real tabs (Playwright pages of one Debian chromium, in a few
contexts), half of a conversation's tabs on each worker; then the 20 runs are started through
the HTTP API, alternately on worker A and B (each consumes what it started: the other
worker's tabs follow through Redis). When every run has ended: each tab's final answer text
(whitespace aside) must equal the answer stored in the database. App CPU (psutil, both app
processes with their children) from the first run's start to the last tab's end, divided by
the events the tabs followed (run events × tabs per run) and by the run events.

Run: python benchmarks/many_tabs.py [--quick] [--runs 20] [--tabs-per-run 5] [--tokens N]
     [--rate R] [--contexts K]
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import httpx  # noqa: E402
from two_workers import Workers, two_workers  # noqa: E402

from agent_chat.auth import COOKIE_NAME  # noqa: E402
from tests.support.accounts import session_cookie  # noqa: E402
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

END = "zzend."
LAST_ANSWER_JS = """
() => {
  const all = document.querySelectorAll('[data-testid=message-assistant]');
  const last = all[all.length - 1];
  if (!last) return null;
  const content = last.querySelector('[data-testid=message-content]');
  return {status: last.dataset.status || '', text: content ? content.textContent : ''};
}
"""


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


async def open_tab(context, url: str, session_id: str):
    page = await context.new_page()
    page.set_default_timeout(180_000)
    await page.goto(f"{url}/chat/{session_id}")
    await page.get_by_test_id("composer-input").wait_for(state="visible")
    return page


async def finished(page) -> dict | None:
    """The tab's last answer once it has the last token and is no longer RUNNING."""
    try:
        answer = await page.evaluate(LAST_ANSWER_JS)
    except Exception:  # a page that crashed or navigated
        return None
    if answer and END in answer["text"] and answer["status"] not in ("", "RUNNING"):
        return answer
    return None


async def measure(w: Workers, args) -> dict:
    from playwright.async_api import async_playwright

    cookies = [session_cookie(url) for url in w.app_urls]
    clients = [
        httpx.AsyncClient(base_url=url, headers={"Cookie": f"{COOKIE_NAME}={c}"}, timeout=120)
        for url, c in zip(w.app_urls, cookies, strict=True)
    ]
    sessions = []
    for i in range(args.runs):
        response = await clients[i % 2].post("/api/chat/sessions", json={})
        response.raise_for_status()
        sessions.append(response.json()["sessionId"])
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        contexts = []
        for k in range(args.contexts):
            worker = k % 2
            context = await browser.new_context(viewport={"width": 1000, "height": 700})
            await context.add_cookies(
                [
                    {
                        "name": COOKIE_NAME,
                        "value": cookies[worker],
                        "url": w.app_urls[worker],
                        "httpOnly": True,
                    }
                ]
            )
            contexts.append((worker, context))
        # Tab j of run i: worker (i + j) % 2, in one of that worker's contexts.
        plan = []
        for i, session_id in enumerate(sessions):
            for j in range(args.tabs_per_run):
                worker = (i + j) % 2
                mine = [c for wk, c in contexts if wk == worker]
                plan.append((i, worker, mine[(i * args.tabs_per_run + j) % len(mine)], session_id))
        t_open = time.monotonic()
        pages = []
        for start in range(0, len(plan), args.open_batch):
            batch = plan[start : start + args.open_batch]
            opened = await asyncio.gather(
                *(open_tab(c, w.app_urls[wk], sid) for _, wk, c, sid in batch)
            )
            pages += [(i, wk, p) for (i, wk, _, _), p in zip(batch, opened, strict=True)]
            h.log(f"{len(pages)}/{len(plan)} tabs open")
        open_s = time.monotonic() - t_open
        await asyncio.sleep(2)  # every tab's on_load state has arrived
        cpu0 = [w.app_cpu(0), w.app_cpu(1)]
        t0 = time.monotonic()
        message = f"bench-text {args.tokens} rate={args.rate:g}"
        started = await asyncio.gather(
            *(
                clients[i % 2].post(f"/api/chat/sessions/{sid}/runs", json={"message": message})
                for i, sid in enumerate(sessions)
            )
        )
        run_ids = []
        for response in started:
            response.raise_for_status()
            run_ids.append(response.json()["runId"])
        consumers = [w.consumer(r) for r in run_ids]
        results: dict[int, dict] = {}
        deadline = t0 + args.timeout
        while len(results) < len(pages) and time.monotonic() < deadline:
            for n, (_, _, page) in enumerate(pages):
                if n not in results and (answer := await finished(page)):
                    results[n] = answer
            await asyncio.sleep(1)
        wall = time.monotonic() - t0
        cpu1 = [w.app_cpu(0), w.app_cpu(1)]
        await browser.close()
    stored = []
    events = []
    for i, sid in enumerate(sessions):
        detail = (await clients[i % 2].get(f"/api/chat/sessions/{sid}")).json()
        answer = [m for m in detail["messages"] if m["role"] == "ASSISTANT"][-1]
        stored.append(answer)
        state = (await clients[i % 2].get(f"/api/chat/runs/{run_ids[i]}/state")).json()
        events.append(int(state.get("lastEventId") or state.get("last_event_id") or 0))
    for c in clients:
        await c.aclose()
    mismatched, missing = [], []
    for n, (i, wk, _) in enumerate(pages):
        if n not in results:
            missing.append((i, "AB"[wk]))
        elif squeeze(results[n]["text"]) != squeeze(stored[i]["content"]):
            mismatched.append((i, "AB"[wk], len(results[n]["text"]), len(stored[i]["content"])))
    run_events = sum(events)
    followed = run_events * args.tabs_per_run
    cpu = sum(cpu1) - sum(cpu0)
    return {
        "tabs": len(pages),
        "open_s": open_s,
        "wall_s": wall,
        "finished_tabs": len(results),
        "missing": missing[:10],
        "missing_n": len(missing),
        "mismatched": mismatched[:10],
        "mismatched_n": len(mismatched),
        "stored_success": sum(1 for m in stored if m["status"] == "SUCCESS"),
        "consumers": "".join("AB"[c] if c is not None else "?" for c in consumers),
        "run_events": run_events,
        "followed_events": followed,
        "app_cpu_s": [cpu1[i] - cpu0[i] for i in range(2)],
        "app_cpu_ms_per_followed_event": cpu / followed * 1000 if followed else float("nan"),
        "app_cpu_ms_per_run_event": cpu / run_events * 1000 if run_events else float("nan"),
        "chromium_note": "one chromium, real pages",
        "load": h.load(),
    }


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--runs", type=int, default=20)
        p.add_argument("--tabs-per-run", type=int, default=5)
        p.add_argument("--tokens", type=int, default=None, help="tokens per answer (300)")
        p.add_argument("--rate", type=float, default=10.0, help="tokens/s per answer")
        p.add_argument("--contexts", type=int, default=4, help="browser contexts (even)")
        p.add_argument("--open-batch", type=int, default=10, help="tabs opened at once")
        p.add_argument("--timeout", type=float, default=900.0)

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    args.tokens = args.tokens or (100 if args.quick else 300)
    tabs = args.runs * args.tabs_per_run
    report = h.Report(
        "many_tabs",
        f"{tabs} tabs following {args.runs} runs on 2 workers "
        f"(bench-text {args.tokens} at {args.rate:g} tokens/s each)",
    )
    with two_workers(args.rate, max_active_runs=args.runs + 2) as w:
        r = asyncio.run(measure(w, args))
    report.runs.append(r)
    lost = r["missing_n"] + r["mismatched_n"]
    report.add(
        f"{tabs} tabs: final text = stored answer",
        f"{r['finished_tabs'] - r['mismatched_n']}/{r['tabs']} equal, {lost} lost",
        "0 lost",
        lost == 0 and r["tabs"] == tabs,
        f"{r['stored_success']}/{args.runs} answers SUCCESS; consumers {r['consumers']}; "
        f"missing {r['missing']}, mismatched {r['mismatched']}; tabs opened in {r['open_s']:.0f} s; "
        f"runs to last tab's end {r['wall_s']:.0f} s",
    )
    report.add(
        "app CPU per followed event (both workers)",
        f"{r['app_cpu_ms_per_followed_event']:.2f} ms",
        "report",
        None,
        f"{r['followed_events']:,} followed events ({r['run_events']:,} run events × "
        f"{args.tabs_per_run} tabs); per run event {r['app_cpu_ms_per_run_event']:.2f} ms; "
        f"CPU A / B {r['app_cpu_s'][0]:.1f} / {r['app_cpu_s'][1]:.1f} s; load {r['load']}",
    )
    report.notes.append(
        f"real chromium pages ({args.contexts} contexts), two app processes on two ports; "
        "shared 2-core machine"
    )
    report.finish()
    return report


if __name__ == "__main__":
    main()

"""Opening a conversation: how long until it shows, and where that time goes.

A 2-message and a 20,000-message conversation (long_session.py's data: branches, logs) are
opened in headless chromium, the app served as `reflex run --env prod --single-port` serves
it (granian, one worker) with the production bundle (`reflex export`, tests/support/builds.py,
kept in .web-test: no build in this checkout's .web). Each round, for each conversation: a
fresh browser context (empty cache) opens it (cold), then two new tabs of the same context
open it again (warm: the HTTP cache and V8's code cache hold the bundle). Per open, from the
page's own clock (0 = navigation start):

- first contentful paint, the last message visible (its text in the viewport, checked each
  animation frame) in the first HTML's picture of the conversation (api/first_paint.py) or
  in the app, whichever comes first, and in the app (it has taken over);
- JS and CSS fetched: files, bytes decoded and bytes on the wire (resource timing);
- when the HTML arrived, the stylesheet and the last script arrived, the app's script opened
  the websocket (the bundle has run), the websocket was open, the first state delta (hydrate)
  and the delta that holds the last message arrived;
- the renderer's main-thread time (CDP Performance: script, style, layout, all tasks).

Then one traced cold and warm open of each (Chrome trace: parse/compile/evaluate of the
scripts, CSS parse, style, layout, paint on the main thread), printed as a profile.

Run: python benchmarks/page_open.py [--quick] [--messages N] [--rounds K] [--no-trace]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
from long_session import LAST_WORD, populate  # noqa: E402
from traces import main_thread_by_kind, renderer_trace  # noqa: E402

from tests.support.builds import install_frontend  # noqa: E402

# Installed in every page before its scripts: the websocket's milestones and the first
# animation frame in which the last message is in the viewport, on the page's clock.
INIT_JS = """
(() => {
  const o = window.__open = {ws: null, wsOpen: null, frames: [], visible: null, longtasks: 0};
  const W = window.WebSocket;
  window.WebSocket = class extends W {
    constructor(...args) {
      super(...args);
      if (o.ws === null) o.ws = performance.now();
      this.addEventListener('open', () => { if (o.wsOpen === null) o.wsOpen = performance.now(); });
      this.addEventListener('message', (e) => {
        const d = typeof e.data === 'string' ? e.data : '';
        if (o.frames.length < 40 && d.startsWith('42'))
          o.frames.push([performance.now(), d.length, d.includes('"delta"'), d.includes(WORD)]);
      });
    }
  };
  try {
    new PerformanceObserver((l) => { for (const e of l.getEntries()) o.longtasks += e.duration; })
      .observe({type: 'longtask', buffered: true});
  } catch (e) {}
  const shown = (selector) => {
    const all = document.querySelectorAll(selector);
    const last = all[all.length - 1];
    if (!last || !last.textContent.includes(WORD)) return false;
    const r = last.getBoundingClientRect();
    return r.height > 0 && r.bottom > 0 && r.top < window.innerHeight;
  };
  o.painted = null;
  const check = () => {
    if (o.painted === null && shown('#first-paint [data-testid^=first-paint-]')) o.painted = performance.now();
    if (shown('[data-testid=message-assistant], [data-testid=message-user]')) {
      o.visible = performance.now();
      if (o.painted === null) o.painted = o.visible;
      return;
    }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
})();
""".replace("WORD", json.dumps(LAST_WORD))

COLLECT_JS = """
() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const paint = Object.fromEntries(performance.getEntriesByType('paint').map((e) => [e.name, e.startTime]));
  const res = performance.getEntriesByType('resource').map((e) => ({
    name: e.name, type: e.initiatorType, start: e.startTime, end: e.responseEnd,
    wire: e.transferSize, raw: e.decodedBodySize, encoded: e.encodedBodySize,
  }));
  return {nav: {response: nav.responseEnd, dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd,
                wire: nav.transferSize, raw: nav.decodedBodySize},
          paint, res, open: window.__open};
}
"""

TWO_FRAMES_JS = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"

CDP_METRICS = ("ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "TaskDuration")
TRACE_CATEGORIES = [
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "v8",
    "v8.execute",
    "blink",
    "loading",
]
# Main-thread trace events, by what they are (outermost event of each kind counted).
TRACE_KINDS = {
    "ParseHTML": "parse HTML",
    "ParseAuthorStyleSheet": "parse CSS",
    "v8.compile": "compile JS",
    "v8.compileModule": "compile JS",
    "V8.CompileCode": "compile JS",
    "v8.produceModuleCache": "compile JS",
    "EvaluateScript": "run JS",
    "v8.evaluateModule": "run JS",
    "FunctionCall": "run JS",
    "RunMicrotasks": "run JS",
    "TimerFire": "run JS",
    "FireAnimationFrame": "run JS",
    "EventDispatch": "run JS",
    "V8.Execute": "run JS",
    "UpdateLayoutTree": "style",
    "Layout": "layout",
    "PrePaint": "paint",
    "Paint": "paint",
    "Layerize": "paint",
    "MajorGC": "GC",
    "MinorGC": "GC",
}


def start_app(s: h.Stack) -> None:
    """The app on s.app_port as production runs it after its build (granian, one worker),
    serving a copy of the shared production bundle."""
    web = s.tmp / "web"
    env = {
        **s.env,
        "REFLEX_WEB_WORKDIR": str(web),
        "REFLEX_STATES_WORKDIR": str(s.tmp / "states"),
    }
    h.log("production bundle (reflex export, shared build cache)")
    install_frontend(web, s.app_port, env)
    port = str(s.app_port)
    env.update(
        {
            "REFLEX_ENV_MODE": "prod",
            "__REFLEX_SKIP_COMPILE": "true",
            "__REFLEX_MOUNT_FRONTEND_COMPILED_APP": "true",
            "REFLEX_FRONTEND_PORT": port,
            "REFLEX_BACKEND_PORT": port,
            "GRANIAN_WORKERS": "1",
        }
    )
    logfile = s.tmp / "app.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.reflex_workers", "127.0.0.1", port],
        cwd=h.ROOT,
        env=env,
        stdout=logfile.open("ab"),
        stderr=subprocess.STDOUT,
    )
    s.procs["app"] = proc
    h._wait_http(f"{s.app_url}/ping", 120, proc, logfile)
    h._wait_http(f"{s.app_url}/", 60, proc, logfile)


def open_once(
    b: Any, context: Any, url: str, trace: bool = False, profile: bool = False
) -> dict[str, Any]:
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    try:
        if trace:
            b.start_tracing(page=page, categories=TRACE_CATEGORIES)
        if profile:
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 200})
            cdp.send("Profiler.start")
        t0 = time.perf_counter()
        page.goto(url, wait_until="commit")
        page.wait_for_function(
            "() => window.__open && window.__open.visible !== null", polling=50, timeout=120_000
        )
        wall = time.perf_counter() - t0
        if profile:
            data_profile = cdp.send("Profiler.stop")["profile"]
        page.evaluate(TWO_FRAMES_JS)  # the frame that showed it is painted (paint entries)
        data = page.evaluate(COLLECT_JS)
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        data["cdp"] = {k: metrics.get(k, 0.0) * 1000 for k in CDP_METRICS}
        data["wall"] = wall * 1000
        if trace:
            data["trace"] = trace_profile(b.stop_tracing())
        out = summarise(data)
        if profile:
            out["profile"] = profile_lines(data_profile, 25)
            out["frames"] = [
                f"{t:6.0f} ms {n:>7,} B{' delta' if d else ''}{' (last message)' if w else ''}"
                for t, n, d, w in data["open"]["frames"]
            ]
        return out
    finally:
        page.close()


def summarise(d: dict[str, Any]) -> dict[str, Any]:
    """One open's figures (ms, bytes) from what the page collected."""
    o = d["open"]
    out: dict[str, Any] = {
        "fcp": d["paint"].get("first-contentful-paint"),
        "painted": o["painted"],
        "visible": o["visible"],
        "html": d["nav"]["response"],
        "ws": o["ws"],
        "ws_open": o["wsOpen"],
        "longtasks": o["longtasks"],
        "wall": d["wall"],
        **{k: round(v, 1) for k, v in d["cdp"].items()},
    }
    frames = o["frames"]
    out["first_delta"] = next((f[0] for f in frames if f[2]), None)
    out["messages_delta"] = next((f[0] for f in frames if f[3]), None)
    out["frames_before_visible"] = sum(1 for f in frames if f[0] <= o["visible"])
    out["delta_bytes_before_visible"] = sum(f[1] for f in frames if f[0] <= o["visible"])
    for kind, ext in (("js", ".js"), ("css", ".css")):
        rows = [r for r in d["res"] if r["name"].split("?")[0].endswith(ext)]
        out[f"{kind}_files"] = len(rows)
        out[f"{kind}_raw"] = sum(r["raw"] for r in rows)
        out[f"{kind}_wire"] = sum(r["wire"] for r in rows)
        out[f"{kind}_end"] = max((r["end"] for r in rows), default=None)
    others = [r for r in d["res"] if not r["name"].split("?")[0].endswith((".js", ".css"))]
    out["other_wire"] = sum(r["wire"] for r in others) + (d["nav"]["wire"] or 0)
    if "trace" in d:
        out["trace"] = d["trace"]
    return out


def trace_profile(raw: bytes) -> dict[str, float]:
    """Main-thread ms by kind (outermost event of each kind), and background compile ms."""
    events, mains = renderer_trace(raw)
    by_kind, _ = main_thread_by_kind(events, mains, TRACE_KINDS)
    compile_names = ("v8.parseOnBackground", "v8.compileOnBackground", "V8.CompileCode")
    for e in events:
        off_main = e.get("ph") == "X" and (e.get("pid"), e.get("tid")) not in mains
        if off_main and e["name"] in compile_names:
            by_kind["compile JS off the main thread"] += e.get("dur", 0)
    return {k: round(v / 1000, 1) for k, v in by_kind.most_common()}


def profile_lines(profile: dict, top: int) -> list[str]:
    """Self time per JS function (V8 sampling profiler), `name (file:line)`, busiest first."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    deltas = profile.get("timeDeltas") or []
    self_us: Counter = Counter()
    for sample, dt in zip(profile.get("samples") or [], deltas[1:] + [0], strict=False):
        frame = nodes[sample]["callFrame"]
        url = frame.get("url", "").rsplit("/", 1)[-1]
        name = frame.get("functionName") or "(anonymous)"
        self_us[f"{name} ({url}:{frame.get('lineNumber', 0) + 1})" if url else name] += dt
    by_file: Counter = Counter()
    for key, us in self_us.items():
        by_file[key.rsplit("(", 1)[-1].split(":")[0] if key.endswith(")") else key] += us
    lines = [f"{us / 1000:7.0f} ms  {key}" for key, us in self_us.most_common(top)]
    lines += ["  by file:"] + [f"{us / 1000:7.0f} ms  {k}" for k, us in by_file.most_common(12)]
    return lines


def fmt(values: list[float], unit: str = "s") -> str:
    vals = [v for v in values if v is not None]
    if not vals:
        return "—"
    if unit == "s":
        return f"{h.median(vals) / 1000:.2f} s ({min(vals) / 1000:.2f}–{max(vals) / 1000:.2f})"
    return f"{h.median(vals):.0f} ms"


def kb(n: float) -> str:
    return f"{n / 1000:,.0f} kB"


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--messages", type=int, default=20_000)
        p.add_argument("--rounds", type=int, default=None, help="rounds (default 5, quick 2)")
        p.add_argument("--no-trace", action="store_true", help="skip the traced opens")
        p.add_argument(
            "--profile",
            action="store_true",
            help="also print a JS CPU profile and the websocket messages of a cold open",
        )

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    rounds = args.rounds or args.repeat or (2 if args.quick else 5)
    report = h.Report(
        "page_open", f"opening a 2-message and a {args.messages:,}-message conversation"
    )
    opens: dict[tuple[str, str], list[dict[str, Any]]] = {}
    traces: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="agent-chat-bench-db-") as tmp_name:
        db_path = Path(tmp_name) / "app.db"
        with h.stack(rate=1000, db_path=db_path, app=False) as s, h.browser() as b:
            start_app(s)  # migrates the database and makes its administrator, user 1
            engine = h.engine_for(h.sqlite_url(db_path))
            long_uuid, short_uuid, total = populate(engine, args.messages)
            engine.dispose()
            convs = {"short": short_uuid, "long": long_uuid}

            def context():
                c = h.signed_in_context(b, s.app_url, viewport={"width": 1280, "height": 900})
                c.add_init_script(INIT_JS)
                return c

            warm_up = context()  # the app's first page view (its caches), not counted
            open_once(b, warm_up, f"{s.app_url}/chat/{short_uuid}")
            open_once(b, warm_up, f"{s.app_url}/chat/{long_uuid}")
            warm_up.close()
            for r in range(rounds):
                order = ("short", "long") if r % 2 == 0 else ("long", "short")
                for name in order:
                    c = context()
                    url = f"{s.app_url}/chat/{convs[name]}"
                    try:
                        opens.setdefault((name, "cold"), []).append(open_once(b, c, url))
                        for _ in range(2):
                            opens.setdefault((name, "warm"), []).append(open_once(b, c, url))
                    finally:
                        c.close()
                h.log(
                    f"round {r + 1}/{rounds}: "
                    + ", ".join(
                        f"{n} {k} {opens[(n, k)][-1]['painted'] / 1000:.2f}"
                        f"/{opens[(n, k)][-1]['visible'] / 1000:.2f} s"
                        for n in ("short", "long")
                        for k in ("cold", "warm")
                    )
                )
            if not args.no_trace:
                for name, uuid_ in convs.items():
                    c = context()
                    try:
                        url = f"{s.app_url}/chat/{uuid_}"
                        traces[f"{name} cold"] = open_once(b, c, url, trace=True)["trace"]
                        open_once(b, c, url)
                        traces[f"{name} warm"] = open_once(b, c, url, trace=True)["trace"]
                    finally:
                        c.close()
            if args.profile:
                for name, uuid_ in convs.items():
                    c = context()
                    try:
                        got = open_once(b, c, f"{s.app_url}/chat/{uuid_}", profile=True)
                    finally:
                        c.close()
                    print(f"== {name}, cold: JS self time (V8 sampling profiler)")
                    print("\n".join(got["profile"]))
                    print(f"== {name}, cold: websocket messages (ms from navigation)")
                    print("\n".join(got["frames"]), flush=True)
    report.runs = [{f"{n} {k}": v for (n, k), v in opens.items()}, {"traces": traces}]
    add_rows(report, opens, args.messages, total, rounds)
    for name, profile in traces.items():
        report.notes.append(
            f"trace, {name}: " + ", ".join(f"{k} {v:.0f} ms" for k, v in profile.items())
        )
    report.notes.append(
        "times on the page's clock from navigation start; figures from a shared 2-core machine"
        f" ({os.cpu_count()} cores), medians (min–max)"
    )
    report.finish()
    return report


def add_rows(report: h.Report, opens, messages: int, total: int, rounds: int) -> None:
    def col(name, kind, key):
        return [o[key] for o in opens[(name, kind)]]

    label = {"short": "2 messages", "long": f"{messages:,} messages"}
    for kind, target in (("cold", 350), ("warm", 200)):
        for name in ("short", "long"):
            vis = col(name, kind, "painted")
            met = h.median(vis) <= target
            if name == "long":
                met = met and h.median(col(name, kind, "visible")) <= 1500
            report.add(
                f"{kind}, {label[name]}: navigation → last message visible",
                fmt(vis),
                f"≤ {target / 1000:.2f} s",
                met,
                f"first contentful paint {fmt(col(name, kind, 'fcp'))}; the app shows it "
                f"{fmt(col(name, kind, 'visible'))}; "
                f"Playwright's clock {fmt(col(name, kind, 'wall'))}",
            )
    ratio = h.median(col("long", "cold", "visible")) / h.median(col("short", "cold", "visible"))
    report.add(
        f"cold, {label['long']} ÷ 2 messages (the app shows it)",
        f"{ratio:.2f} ×",
        "≤ 2 ×",
        ratio <= 2,
        f"{total:,} messages in the tree; {rounds} rounds",
    )
    for name in ("short", "long"):
        for kind in ("cold", "warm"):
            rows = opens[(name, kind)]

            def med(key, rows=rows):
                return h.median([o[key] for o in rows if o[key] is not None])

            report.add(
                f"{kind}, {label[name]}: where the time goes (ms from navigation)",
                f"{med('visible'):.0f} ms",
                "report",
                None,
                f"HTML {med('html'):.0f}, CSS in {med('css_end'):.0f}, last JS in "
                f"{med('js_end'):.0f}, websocket created {med('ws'):.0f} (the bundle has run), "
                f"open {med('ws_open'):.0f}, first delta {med('first_delta'):.0f}, delta with "
                f"the last message {med('messages_delta'):.0f}, painted {med('painted'):.0f}, "
                f"the app shows it {med('visible'):.0f}; "
                f"main thread: script {med('ScriptDuration'):.0f}, style "
                f"{med('RecalcStyleDuration'):.0f}, layout {med('LayoutDuration'):.0f}, all "
                f"tasks {med('TaskDuration'):.0f}, long tasks {med('longtasks'):.0f}; "
                f"{med('frames_before_visible'):.0f} websocket messages "
                f"({kb(med('delta_bytes_before_visible'))}) before visible",
            )
    for kind in ("cold", "warm"):
        rows = opens[("short", kind)]

        def med(key, rows=rows):
            return h.median([o[key] for o in rows])

        report.add(
            f"{kind}: JS and CSS fetched (2 messages)",
            f"JS {med('js_files'):.0f} files {kb(med('js_raw'))} ({kb(med('js_wire'))} on the "
            f"wire), CSS {med('css_files'):.0f} {kb(med('css_raw'))} ({kb(med('css_wire'))})",
            "report",
            None,
            f"HTML and other files on the wire: {kb(med('other_wire'))}",
        )


if __name__ == "__main__":
    main()

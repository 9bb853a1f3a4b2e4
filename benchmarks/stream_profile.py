"""Where the page's CPU goes while a long answer streams: a profile, not a figure.

One answer (default 60,000 tokens at 2,000 tokens/s) sent from a conversation page in
headless chromium, as `stream_cost.py` does, with two recorders on the page's renderer:

- the V8 sampling profiler (CDP `Profiler`, 1 ms samples): self time per JS function, summed
  by function and source file (the bundle's chunks are named by the module they hold when
  the source map is absent, so functions are shown as `name (file:line)`);
- a Chrome trace (`devtools.timeline`): the renderer main thread's time by top-level task
  kind (script, style/layout, paint, GC), so work outside JS (layout of the growing block)
  shows too.

Prints both tables. Use it before and after changing `assets/stream_text.jsx`.

Run: python benchmarks/stream_profile.py [--tokens N] [--rate R] [--paragraph-every W]
     [--no-trace] [--top K]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
from fake_model import PARAGRAPH_EVERY  # noqa: E402
from traces import main_thread_by_kind, renderer_trace  # noqa: E402

TRACE_CATEGORIES = ["devtools.timeline", "v8.execute", "disabled-by-default-devtools.timeline"]
# Trace events that are the main thread's own work, by the name the DevTools summary uses.
KINDS = {
    "FunctionCall": "scripting",
    "EvaluateScript": "scripting",
    "v8.compile": "scripting",
    "TimerFire": "scripting",
    "FireAnimationFrame": "scripting",
    "EventDispatch": "scripting",
    "RunMicrotasks": "scripting",
    "V8.Execute": "scripting",
    "UpdateLayoutTree": "style",
    "RecalculateStyles": "style",
    "Layout": "layout",
    "PrePaint": "paint",
    "Paint": "paint",
    "Layerize": "paint",
    "UpdateLayer": "paint",
    "CompositeLayers": "paint",
    "MajorGC": "gc",
    "MinorGC": "gc",
    "V8.GC_SCAVENGER": "gc",
    "ParseHTML": "parse",
}


def profile_table(profile: dict, top: int) -> tuple[list[str], float]:
    nodes = {n["id"]: n for n in profile["nodes"]}
    deltas = profile.get("timeDeltas") or []
    self_us: Counter = Counter()
    for sample, dt in zip(profile.get("samples") or [], deltas[1:] + [0], strict=False):
        frame = nodes[sample]["callFrame"]
        url = frame.get("url", "").rsplit("/", 1)[-1]
        name = frame.get("functionName") or "(anonymous)"
        key = name if not url else f"{name} ({url}:{frame.get('lineNumber', 0) + 1})"
        self_us[key] += dt
    total = sum(self_us.values())
    busy = total - self_us.get("(idle)", 0)
    lines = [f"{'self ms':>9} {'% busy':>6}  function"]
    for key, us in self_us.most_common(top + 1):
        if key == "(idle)":
            continue
        lines.append(f"{us / 1000:9.0f} {100 * us / max(busy, 1):6.1f}  {key}")
    return lines, busy / 1e6


def trace_table(trace: bytes) -> list[str]:
    by_kind, by_name = main_thread_by_kind(*renderer_trace(trace), KINDS)
    lines = [f"{'ms':>8}  main-thread work by kind (outermost event of each kind)"]
    lines += [f"{us / 1000:8.0f}  {kind}" for kind, us in by_kind.most_common()]
    lines += ["", f"{'ms':>8}  by event"]
    lines += [f"{us / 1000:8.0f}  {name}" for name, us in by_name.most_common(12)]
    return lines


def main(argv: list[str] | None = None) -> None:
    def extra(p):
        p.add_argument("--tokens", type=int, default=60000)
        p.add_argument("--rate", type=float, default=2000.0)
        p.add_argument("--paragraph-every", type=int, default=PARAGRAPH_EVERY)
        p.add_argument("--no-trace", action="store_true", help="only the JS profiler")
        p.add_argument("--top", type=int, default=25)
        p.add_argument("--css", default="", help="a style sheet added to the page (experiments)")
        p.add_argument("--save-trace", type=Path, default=None, help="write the trace here")

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    message = f"bench-text {args.tokens}" + (
        "" if args.paragraph_every == PARAGRAPH_EVERY else f" para={args.paragraph_every}"
    )
    with h.stack(rate=args.rate) as s, h.browser() as b:
        session_uuid = h.create_chat_session(s.db_url)
        context = h.signed_in_context(b, s.app_url, viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(600_000)
        cdp = context.new_cdp_session(page)
        h.open_chat(page, s.app_url, session_uuid)
        page.evaluate(h.WATCH_END_JS, "zzend")
        if args.css:
            page.add_style_tag(content=args.css)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 1000})
        if not args.no_trace:
            b.start_tracing(page=page, categories=TRACE_CATEGORIES)
        cpu0 = h.chromium_cpu_by_type()
        cdp.send("Profiler.start")
        h.send(page, message)
        page.wait_for_function("() => window.__bench.doneAt", polling=200)
        profile = cdp.send("Profiler.stop")["profile"]
        cpu1 = h.chromium_cpu_by_type()
        trace = None if args.no_trace else b.stop_tracing()
        stats = [r for r in s.model_stats() if "last_at" in r]
        stream_s = max(r["last_at"] for r in stats) - min(r["first_at"] for r in stats)
        context.close()
    lines, busy_s = profile_table(profile, args.top)
    cpu = {k: v - cpu0.get(k, 0.0) for k, v in cpu1.items()}
    print(f"== stream_profile: {args.tokens:,} tokens at {args.rate:g}/s, stream {stream_s:.1f} s")
    print(
        "chromium CPU s by process: "
        + ", ".join(f"{k} {v:.1f}" for k, v in sorted(cpu.items()))
        + f"; total ÷ stream s {sum(cpu.values()) / stream_s:.3f}"
        + (" (tracing on: adds overhead)" if trace else "")
    )
    print(f"JS profiler: {busy_s:.1f} s busy in the renderer (samples not idle)")
    print("\n".join(lines))
    if trace and args.save_trace:
        args.save_trace.write_bytes(trace)
    if trace:
        print()
        print("\n".join(trace_table(trace)))
    print(f"load: {h.load()}; commit {h.commit()}; command: {h.command()}")


if __name__ == "__main__":
    main()

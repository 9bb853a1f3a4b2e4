"""The cost of streaming a long answer model → bridge → app → browser.

A 20,000-token answer at 1,000 tokens/s (paced fake model), sent from a real conversation page
in headless chromium. The answer has a blank line every 60 tokens (words), like a real answer
in paragraphs; `--paragraph-every 0` streams it as one 86 KB paragraph (the worst case of the
page's renderer, which re-parses only the last block). Per repetition (median of 3 reported):

- websocket bytes the browser received (send → message finalised) ÷ answer bytes (#1, ≤ 2 ×);
- time from the last token leaving the model to the full text in the DOM (#2, ≤ 0.5 s);
- browser CPU seconds ÷ stream duration (#3, ≤ 0.25): all chromium processes (psutil), and the
  page's renderer main thread alone (CDP Performance.getMetrics TaskDuration);
- app CPU seconds per 1,000 events (#3, report): the Reflex backend's process tree.

Run: python benchmarks/stream_cost.py [--quick] [--tokens N] [--rate R] [--paragraph-every W]
     [--repeat K] [--no-animations]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
from fake_model import PARAGRAPH_EVERY, answer_text  # noqa: E402

NO_ANIMATIONS = (
    "*, *::before, *::after { animation: none !important; transition: none !important; }"
)


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--tokens", type=int, default=None, help="answer length (default 20000)")
        p.add_argument("--rate", type=float, default=1000.0, help="tokens per second")
        p.add_argument(
            "--paragraph-every",
            type=int,
            default=PARAGRAPH_EVERY,
            help=f"a blank line every W tokens (default {PARAGRAPH_EVERY}); 0: one paragraph",
        )
        p.add_argument(
            "--no-animations",
            action="store_true",
            help="switch the page's CSS animations and transitions off. Headless chromium "
            "without a GPU runs an animation on the renderer's main thread at 60 frames/s, "
            "which cost more than the text (benchmarks/stream_profile.py); now "
            "the page runs none while an answer streams (assets/styles.css, 'Running "
            "markers'), so this option should no longer change the figure",
        )

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    tokens = args.tokens or (5000 if args.quick else 20000)
    repeat = args.repeat or (1 if args.quick else 3)
    every = args.paragraph_every
    text = answer_text(tokens, every)
    answer_bytes = len(text.encode())
    shape = f"a paragraph every {every} tokens" if every > 0 else "one paragraph"
    # The default shape keeps the historical name (results/stream_cost.json).
    name = "stream_cost" if every == PARAGRAPH_EVERY else f"stream_cost_para{every}"
    if args.no_animations:
        name += "_noanim"
        shape += ", page animations off"
    report = h.Report(
        name, f"{tokens:,}-token answer ({shape}) at {args.rate:g} tokens/s through the browser"
    )
    message = f"bench-text {tokens}" + ("" if every == PARAGRAPH_EVERY else f" para={every}")
    runs = []
    with h.stack(rate=args.rate) as s, h.browser() as b:
        for i in range(repeat):
            h.log(f"repetition {i + 1}/{repeat}: streaming {tokens} tokens")
            r = h.stream_through_browser(
                s,
                b,
                message,
                "zzend",
                timeout_s=600,
                css=NO_ANIMATIONS if args.no_animations else "",
            )
            duration = r["last_token_at"] - r["first_token_at"]
            r.update(
                answer_bytes=answer_bytes,
                stream_s=duration,
                ws_ratio=r["ws_bytes_total"] / answer_bytes,
                ws_ratio_at_text=r["ws_bytes_at_text"] / answer_bytes,
                lag_s=r["done_at"] - r["last_token_at"],
                # The lag in two: until the page runs the script with the last token, then
                # until React has it in the DOM.
                lag_script_s=(r["script_at"] or float("nan")) - r["last_token_at"],
                lag_render_s=r["done_at"] - (r["script_at"] or float("nan")),
                browser_cpu_ratio=r["cpu_chromium"] / duration,
                renderer_cpu_ratio=r["cpu_renderer_task"] / duration,
                app_cpu_per_1k=r["cpu_app_to_final"] / r["events"] * 1000,
                bridge_cpu_per_1k=r["cpu_bridge"] / r["events"] * 1000,
            )
            runs.append(r)
            h.log(
                f"  ws {r['ws_ratio']:.1f}×, lag {r['lag_s']:.2f} s, browser CPU {r['browser_cpu_ratio']:.2f}, "
                f"app CPU {r['app_cpu_per_1k']:.2f} s/1k events, {r['events']} events, {r['message_status']}"
            )
    report.runs = runs

    def med(key: str) -> float:
        return h.median([r[key] for r in runs])

    n = f"median of {len(runs)}"
    ws = med("ws_ratio")
    report.add(
        "#1 websocket bytes ÷ answer bytes",
        f"{ws:,.1f} ×",
        "≤ 2 ×",
        ws <= 2,
        f"{n}; answer {answer_bytes:,} B; received {med('ws_bytes_total'):,.0f} B in {med('ws_frames_total'):,.0f} frames "
        f"(includes the final sync of the finished message): state deltas {med('ws_delta_bytes'):,.0f} B, "
        f"frontend events (rx.call_script) {med('ws_event_bytes'):,.0f} B, framing {med('ws_bytes_total') - med('ws_delta_bytes') - med('ws_event_bytes'):,.0f} B",
    )
    lag = med("lag_s")
    report.add(
        "#2 last token leaves model → full text in DOM",
        f"{lag:.2f} s",
        "≤ 0.5 s",
        lag <= 0.5,
        f"{n}; stream lasted {med('stream_s'):.1f} s at the model; send → full text {h.median([r['done_at'] - r['sent_at'] for r in runs]):.1f} s; "
        f"last token → the page runs its script {med('lag_script_s'):.2f} s, then → in the DOM {med('lag_render_s'):.2f} s",
    )
    cpu = med("browser_cpu_ratio")
    report.add(
        "#3 browser CPU s ÷ stream duration",
        f"{cpu:.2f}",
        "≤ 0.25",
        cpu <= 0.25,
        f"{n}; all chromium processes {med('cpu_chromium'):.1f} CPU s; the page's renderer main thread alone "
        f"(CDP TaskDuration, wall time of its tasks) {med('cpu_renderer_task'):.1f} s = {med('renderer_cpu_ratio'):.2f} of the stream; "
        "by process type: "
        + ", ".join(
            f"{k} {h.median([r['cpu_chromium_by_type'].get(k, 0.0) for r in runs]):.1f} s"
            for k in sorted({k for r in runs for k in r["cpu_chromium_by_type"]})
        ),
    )
    report.add(
        "#3 app CPU s per 1,000 events",
        f"{med('app_cpu_per_1k'):.2f} s",
        "report",
        None,
        f"{n}; Reflex backend tree {med('cpu_app_to_final'):.1f} CPU s for {med('events'):,.0f} events "
        f"(bridge: {med('bridge_cpu_per_1k'):.2f} s per 1,000 events)",
    )
    if any(r["page_errors"] for r in runs):
        report.notes.append(f"page errors: {[r['page_errors'] for r in runs]}")
    if any(r["dom_chars_no_ws"] != len("".join(text.split())) for r in runs):
        report.notes.append(
            "the DOM text (whitespace removed) differs in length from the answer: "
            f"{[r['dom_chars_no_ws'] for r in runs]} vs {len(''.join(text.split()))}"
        )
    report.notes.append(
        f"answer in {text.count(chr(10) * 2) + 1} paragraphs; the DOM showed "
        f"{[r['dom_paragraphs'] for r in runs]} <p> when the last token arrived"
    )
    report.notes.append(
        "figures from a shared 2-core machine: browser, app, bridge and model compete for the cores"
    )
    report.finish()
    return report


if __name__ == "__main__":
    main()

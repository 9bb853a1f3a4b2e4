"""stream_cost.py's 20,000-token answer unpaced (the fake model sends as fast as it can).

Time from pressing Enter to the full text in the DOM, divided by the floor: the time a bare
httpx-sse client needs from POST /runs to reading the answer's last token from the bridge's
event stream (same model, same bridge, a fresh session each). Target ≤ 1.5. Floor and
browser alternate; the median of 3 of each is reported.

Run: python benchmarks/unpaced.py [--quick] [--tokens N] [--repeat K]
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import httpx  # noqa: E402
from fake_model import END_TOKEN, answer_text  # noqa: E402
from httpx_sse import aconnect_sse  # noqa: E402

TERMINAL = {"run_completed", "run_failed", "run_stopped"}


async def read_floor(s: h.Stack, message: str) -> dict:
    """POST /runs, then read the SSE stream until the answer's last token; times in seconds."""
    async with httpx.AsyncClient(
        base_url=s.bridge_url, timeout=httpx.Timeout(600, connect=10)
    ) as client:
        t0 = time.time()
        response = await client.post(
            "/runs",
            json={
                "user": 1,  # the hermes home (memory) of user 1
                "session_id": uuid.uuid4().hex,
                "message": message,
                "history": [],
                "model": s.model_spec(),
            },
        )
        response.raise_for_status()
        run_id = response.json()["run_id"]
        events = 0
        text_at = end_at = None
        async with aconnect_sse(client, "GET", f"/runs/{run_id}/events") as source:
            async for sse in source.aiter_sse():
                events += 1
                if (
                    text_at is None
                    and sse.event == "text_delta"
                    and END_TOKEN in json.loads(sse.data).get("text", "")
                ):
                    text_at = time.time()
                if sse.event in TERMINAL:
                    end_at = time.time()
                    break
    return {"to_text_s": (text_at or end_at) - t0, "to_terminal_s": end_at - t0, "events": events}


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--tokens", type=int, default=None, help="answer length (default 20000)")

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    tokens = args.tokens or (5000 if args.quick else 20000)
    repeat = args.repeat or (1 if args.quick else 3)
    message = f"bench-text {tokens}"
    report = h.Report("unpaced", f"{tokens:,}-token answer, unpaced: browser vs a bare SSE client")
    floors, browsers = [], []
    with h.stack(rate=0) as s, h.browser() as b:
        # One uncounted run of each warms hermes' imports and the page's bundle.
        h.log("warm-up")
        h.run_async(read_floor, s, "bench-text 200")
        h.stream_through_browser(s, b, "bench-text 200", "zzend")
        for i in range(repeat):
            h.log(f"repetition {i + 1}/{repeat}")
            f = h.run_async(read_floor, s, message)
            floors.append(f)
            r = h.stream_through_browser(s, b, message, "zzend")
            r["to_text_s"] = r["done_at"] - r["sent_at"]
            r["model_s"] = r["last_token_at"] - r["first_token_at"]
            browsers.append(r)
            h.log(
                f"  floor {f['to_text_s']:.2f} s, browser {r['to_text_s']:.2f} s (model sent for {r['model_s']:.2f} s)"
            )
    report.runs = [{"floor": f, "browser": r} for f, r in zip(floors, browsers, strict=False)]
    floor_s = h.median([f["to_text_s"] for f in floors])
    browser_s = h.median([r["to_text_s"] for r in browsers])
    ratio = browser_s / floor_s
    report.add(
        "#4 time to full text in DOM ÷ bare SSE client",
        f"{ratio:.2f}",
        "≤ 1.5",
        ratio <= 1.5,
        f"median of {len(browsers)}: browser (Enter → full text in DOM) {browser_s:.2f} s; "
        f"floor (POST /runs → last token read over SSE) {floor_s:.2f} s; "
        f"answer {len(answer_text(tokens).encode()):,} B, {h.median([f['events'] for f in floors]):,.0f} events",
    )
    report.add(
        "websocket bytes ÷ answer bytes (unpaced)",
        f"{h.median([r['ws_bytes_total'] for r in browsers]) / len(answer_text(tokens).encode()):,.1f} ×",
        "report",
        None,
    )
    report.notes.append(
        "figures from a shared 2-core machine: browser, app, bridge and model compete for the cores"
    )
    report.finish()
    return report


if __name__ == "__main__":
    main()

"""The page's memory over a long session in one tab: 200 answers in one conversation.

One tab, one conversation: 200 short questions in a row (each answered with a few hundred
words, paced fast), each sent once the previous answer is finished. The conversation shows
the newest 50 messages; older ones unmount, and the page's stream store
(assets/stream_text.jsx) drops the streams no component shows after ~15 s. Before the first
question and after every 25 answers, with the page idle:

- streams the store holds (`window.agentChatStream.size()`; absent in older builds);
- the JS heap after a full garbage collection (CDP `HeapProfiler.collectGarbage`, then
  `Runtime.getHeapUsage`);
- DOM nodes: elements in the document (`getElementsByTagName('*')`), all nodes in the document
  (a TreeWalker: text and comments too) and alive in the renderer (CDP
  `Memory.getDOMCounters`: detached nodes still referenced included), and JS event listeners;
- the renderer processes' PSS (psutil) and the messages shown;
- the seconds each answer took (send → finished in the page), median over the block.

At the end the page waits out the sweep delay, makes the store sweep (one empty chunk to a
probe stream: the store sweeps on activity, there is no timer) and is measured again; with
`--detached`, a heap snapshot then counts the detached DOM nodes by kind (what holds the
nodes that are alive but not in the document).

Claim checked: the store's size stays bounded and the heap does not grow with the answers.

Run: python benchmarks/tab_memory.py [--quick] [--answers N] [--every K] [--tokens T] [--rate R]
     [--detached]
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import psutil  # noqa: E402

SWEEP_WAIT_S = 20  # longer than the store's SWEEP_AFTER_MS (15 s)

# The newest assistant message, once it is finished (not the live body) and the send button
# takes a new question again.
DONE_JS = """
(prev) => {
  const all = document.querySelectorAll('[data-testid=message-assistant]');
  const last = all[all.length - 1];
  if (!last) return false;
  const id = Number(last.dataset.messageId || 0);
  if (id <= prev || last.dataset.status === 'RUNNING') return false;
  const content = last.querySelector('[data-testid=message-content]');
  if (!content || !content.textContent.includes('zzend')) return false;
  const send = document.querySelector('[data-testid=send-button]');
  return send && !send.disabled ? id : false;
}
"""
LAST_ID_JS = """
() => {
  const all = document.querySelectorAll('[data-testid=message-assistant]');
  const last = all[all.length - 1];
  return last ? Number(last.dataset.messageId || 0) : 0;
}
"""
PAGE_JS = """
() => ({
  store: window.agentChatStream && window.agentChatStream.size
    ? window.agentChatStream.size() : null,
  elements: document.getElementsByTagName('*').length,
  docNodes: (() => {  // every node in the document: elements, text, comments
    const w = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
    let n = 1;
    while (w.nextNode()) n++;
    return n;
  })(),
  messages: document.querySelectorAll(
    '[data-testid=message-assistant], [data-testid=message-user]').length,
})
"""
SWEEP_JS = """
() => {
  const s = window.agentChatStream;
  if (!s || !s.size) return null;
  s.append('zz-bench-sweep-probe', 0, '');  // activity: the store sweeps what is idle
  return s.size() - 1;  // without the probe itself
}
"""


def renderer_pss_mib() -> float:
    total = 0.0
    for pid in h.chromium_pids():
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            if "--type=renderer" in proc.cmdline():
                info = proc.memory_full_info()
                total += getattr(info, "pss", info.rss)
    return total / 2**20


def detached_nodes(cdp) -> dict[str, int]:
    """Detached DOM nodes alive in the page's heap, by name (a heap snapshot over CDP)."""
    import json
    from collections import Counter

    chunks: list[str] = []
    cdp.on("HeapProfiler.addHeapSnapshotChunk", lambda e: chunks.append(e["chunk"]))
    cdp.send("HeapProfiler.enable")
    cdp.send("HeapProfiler.collectGarbage")
    cdp.send("HeapProfiler.takeHeapSnapshot", {"reportProgress": False})
    snap = json.loads("".join(chunks))
    fields = snap["snapshot"]["meta"]["node_fields"]
    width, name_at, type_at = len(fields), fields.index("name"), fields.index("type")
    native = snap["snapshot"]["meta"]["node_types"][type_at].index("native")
    # Newer snapshots mark DOM nodes detached (2) in a field and name elements "<div>";
    # older ones name them "Detached HTMLDivElement".
    detach_at = fields.index("detachedness") if "detachedness" in fields else None
    nodes, strings = snap["nodes"], snap["strings"]
    found: Counter[str] = Counter()
    for i in range(0, len(nodes), width):
        name = strings[nodes[i + name_at]]
        if detach_at is not None:
            if nodes[i + detach_at] == 2 and nodes[i + type_at] == native:
                found[name] += 1
        elif name.startswith("Detached "):
            found[name.removeprefix("Detached ")] += 1
    return dict(found.most_common(12))


def sample(page, cdp, answers: int, seconds: list[float]) -> dict:
    cdp.send("HeapProfiler.collectGarbage")
    heap = cdp.send("Runtime.getHeapUsage")
    counters = cdp.send("Memory.getDOMCounters")
    dom = page.evaluate(PAGE_JS)
    return {
        "answers": answers,
        "store": dom["store"],
        "heap_mib": heap["usedSize"] / 2**20,
        "heap_total_mib": heap["totalSize"] / 2**20,
        "elements": dom["elements"],
        "doc_nodes": dom["docNodes"],
        "nodes": counters["nodes"],
        "listeners": counters["jsEventListeners"],
        "documents": counters["documents"],
        "messages": dom["messages"],
        "renderer_pss_mib": renderer_pss_mib(),
        "answer_s": h.median(seconds) if seconds else None,
        "at": time.time(),
    }


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--answers", type=int, default=None, help="questions (default 200)")
        p.add_argument("--every", type=int, default=25, help="answers between samples")
        p.add_argument("--tokens", type=int, default=300, help="tokens (words) per answer")
        p.add_argument("--rate", type=float, default=2000.0, help="tokens per second")
        p.add_argument(
            "--detached", action="store_true", help="count detached DOM nodes at the end"
        )

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    answers = args.answers or (50 if args.quick else 200)
    report = h.Report(
        "tab_memory",
        f"{answers} answers of {args.tokens} tokens in one conversation, one tab",
    )
    samples: list[dict] = []
    with h.stack(rate=args.rate) as s, h.browser() as b:
        session_uuid = h.create_chat_session(s.db_url)
        context = h.signed_in_context(b, s.app_url, viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(120_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        cdp = context.new_cdp_session(page)
        h.open_chat(page, s.app_url, session_uuid)
        samples.append(sample(page, cdp, 0, []))
        h.log(f"start: {samples[-1]}")
        prev = page.evaluate(LAST_ID_JS)
        seconds: list[float] = []
        for i in range(1, answers + 1):
            sent = h.send(page, f"q{i} bench-text {args.tokens}")
            handle = page.wait_for_function(DONE_JS, arg=prev, polling=50, timeout=120_000)
            prev = handle.json_value()
            seconds.append(time.time() - sent)
            if i % args.every == 0 or i == answers:
                samples.append(sample(page, cdp, i, seconds))
                seconds = []
                x = samples[-1]
                h.log(
                    f"{i} answers: store {x['store']}, heap {x['heap_mib']:.1f} MiB, "
                    f"elements {x['elements']}, nodes {x['nodes']}, answer {x['answer_s']:.2f} s"
                )
        h.log(f"waiting {SWEEP_WAIT_S} s for the store's sweep delay")
        page.wait_for_timeout(SWEEP_WAIT_S * 1000)
        swept = page.evaluate(SWEEP_JS)
        settled = sample(page, cdp, answers, [])
        settled["store"] = swept
        detached = detached_nodes(cdp) if args.detached else None
        context.close()
    report.runs = [*samples, {**settled, "settled": True}]

    header = [
        "answers",
        "store",
        "JS heap MiB",
        "elements",
        "doc nodes",
        "nodes (CDP)",
        "listeners",
        "messages",
        "renderer PSS MiB",
        "s/answer",
    ]
    table = [
        [
            str(x["answers"]) + (" +20 s" if x is settled else ""),
            "n/a" if x["store"] is None else str(x["store"]),
            f"{x['heap_mib']:.2f}",
            str(x["elements"]),
            str(x["doc_nodes"]),
            str(x["nodes"]),
            str(x["listeners"]),
            str(x["messages"]),
            f"{x['renderer_pss_mib']:.0f}",
            "" if x["answer_s"] is None else f"{x['answer_s']:.2f}",
        ]
        for x in [*samples, settled]
    ]
    widths = [max(len(r[c]) for r in [header, *table]) for c in range(len(header))]
    for r in [header, ["-" * w for w in widths], *table]:
        report.notes.append(" | ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)))

    stores = [x["store"] for x in samples if x["store"] is not None]
    late = [x for x in samples if x["answers"] >= min(50, answers)]
    # Judged once the conversation shows all it will (older messages unmount from then on).
    full = [
        x["store"]
        for x in samples
        if x["store"] is not None and x["answers"] and x["messages"] >= settled["messages"]
    ]
    if stores:
        bounded = None
        if len(full) >= 4 and settled["store"] is not None:
            # Settled: about one stream per answer shown (half the messages); meanwhile no
            # growth from the first half of the full window to the second beyond the noise
            # of the 15 s sweep delay.
            half = len(full) // 2
            bounded = settled["store"] <= settled["messages"] // 2 + 2 and max(
                full[half:]
            ) <= 1.5 * max(full[:half])
        report.add(
            "stream store size (max over samples; settled)",
            f"{max(stores)}; {settled['store']}",
            "bounded",
            bounded,
            f"per sample: {stores}; settled: {settled['store']} for "
            f"{settled['messages']} messages shown",
        )
    else:
        report.add("stream store size", "n/a (no size() in this build)", "bounded", None)
    if len(late) >= 2:
        first, last = late[0], late[-1]
        span = last["answers"] - first["answers"]
        per = (last["heap_mib"] - first["heap_mib"]) * 1024 / span
        # Bounded: once the conversation shows all it will, the heap of the second half of
        # the samples stays within 10 % of the first half's highest (GC noise, the sweep's
        # 15 s window); a leak per answer grows every sample.
        window = [x["heap_mib"] for x in late]
        half = len(window) // 2
        heap_bounded = max(window[half:]) <= 1.10 * max(window[:half]) if half else None
        report.add(
            f"JS heap growth per answer ({first['answers']} → {last['answers']})",
            f"{per:+.1f} KiB",
            "bounded (2nd half ≤ 1.1 × 1st half)",
            heap_bounded,
            f"{first['heap_mib']:.1f} → {last['heap_mib']:.1f} MiB after GC; at start "
            f"{samples[0]['heap_mib']:.1f} MiB; settled {settled['heap_mib']:.1f} MiB",
        )
        report.add(
            f"DOM nodes ({first['answers']} → {last['answers']})",
            f"{first['nodes']} → {last['nodes']}",
            "bounded",
            None,
            f"all nodes in the document {first['doc_nodes']} → {last['doc_nodes']}, elements "
            f"{first['elements']} → {last['elements']}; settled {settled['nodes']} nodes",
        )
    report.add(
        "send → answer finished in the page, first / last block",
        f"{samples[1]['answer_s']:.2f} / {samples[-1]['answer_s']:.2f} s",
    )
    if detached is not None:
        report.add(
            "detached DOM nodes alive at the end (heap snapshot)",
            str(sum(detached.values())),
            "report",
            None,
            ", ".join(f"{k} {v}" for k, v in detached.items()) or "none",
        )
    if errors:
        report.notes.append(f"page errors: {errors[:5]}")
    report.finish()
    return report


if __name__ == "__main__":
    main()

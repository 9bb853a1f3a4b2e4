"""Opening the app with 100,000 conversations: how long until the sidebar shows them.

One database, two people: one with 100,000 conversations (10 % archived, a year of
activity, two messages each: sidebar.py's data), one with 2. The app runs as production
runs it (page_open.py's `start_app`: granian, one worker, the production bundle). Each round,
for each person in turn: a fresh browser context (empty cache) opens `/chat` (cold), then a
second tab of the same context (warm). Per open, on the page's own clock from navigation
start: the first row of the first HTML's picture of the list, the app's first sidebar row in
the viewport, and the sidebar's first page complete (50 rows, or all the person has). Side by side in one run, so the ratio does not depend on the load.

Run: python benchmarks/sidebar_page.py [--quick] [--conversations N] [--rounds K]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
from page_open import fmt, start_app  # noqa: E402
from sidebar import populate  # noqa: E402

from tests.support.accounts import ensure_member, session_cookie  # noqa: E402

FEW, FEW_PASSWORD = "few", "a person with two conversations"
PAGE = 50  # the sidebar's first page

# Checked each animation frame from the page's first script on.
INIT_JS = """
(() => {
  const o = window.__sidebar = {painted: null, first: null, full: null, want: %d};
  const tick = () => {
    const picture = document.querySelector('[data-testid=first-paint-row]');
    if (o.painted === null && picture && picture.getBoundingClientRect().height > 0)
      o.painted = performance.now();
    const rows = document.querySelectorAll('[data-testid=session-item]');
    if (o.first === null && rows.length) {
      const r = rows[0].getBoundingClientRect();
      if (r.height > 0 && r.bottom > 0 && r.top < innerHeight) o.first = performance.now();
    }
    if (o.full === null && rows.length >= o.want) o.full = performance.now();
    if (o.first === null || o.full === null) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();
"""


def open_once(context: Any, url: str) -> dict[str, float]:
    page = context.new_page()
    try:
        page.goto(url, wait_until="commit")
        page.wait_for_function(
            "() => window.__sidebar && window.__sidebar.full !== null", polling=50, timeout=120_000
        )
        return page.evaluate(
            "() => ({painted: window.__sidebar.painted ?? window.__sidebar.first,"
            " first: window.__sidebar.first, full: window.__sidebar.full})"
        )
    finally:
        page.close()


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--conversations", type=int, default=100_000)
        p.add_argument("--rounds", type=int, default=None, help="rounds (default 5, quick 2)")

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    rounds = args.rounds or args.repeat or (2 if args.quick else 5)
    many = args.conversations
    report = h.Report("sidebar_page", f"the sidebar with {many:,} conversations and with 2")
    opens: dict[tuple[str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="agent-chat-bench-db-") as tmp_name:
        db_path = Path(tmp_name) / "app.db"
        with h.stack(rate=1000, db_path=db_path, app=False) as s, h.browser() as b:
            start_app(s)  # migrates the database and makes its administrator, user 1
            db_url = h.sqlite_url(db_path)
            few_id = ensure_member(db_url, FEW, FEW_PASSWORD)
            engine = h.engine_for(db_url)
            h.log(f"{many:,} conversations for user 1, 2 for user {few_id}")
            populate(engine, many)
            populate(engine, 2, owner=few_id, first_id=many + 1)
            engine.dispose()
            cookies = {"many": None, "few": session_cookie(s.app_url, FEW, FEW_PASSWORD)}
            want = {"many": PAGE, "few": 2}

            def context(who: str) -> Any:
                if cookies[who] is None:
                    c = h.signed_in_context(b, s.app_url, viewport={"width": 1280, "height": 900})
                else:
                    from agent_chat.auth import COOKIE_NAME

                    c = b.new_context(viewport={"width": 1280, "height": 900})
                    c.add_cookies([{"name": COOKIE_NAME, "value": cookies[who], "url": s.app_url}])
                c.add_init_script(INIT_JS % want[who])
                return c

            for who in ("many", "few"):  # the app's first views (its caches), not counted
                c = context(who)
                open_once(c, f"{s.app_url}/chat")
                c.close()
            for r in range(rounds):
                for who in ("many", "few") if r % 2 == 0 else ("few", "many"):
                    c = context(who)
                    try:
                        for kind in ("cold", "warm"):
                            got = open_once(c, f"{s.app_url}/chat")
                            opens.setdefault((who, kind), []).append(got)
                    finally:
                        c.close()
                h.log(
                    f"round {r + 1}/{rounds}: "
                    + ", ".join(
                        f"{w} {k} {opens[(w, k)][-1]['full'] / 1000:.2f} s"
                        for w in ("many", "few")
                        for k in ("cold", "warm")
                    )
                )
    report.runs = [{f"{w} {k}": v for (w, k), v in opens.items()}]
    label = {"many": f"{many:,} conversations", "few": "2 conversations"}
    for kind in ("cold", "warm"):
        for who in ("many", "few"):
            full = [o["full"] for o in opens[(who, kind)]]
            first = [o["first"] for o in opens[(who, kind)]]
            report.add(
                f"{kind}, {label[who]}: navigation → sidebar's first page shown",
                fmt(full),
                "≤ 1.00 s" if who == "many" else "report",
                h.median(full) <= 1000 if who == "many" else None,
                f"first row in view {fmt(first)}",
            )
    for kind in ("cold", "warm"):
        for who in ("many", "few"):
            # The first HTML's picture of the list (api/first_paint.py); the app's own first
            # row when there was none.
            painted = [o["painted"] for o in opens[(who, kind)]]
            report.add(
                f"{kind}, {label[who]}: navigation → the list's first row in the first paint",
                fmt(painted),
                "≤ 0.35 s" if kind == "cold" else "≤ 0.20 s",
                h.median(painted) <= (350 if kind == "cold" else 200),
            )
    for kind in ("cold", "warm"):
        ratio = h.median([o["full"] for o in opens[("many", kind)]]) / h.median(
            [o["full"] for o in opens[("few", kind)]]
        )
        report.add(f"{kind}: {label['many']} ÷ 2", f"{ratio:.2f} ×", "report", None)
    report.notes.append(
        "times on the page's clock from navigation start; a shared machine"
        f" ({os.cpu_count()} cores), medians (min–max) of {rounds} rounds"
    )
    report.finish()
    return report


if __name__ == "__main__":
    main()

"""Files attached to messages: a 20 MiB upload and its download, and a conversation of 50
pictures opened in the browser beside one without.

1. Upload and download, against the real app process (`h.stack`: the Reflex app in prod mode),
   on SQLite and on PostgreSQL (a server started for the run, `--db sqlite` for SQLite only),
   each with the database store (the default: 1 MiB chunk rows):
   `POST /api/chat/attachments`, one file of exactly AGENT_CHAT_MAX_UPLOAD_MB (20 MiB) of
   random bytes (not compressible, new bytes each repetition so nothing is deduplicated), then
   `GET /api/chat/attachments/{id}` of the same file, read to the end and checked (SHA-256).
   Time of each, and the app's memory growth while it streams: the RSS of the app's process
   tree sampled every 10 ms from this process, its peak during the request minus its value
   just before (target ≤ 50 MB). Median of 3 (`--repeat`).
2. Opening a conversation with 50 pictures (10 questions of 5 files each: 1600×1200 JPEGs of
   about 0.57 MB, each of its own colour, uploaded and sent with `attachmentIds` through the
   API, each answered by the scripted model) and a control conversation with the same
   questions and no files: a fresh signed-in browser context each time, navigation → the last
   message in view (all 20 messages in the page), and the bytes the page fetched of the
   pictures (the server's WebP thumbnails, lazy-loaded; the full files should never be
   fetched). The two conversations alternate over 5 rounds (`--rounds`); medians and their
   ratio (target ≤ 1.2 ×). The very first open of the pictures conversation (the server
   makes the thumbnails then) is reported apart.

Run: python benchmarks/attachments.py [--quick] [--repeat K] [--rounds N] [--db sqlite,postgresql]
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import httpx  # noqa: E402
import psutil  # noqa: E402

from agent_chat.auth import COOKIE_NAME  # noqa: E402
from agent_chat.config import DEFAULT_MAX_UPLOAD_MB  # noqa: E402
from tests.support.accounts import session_cookie  # noqa: E402
from tests.support.api import new_session, read_stream  # noqa: E402

MiB = 1024 * 1024
MB = 1_000_000
UPLOAD_BYTES = DEFAULT_MAX_UPLOAD_MB * MiB  # the limit itself: a file of exactly it is allowed
MEMORY_TARGET_MB = 50
RATIO_TARGET = 1.2
END = "zzend"  # the scripted model's last token
ANSWER = "bench-text 20"

LAST_VISIBLE_JS = """
([word, count]) => {
  const all = document.querySelectorAll('[data-testid=message-assistant], [data-testid=message-user]');
  if (all.length < count) return false;
  const last = all[all.length - 1];
  if (!last.textContent.includes(word)) return false;
  const r = last.getBoundingClientRect();
  return r.height > 0 && r.bottom > 0 && r.top < window.innerHeight;
}
"""
THUMBS_IN_VIEW_JS = """
() => {
  const shown = [...document.querySelectorAll('img.file-thumb')].filter((i) => {
    const r = i.getBoundingClientRect();
    return r.bottom > 0 && r.top < window.innerHeight;
  });
  return shown.length > 0 && shown.every((i) => i.complete && i.naturalWidth > 0);
}
"""
FILE_BYTES_JS = """
() => {
  const out = {thumbs: 0, thumbBytes: 0, full: 0, fullBytes: 0, thumbsInDom: 0};
  for (const e of performance.getEntriesByType('resource')) {
    if (!e.name.includes('/api/chat/attachments/')) continue;
    if (e.name.includes('/thumbnail')) { out.thumbs += 1; out.thumbBytes += e.transferSize; }
    else { out.full += 1; out.fullBytes += e.transferSize; }
  }
  out.thumbsInDom = document.querySelectorAll('img.file-thumb').length;
  return out;
}
"""


# ---- memory of the app while a request streams -------------------------------------------


class RssPeak:
    """The RSS of a process tree (bytes), sampled every `every` s on a thread until stopped:
    the value when started and the peak."""

    def __init__(self, pid: int, every: float = 0.01) -> None:
        self.procs = h.tree(pid)
        self.every = every
        self.samples = 0
        self.before = self.peak = self._rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _rss(self) -> int:
        total = 0
        for proc in self.procs:
            with contextlib.suppress(psutil.Error):
                total += proc.memory_info().rss
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._rss())
            self.samples += 1
            self._stop.wait(self.every)

    def __enter__(self) -> RssPeak:
        self.before = self.peak = self._rss()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.before) / MB


def upload_once(client: httpx.Client, app_pid: int, data: bytes, name: str) -> dict[str, Any]:
    with RssPeak(app_pid) as rss:
        t0 = time.perf_counter()
        response = client.post(
            "/api/chat/attachments", files=[("files", (name, data, "application/octet-stream"))]
        )
        seconds = time.perf_counter() - t0
    assert response.status_code == 201, (response.status_code, response.text[:300])
    row = response.json()["attachments"][0]
    assert row["size"] == len(data), row
    return {
        "id": row["id"],
        "s": seconds,
        "growth_mb": rss.growth_mb,
        "rss_before_mb": rss.before / MB,
        "samples": rss.samples,
    }


def download_once(
    client: httpx.Client, app_pid: int, attachment_id: int, data: bytes
) -> dict[str, Any]:
    digest = hashlib.sha256()
    size = 0
    with RssPeak(app_pid) as rss:
        t0 = time.perf_counter()
        with client.stream("GET", f"/api/chat/attachments/{attachment_id}") as response:
            assert response.status_code == 200, response.status_code
            for piece in response.iter_bytes(256 * 1024):
                digest.update(piece)
                size += len(piece)
        seconds = time.perf_counter() - t0
    assert size == len(data) and digest.hexdigest() == hashlib.sha256(data).hexdigest()
    return {
        "s": seconds,
        "growth_mb": rss.growth_mb,
        "rss_before_mb": rss.before / MB,
        "samples": rss.samples,
    }


def upload_and_download(s: h.Stack, client: httpx.Client, repeat: int) -> list[dict[str, Any]]:
    # Warm-up: the first request of each kind imports and sets up what it needs.
    warm = os.urandom(256 * 1024)
    first = upload_once(client, s.app_pid, warm, "warm-up.bin")
    download_once(client, s.app_pid, first["id"], warm)
    out = []
    for i in range(repeat):
        data = os.urandom(UPLOAD_BYTES)  # new bytes each time: never deduplicated
        time.sleep(1)  # the app idle before each measurement
        up = upload_once(client, s.app_pid, data, f"random-{i}.bin")
        time.sleep(1)
        down = download_once(client, s.app_pid, up["id"], data)
        out.append({"upload": up, "download": down})
        h.log(
            f"  {i + 1}/{repeat}: upload {up['s']:.2f} s (+{up['growth_mb']:.1f} MB RSS), "
            f"download {down['s']:.2f} s (+{down['growth_mb']:.1f} MB RSS)"
        )
    return out


# ---- the pictures conversation ------------------------------------------------------------


def picture(i: int) -> bytes:
    """A 1600×1200 JPEG of about 0.57 MB, of its own colour (so no two are the same file)."""
    from PIL import Image

    size = (1600, 1200)
    colour = ((i * 53) % 256, (i * 97 + 60) % 256, (i * 31 + 120) % 256)
    base = Image.new("RGB", size, colour)
    # Coarse blotches (detail a thumbnail keeps, like a photo's: ~25 kB of WebP) and fine grain.
    blotches = [Image.effect_noise((160, 120), 80) for _ in range(3)]
    coarse = Image.merge("RGB", blotches).resize(size, Image.Resampling.BICUBIC)
    grain = Image.effect_noise(size, 60).convert("RGB")
    image = Image.blend(Image.blend(base, coarse, 0.5), grain, 0.12)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()


def conversation(
    client: httpx.Client, messages: int, per: int, with_files: bool
) -> tuple[str, int]:
    """A conversation of `messages` questions, each answered; `per` pictures on each question
    when `with_files`. Its uuid and the bytes of its files."""
    session_id = new_session(client)
    sent = 0
    for m in range(messages):
        ids: list[int] = []
        if with_files:
            files = [
                ("files", (f"photo-{m:02d}-{k}.jpg", picture(m * per + k), "image/jpeg"))
                for k in range(per)
            ]
            sent += sum(len(f[1][1]) for f in files)
            response = client.post("/api/chat/attachments", files=files)
            assert response.status_code == 201, response.text[:300]
            ids = [row["id"] for row in response.json()["attachments"]]
            assert len(set(ids)) == per, ids
        body: dict[str, Any] = {"message": f"{ANSWER} (question {m + 1})"}
        if ids:
            body["attachmentIds"] = ids
        response = client.post(f"/api/chat/sessions/{session_id}/runs", json=body)
        assert response.status_code == 201, response.text[:300]
        read = read_stream(client, response.json()["runId"])
        assert read.events and read.last().type == "run_completed", read.types()[-3:]
        deadline = time.monotonic() + 60  # the app finalises the message after the stream
        while client.get(f"/api/chat/sessions/{session_id}").json()["session"]["hasActiveRun"]:
            assert time.monotonic() < deadline, "the run did not end"
            time.sleep(0.1)
    return session_id, sent


def open_once(b: Any, app_url: str, session_uuid: str, count: int) -> dict[str, Any]:
    context = h.signed_in_context(b, app_url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        t0 = time.perf_counter()
        page.goto(f"{app_url}/chat/{session_uuid}", wait_until="commit")
        page.wait_for_function(LAST_VISIBLE_JS, arg=[END, count], polling="raf", timeout=120_000)
        visible_s = time.perf_counter() - t0
        at_visible = page.evaluate(FILE_BYTES_JS)
        thumbs_s = None
        if at_visible["thumbsInDom"]:
            with contextlib.suppress(Exception):
                page.wait_for_function(THUMBS_IN_VIEW_JS, polling="raf", timeout=30_000)
                thumbs_s = time.perf_counter() - t0
        with contextlib.suppress(Exception):
            page.wait_for_load_state("networkidle", timeout=10_000)
        files = page.evaluate(FILE_BYTES_JS)
        return {
            "visible_s": visible_s,
            "thumbs_in_view_s": thumbs_s,
            "thumbs_at_visible": at_visible["thumbs"],
            **files,
        }
    finally:
        context.close()


def open_pictures(s: h.Stack, cookie: str, args) -> dict[str, Any]:
    headers = {"Cookie": f"{COOKIE_NAME}={cookie}"}
    with httpx.Client(base_url=s.app_url, headers=headers, timeout=300) as client:
        t0 = time.perf_counter()
        pictures, files_bytes = conversation(client, args.messages, args.per, with_files=True)
        plain, _ = conversation(client, args.messages, args.per, with_files=False)
        h.log(
            f"two conversations of {args.messages} questions made in "
            f"{time.perf_counter() - t0:.0f} s"
        )
    count = 2 * args.messages
    runs: dict[str, list[dict[str, Any]]] = {"pictures": [], "plain": []}
    with h.browser() as b:
        open_once(b, s.app_url, plain, count)  # warm-up: the app's first page view
        cold = open_once(b, s.app_url, pictures, count)  # the server makes the thumbnails
        h.log(f"first open of the pictures: {cold['visible_s']:.2f} s (thumbnails made)")
        for r in range(args.rounds):
            order = [("pictures", pictures), ("plain", plain)]
            if r % 2:
                order.reverse()
            for name, uuid_ in order:
                runs[name].append(open_once(b, s.app_url, uuid_, count))
            h.log(
                f"  round {r + 1}/{args.rounds}: pictures {runs['pictures'][-1]['visible_s']:.2f} s"
                f" ({runs['pictures'][-1]['thumbBytes'] / 1000:.0f} kB of thumbnails),"
                f" plain {runs['plain'][-1]['visible_s']:.2f} s"
            )
    return {"cold": cold, "files_mb": files_bytes / MB, **runs}


# ---- stacks -------------------------------------------------------------------------------


@contextlib.contextmanager
def postgres_stack() -> Iterator[h.Stack]:
    """The same stack on a PostgreSQL server started for it (as two_workers.py does)."""
    from agent_chat.db.engine import migrate
    from agent_chat.launch.data_servers import start_postgres

    folder = Path(tempfile.mkdtemp(prefix="agent-chat-bench-files-", dir="/tmp"))
    folder.chmod(0o755)  # PostgreSQL runs as `postgres` when we are root
    pg = None
    s = None
    try:
        pg, db_url = start_postgres(folder / "pg", h.free_port(), folder / "pg.log")
        migrate(db_url)
        s = h.Stack(tmp=folder, rate=1000, db_url=db_url)
        s.start_model()
        s.start_bridge()
        s.start_app()
        yield s
    finally:
        if s is not None:
            s.stop()
        if pg is not None:
            pg.stop()
        shutil.rmtree(folder, ignore_errors=True)


def machine_speed() -> float:
    """CPU seconds of 30 million additions in this process (1.9-2.2 on a good hour here)."""
    t = time.process_time()
    x = 0
    for i in range(30_000_000):
        x += i
    return time.process_time() - t


def add_transfer_rows(report: h.Report, db: str, reps: list[dict[str, Any]]) -> None:
    size_mb = UPLOAD_BYTES / MB
    for kind, what in (("upload", "POST /api/chat/attachments"), ("download", "GET …/{id}")):
        times = [r[kind]["s"] for r in reps]
        growth = [r[kind]["growth_mb"] for r in reps]
        before = [r[kind]["rss_before_mb"] for r in reps]
        t, g = h.median(times), h.median(growth)
        report.add(
            f"{db}: {kind} of 20 MiB ({what})",
            f"{t:.2f} s",
            "report",
            None,
            f"median of {len(reps)} ({', '.join(f'{x:.2f}' for x in times)} s); "
            f"{size_mb / t:.0f} MB/s",
        )
        report.add(
            f"{db}: app RSS growth during the {kind}",
            f"{g:.1f} MB",
            f"≤ {MEMORY_TARGET_MB} MB",
            max(growth) <= MEMORY_TARGET_MB,
            f"peak − before, sampled every 10 ms; each: {', '.join(f'{x:.1f}' for x in growth)} MB "
            f"(max counts for 'met'); RSS before: "
            f"{', '.join(f'{x:.0f}' for x in before)} MB",
        )


def add_picture_rows(report: h.Report, found: dict[str, Any], args) -> None:
    pics, plain = found["pictures"], found["plain"]
    pics_s = [r["visible_s"] for r in pics]
    plain_s = [r["visible_s"] for r in plain]
    t_pics, t_plain = h.median(pics_s), h.median(plain_s)
    ratio = t_pics / t_plain
    n = args.messages * args.per
    report.add(
        f"open a conversation with {n} pictures: navigate → last message in view",
        f"{t_pics:.2f} s",
        "report",
        None,
        f"median of {len(pics)}: {', '.join(f'{x:.2f}' for x in pics_s)} s; "
        f"fresh browser context each, alternating with the control",
    )
    report.add(
        f"the same without pictures ({2 * args.messages} messages)",
        f"{t_plain:.2f} s",
        "report",
        None,
        f"median of {len(plain)}: {', '.join(f'{x:.2f}' for x in plain_s)} s",
    )
    report.add(
        "pictures ÷ without",
        f"{ratio:.2f} ×",
        f"≤ {RATIO_TARGET} ×",
        ratio <= RATIO_TARGET,
    )
    thumbs = [r["thumbs_in_view_s"] for r in pics if r["thumbs_in_view_s"] is not None]
    report.add(
        "pictures: navigate → the thumbnails in view loaded",
        f"{h.median(thumbs):.2f} s" if thumbs else "never",
        "report",
        None,
        f"{len(thumbs)} of {len(pics)} opens",
    )
    kb = h.median([r["thumbBytes"] / 1000 for r in pics])
    report.add(
        "pictures: image bytes fetched by the page",
        f"{kb:.0f} kB",
        "report",
        None,
        f"median; thumbnails fetched: {h.median([r['thumbs'] for r in pics]):.0f} of "
        f"{n} (at the last message in view: {h.median([r['thumbs_at_visible'] for r in pics]):.0f}); "
        f"full files fetched: {max(r['full'] for r in pics)} "
        f"({max(r['fullBytes'] for r in pics) / 1000:.0f} kB); "
        f"the {n} files are {found['files_mb']:.1f} MB",
    )
    cold = found["cold"]
    report.add(
        "pictures, first open (the server makes the thumbnails)",
        f"{cold['visible_s']:.2f} s",
        "report",
        None,
        "thumbnails in view loaded at "
        + (f"{cold['thumbs_in_view_s']:.2f} s" if cold["thumbs_in_view_s"] else "never"),
    )


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--db", default="sqlite,postgresql", help="sqlite and/or postgresql")
        p.add_argument("--rounds", type=int, default=None, help="opens of each conversation")
        p.add_argument("--messages", type=int, default=10, help="questions per conversation")
        p.add_argument("--per", type=int, default=5, help="pictures per question")

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    repeat = args.repeat or (1 if args.quick else 3)
    args.rounds = args.rounds or (2 if args.quick else 5)
    dbs = [d.strip() for d in args.db.split(",") if d.strip()]
    speed = machine_speed()
    h.log(f"machine speed: {speed:.2f} CPU-s for 30M additions")
    report = h.Report("attachments", "a 20 MiB file up and down; 50 pictures in a conversation")
    runs: dict[str, Any] = {}
    for db in dbs:
        h.log(f"=== {db}")
        stack = h.stack(rate=1000) if db == "sqlite" else postgres_stack()
        with stack as s:
            cookie = session_cookie(s.app_url)
            headers = {"Cookie": f"{COOKIE_NAME}={cookie}"}
            with httpx.Client(base_url=s.app_url, headers=headers, timeout=300) as client:
                runs[db] = upload_and_download(s, client, repeat)
            if db == dbs[0]:
                runs["pictures"] = open_pictures(s, cookie, args)
    for db in dbs:
        add_transfer_rows(report, db, runs[db])
    add_picture_rows(report, runs["pictures"], args)
    report.runs = [runs]
    report.notes.append(
        f"machine speed: {speed:.2f} CPU-s for `x += i` 30M times (1.9-2.2 on a good hour)"
    )
    report.notes.append(f"pictures measured on {dbs[0]}; figures from a shared 2-core machine")
    report.finish()
    return report


if __name__ == "__main__":
    main()

"""Shared helpers of the benchmarks: the real stack (paced fake model, bridge, Reflex app in
prod mode, headless chromium), process CPU/memory, and the printed report.

The project root is found from this file's path, so a benchmark runs the code of the checkout
it lives in (e.g. a git worktree), never the current directory's.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import psutil  # noqa: E402

from tests.support.accounts import ADMIN_ENV, session_cookie  # noqa: E402
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402,F401  (re-exported)
from tests.support.processes import free_port  # noqa: E402,F401  (re-exported)
from tests.support.processes import stop_process as _stop  # noqa: E402
from tests.support.processes import wait_http as _wait_http  # noqa: E402

# Full runs keep their figures in results/ (committed); --quick runs in results/quick/ (ignored).
RESULTS_DIR = ROOT / "benchmarks" / "results" / ("quick" if "--quick" in sys.argv else "")
MODEL_NAME = "fake-model"
CONTEXT_LENGTH = 131072


# ---- machine, commit, report --------------------------------------------------------------


def machine() -> str:
    mem_kb = 0
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores ({cpu}), {mem_kb / 1024 / 1024:.1f} GiB RAM, Python {platform.python_version()}"


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def commit() -> str:
    """The checkout's commit, and the last commit that changed the app's code (what is measured)."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    app_paths = ("agent_chat", "rxconfig.py", "alembic", "assets", "requirements.txt")
    sha = git("rev-parse", "--short=12", "HEAD") or "unknown"
    app = git("log", "-1", "--format=%h %s", "--", *app_paths)
    # Only the app's code matters for the figures; benchmark edits do not make it "dirty".
    dirty = git("status", "--porcelain", "--", *app_paths)
    return f"{sha} (app code as of {app[:80]!r}){' + uncommitted app changes' if dirty else ''}"


def command() -> str:
    """The command line, database passwords masked (results/*.json are committed)."""
    line = " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv])
    return re.sub(r"(://[^/:@\s]+:)[^@\s]+@", r"\1***@", line)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


@dataclass
class Row:
    """One figure: what, the measured value (text), the target, met?"""

    name: str
    value: str
    target: str = "report"
    met: bool | None = None
    detail: str = ""


@dataclass
class Report:
    benchmark: str
    title: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)  # raw per-repetition figures

    def add(
        self,
        name: str,
        value: str,
        target: str = "report",
        met: bool | None = None,
        detail: str = "",
    ) -> None:
        self.rows.append(Row(name, value, target, met, detail))

    def render(self) -> str:
        header = ["figure", "value", "target", "met"]
        table = [
            [r.name, r.value, r.target, "—" if r.met is None else ("yes" if r.met else "NO")]
            for r in self.rows
        ]
        widths = [max(len(str(x)) for x in col) for col in zip(header, *table, strict=False)]
        lines = [f"== {self.benchmark}: {self.title}"]
        lines.append(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=False)))
        lines.append("-+-".join("-" * w for w in widths))
        for r in table:
            lines.append(" | ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=False)))
        for r in self.rows:
            if r.detail:
                lines.append(f"  {r.name}: {r.detail}")
        for note in self.notes:
            lines.append(f"note: {note}")
        lines.append(f"machine: {machine()}")
        lines.append(f"commit:  {commit()}")
        lines.append(f"command: {command()}")
        lines.append(f"when:    {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
        lines.append(f"load:    {load()} (1/5/15-min load average when the benchmark ended)")
        return "\n".join(lines)

    def finish(self) -> None:
        """Print the table and keep a JSON copy in benchmarks/results/."""
        print(self.render(), flush=True)
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        data = {
            "benchmark": self.benchmark,
            "title": self.title,
            "rows": [r.__dict__ for r in self.rows],
            "notes": self.notes,
            "runs": self.runs,
            "machine": machine(),
            "commit": commit(),
            "command": command(),
            "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "load": load(),
        }
        (RESULTS_DIR / f"{self.benchmark}.json").write_text(json.dumps(data, indent=2) + "\n")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---- processes ---------------------------------------------------------------------------


def tree(pid: int) -> list[psutil.Process]:
    try:
        parent = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return []
    return [parent, *parent.children(recursive=True)]


def tree_cpu(pid: int) -> float:
    """User + system CPU seconds of a process and its living children."""
    total = 0.0
    for proc in tree(pid):
        with contextlib.suppress(psutil.Error):
            t = proc.cpu_times()
            total += t.user + t.system
    return total


def tree_memory(pid: int) -> tuple[float, float]:
    """(PSS, RSS) in MiB of a process tree."""
    pss = rss = 0.0
    for proc in tree(pid):
        with contextlib.suppress(psutil.Error):
            info = proc.memory_full_info()
            pss += getattr(info, "pss", info.rss)
            rss += info.rss
    return pss / 2**20, rss / 2**20


def chromium_pids() -> list[int]:
    """Chromium processes started (through Playwright's driver) by this process."""
    out = []
    for proc in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "chrom" in proc.name().lower():
                out.append(proc.pid)
    return out


def chromium_cpu_by_type() -> dict[str, float]:
    """CPU seconds of the chromium processes by --type (browser, renderer, gpu-process, ...)."""
    out: dict[str, float] = {}
    for pid in chromium_pids():
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            kind = next(
                (a.split("=", 1)[1] for a in proc.cmdline() if a.startswith("--type=")), "browser"
            )
            t = proc.cpu_times()
            out[kind] = out.get(kind, 0.0) + t.user + t.system
    return out


def chromium_cpu() -> float:
    return sum(chromium_cpu_by_type().values())


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


@dataclass
class Stack:
    """Fake model, bridge and (optionally) the Reflex app, as real processes."""

    tmp: Path
    rate: float
    db_url: str
    max_active_runs: int = 8
    model_port: int = field(default_factory=free_port)
    bridge_port: int = field(default_factory=free_port)
    app_port: int = field(default_factory=free_port)
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def model_url(self) -> str:
        return f"http://127.0.0.1:{self.model_port}"

    @property
    def bridge_url(self) -> str:
        return f"http://127.0.0.1:{self.bridge_port}"

    @property
    def app_url(self) -> str:
        return f"http://127.0.0.1:{self.app_port}"

    @property
    def env(self) -> dict[str, str]:
        hermes_home = self.tmp / "hermes"
        env = {
            **os.environ,
            "HERMES_HOME": str(hermes_home),
            "AGENT_CHAT_DB_URL": self.db_url,
            "AGENT_CHAT_BRIDGE_URL": self.bridge_url,
            "AGENT_CHAT_SKILLS_DIR": str(self.tmp / "skills"),
            "AGENT_CHAT_MODEL_BASE_URL": f"{self.model_url}/v1",
            "AGENT_CHAT_MODEL": MODEL_NAME,
            "AGENT_CHAT_MODEL_API_KEY": "bench",
            "AGENT_CHAT_MODEL_CONTEXT_LENGTH": str(CONTEXT_LENGTH),
            "AGENT_CHAT_MAX_ACTIVE_RUNS": str(self.max_active_runs),
            "PATH": f"{ROOT / '.tools/node_modules/.bin'}:{ROOT / '.venv/bin'}:{os.environ['PATH']}",
            "REFLEX_TELEMETRY_ENABLED": "false",
            "REFLEX_CHECK_LATEST_VERSION": "false",
            "PYTHONPATH": str(ROOT),
            **ADMIN_ENV,  # the app's administrator, as in the test stacks
        }
        return env

    def model_spec(self) -> dict[str, Any]:
        return {
            "base_url": f"{self.model_url}/v1",
            "api_key": "bench",
            "model": MODEL_NAME,
            "context_length": CONTEXT_LENGTH,
        }

    def _start(self, name: str, args: list[str], health: str, timeout: float) -> None:
        logfile = self.tmp / f"{name}.log"
        proc = subprocess.Popen(
            args, cwd=ROOT, env=self.env, stdout=logfile.open("ab"), stderr=subprocess.STDOUT
        )
        self.procs[name] = proc
        _wait_http(health, timeout, proc, logfile)

    def start_model(self) -> None:
        log(f"fake model on :{self.model_port} at {self.rate:g} chunks/s")
        self._start(
            "model",
            [
                sys.executable,
                str(ROOT / "benchmarks" / "fake_model.py"),
                "--port",
                str(self.model_port),
                "--rate",
                str(self.rate),
            ],
            f"{self.model_url}/_bench/stats",
            30,
        )

    def start_bridge(self) -> None:
        hermes_home = self.tmp / "hermes"
        hermes_home.mkdir(exist_ok=True)
        (hermes_home / "config.yaml").write_text("agent:\n  api_max_retries: 1\n", encoding="utf-8")
        (self.tmp / "skills").mkdir(exist_ok=True)
        log(f"bridge on :{self.bridge_port}")
        self._start(
            "bridge",
            [
                sys.executable,
                "-m",
                "agent_chat.bridge",
                "--port",
                str(self.bridge_port),
                "--log-level",
                "warning",
            ],
            f"{self.bridge_url}/health",
            120,
        )

    def start_app(self) -> None:
        port = str(self.app_port)
        log(f"Reflex app (prod) on :{port} from {ROOT} (builds the frontend first)")
        self._start(
            "app",
            [sys.executable, "-m", "reflex", "run", "--env", "prod", "--single-port"]
            + ["--frontend-port", port, "--backend-port", port, "--backend-host", "127.0.0.1"],
            f"{self.app_url}/ping",
            400,
        )
        _wait_http(f"{self.app_url}/", 60, self.procs["app"], self.tmp / "app.log")

    @property
    def app_pid(self) -> int:
        return self.procs["app"].pid

    @property
    def bridge_pid(self) -> int:
        return self.procs["bridge"].pid

    def model_stats(self) -> list[dict[str, Any]]:
        return httpx.get(f"{self.model_url}/_bench/stats", timeout=10).json()

    def reset_model_stats(self) -> None:
        httpx.post(f"{self.model_url}/_bench/reset", timeout=10)

    def stop(self) -> None:
        for name in ("app", "bridge", "model"):
            _stop(self.procs.pop(name, None))


_cookies: dict[str, str] = {}


def signed_in_context(b: Any, app_url: str, **options: Any) -> Any:
    """A new browser context signed in as the stack's administrator (signed in once per
    app: the session is stored and reused)."""
    from agent_chat.auth import COOKIE_NAME

    if app_url not in _cookies:
        _cookies[app_url] = session_cookie(app_url)
    context = b.new_context(**options)
    cookie = {"name": COOKIE_NAME, "value": _cookies[app_url], "url": app_url, "httpOnly": True}
    context.add_cookies([cookie])
    return context


@contextlib.contextmanager
def stack(
    rate: float, *, app: bool = True, db_path: Path | None = None, max_active_runs: int = 8
) -> Iterator[Stack]:
    with tempfile.TemporaryDirectory(prefix="agent-chat-bench-") as tmp_name:
        tmp = Path(tmp_name)
        db_url = sqlite_url(db_path or tmp / "app.db")
        s = Stack(tmp=tmp, rate=rate, db_url=db_url, max_active_runs=max_active_runs)
        try:
            s.start_model()
            s.start_bridge()
            if app:
                s.start_app()
            yield s
        finally:
            s.stop()


# ---- database helpers -----------------------------------------------------------------------


def engine_for(db_url: str):
    from agent_chat.db.engine import make_engine, migrate

    migrate(db_url)
    return make_engine(db_url)


# Every conversation has an owner: the benchmarks' is user 1 (a stack's administrator, the
# first user of its database; `ensure_bench_owner` makes it in a bare database).
BENCH_OWNER = 1


def ensure_bench_owner(session: Any) -> int:
    """User 1 (made as administrator "bench" when the database has no user yet)."""
    from agent_chat.db import users
    from agent_chat.db.models import AppUser, UserRole

    if session.get(AppUser, BENCH_OWNER) is None:
        users.create_user(
            session=session, username="bench", password_hash="!bench", role=UserRole.ADMIN
        )
    return BENCH_OWNER


def create_chat_session(db_url: str) -> str:
    """A new empty conversation in the app's database; its uuid."""
    from agent_chat.db import sessions
    from agent_chat.db.engine import make_engine, open_session

    engine = make_engine(db_url)
    try:
        with open_session(engine) as session:
            return sessions.create_session(session=session, user_id=BENCH_OWNER).session_uuid
    finally:
        engine.dispose()


def assistant_run(db_url: str, session_uuid: str) -> dict[str, Any]:
    """The newest assistant message of a session: run_id, status, content length."""
    from sqlmodel import col, select

    from agent_chat.db import sessions
    from agent_chat.db.engine import make_engine, open_session
    from agent_chat.db.models import ChatMessage

    engine = make_engine(db_url)
    try:
        with open_session(engine) as session:
            chat = sessions.get_session(
                session=session, session_uuid=session_uuid, user_id=BENCH_OWNER
            )
            msg = session.exec(
                select(ChatMessage)
                .where(ChatMessage.session_id == chat.id, ChatMessage.role == "ASSISTANT")
                .order_by(col(ChatMessage.id).desc())
            ).first()
            return {
                "run_id": msg.run_id,
                "status": msg.status,
                "chars": len(msg.content),
                "id": msg.id,
            }
    finally:
        engine.dispose()


def seq_coverage(db_url: str, message_id: int) -> tuple[int, int, int]:
    """(distinct seqs stored, duplicates, max seq) of one message's log."""
    from agent_chat.db import logs
    from agent_chat.db.engine import make_engine, open_session
    from agent_chat.protocol.log_codec import seqs_covered

    engine = make_engine(db_url)
    try:
        with open_session(engine) as session:
            seen: dict[int, int] = {}
            for row in logs.list_logs(session=session, message_id=message_id):
                for seq in seqs_covered(row.seq, row.meta_json):
                    seen[seq] = seen.get(seq, 0) + 1
    finally:
        engine.dispose()
    dups = sum(n - 1 for n in seen.values())
    return len(seen), dups, max(seen, default=0)


# ---- browser ---------------------------------------------------------------------------------


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: install Debian's chromium (./test.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        b = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class WsCounter:
    """Bytes of the websocket frames a page receives (Playwright's framereceived)."""

    def __init__(self, page: Any) -> None:
        self.reset()
        page.on("websocket", self._on_ws)

    def _on_ws(self, ws: Any) -> None:
        ws.on("framereceived", self._on_frame)

    def _on_frame(self, payload: Any) -> None:
        size = len(payload.encode("utf-8")) if isinstance(payload, str) else len(payload)
        self.frames += 1
        self.bytes += size
        # Reflex frames: 42/_event,["event",{"delta": {...}, "events": [...], ...}]
        delta = events = 0
        if isinstance(payload, str) and "[" in payload:
            with contextlib.suppress(ValueError, IndexError, TypeError, AttributeError):
                body = json.loads(payload[payload.index("[") :])[1]
                delta = len(json.dumps(body.get("delta") or {}, ensure_ascii=False).encode())
                events = len(json.dumps(body.get("events") or [], ensure_ascii=False).encode())
        self.delta_bytes += delta
        self.event_bytes += events

    def reset(self) -> None:
        self.bytes = self.frames = self.delta_bytes = self.event_bytes = 0


def renderer_task_seconds(cdp: Any) -> float:
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return next((m["value"] for m in metrics if m["name"] == "TaskDuration"), 0.0)


def open_chat(page: Any, app_url: str, session_uuid: str) -> None:
    """Open a conversation and wait until the composer takes input."""
    page.goto(f"{app_url}/chat/{session_uuid}")
    page.get_by_test_id("composer-input").wait_for(state="visible")
    page.wait_for_function(
        "() => { const el = document.querySelector('[data-testid=composer-input]');"
        " return el && !el.disabled; }"
    )
    page.wait_for_timeout(300)  # on_load's state arrives with the page


def send(page: Any, text: str) -> float:
    """Type and send a message; the epoch time of the Enter press."""
    box = page.get_by_test_id("composer-input")
    box.fill(text)
    t = time.time()
    box.press("Enter")
    return t


def parse_common(description: str, argv: list[str] | None = None, extra=None):
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--quick", action="store_true", help="a short version (fewer/smaller repetitions)"
    )
    parser.add_argument("--repeat", type=int, default=None, help="repetitions (median reported)")
    if extra:
        extra(parser)
    return parser.parse_args(argv)


# ---- one answer streamed through the browser ---------------------------------------------

WATCH_END_JS = """
(end) => {
  window.__bench = {doneAt: null, textChars: 0, paragraphs: 0, scriptAt: null};
  // When the server's script that carries the last token runs (before React renders it).
  const acs = window.acs;
  if (acs) window.acs = (id, offset, text) => {
    if (!window.__bench.scriptAt && String(text).includes(end)) window.__bench.scriptAt = Date.now();
    return acs(id, offset, text);
  };
  const check = () => {
    if (window.__bench.doneAt) return;
    const all = document.querySelectorAll('[data-testid=message-assistant]');
    const last = all[all.length - 1];
    if (!last) return;
    const content = last.querySelector('[data-testid=message-content]');
    if (!content) return;
    const text = content.textContent;
    if (text.includes(end)) {
      window.__bench.doneAt = Date.now();
      window.__bench.textChars = text.replace(/\\s+/g, '').length;
      window.__bench.paragraphs = content.querySelectorAll('p').length;
    }
  };
  new MutationObserver(check).observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""


def stream_through_browser(
    s: Stack, b: Any, message: str, end: str, timeout_s: float = 600, css: str = ""
) -> dict[str, Any]:
    """Open a new conversation, send `message`, wait until `end` is in the answer's DOM and the
    message is finalised. Returns times (epoch s), websocket bytes and CPU figures. `css`: a
    style sheet added to the page first (e.g. to switch its animations off)."""
    session_uuid = create_chat_session(s.db_url)
    context = signed_in_context(b, s.app_url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    ws = WsCounter(page)
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    try:
        open_chat(page, s.app_url, session_uuid)
        if css:
            page.add_style_tag(content=css)
        page.evaluate(WATCH_END_JS, end)
        s.reset_model_stats()
        ws.reset()
        types0 = chromium_cpu_by_type()
        cpu0 = {
            "app": tree_cpu(s.app_pid),
            "bridge": tree_cpu(s.bridge_pid),
            "chromium": sum(types0.values()),
            "renderer": renderer_task_seconds(cdp),
        }
        sent_at = send(page, message)
        page.wait_for_function("() => window.__bench.doneAt", polling=100, timeout=timeout_s * 1000)
        types1 = chromium_cpu_by_type()
        cpu1 = {
            "app": tree_cpu(s.app_pid),
            "bridge": tree_cpu(s.bridge_pid),
            "chromium": sum(types1.values()),
            "renderer": renderer_task_seconds(cdp),
        }
        bench = page.evaluate("() => window.__bench")
        ws_at_text = ws.bytes
        page.wait_for_function(
            "() => { const all = document.querySelectorAll('[data-testid=message-assistant]');"
            " const last = all[all.length - 1]; return last && last.dataset.status !== 'RUNNING'; }",
            polling=100,
            timeout=timeout_s * 1000,
        )
        page.wait_for_timeout(1000)
        app_cpu_end = tree_cpu(s.app_pid)
        run = assistant_run(s.db_url, session_uuid)
        status = httpx.get(f"{s.bridge_url}/runs/{run['run_id']}", timeout=10).json()
        stats = [r for r in s.model_stats() if "last_at" in r]
        return {
            "session_uuid": session_uuid,
            "sent_at": sent_at,
            "done_at": bench["doneAt"] / 1000.0,
            "dom_chars_no_ws": bench["textChars"],
            "dom_paragraphs": bench.get("paragraphs", 0),
            "script_at": bench["scriptAt"] / 1000.0 if bench.get("scriptAt") else None,
            "first_token_at": min(r["first_at"] for r in stats),
            "last_token_at": max(r["last_at"] for r in stats),
            "ws_bytes_total": ws.bytes,
            "ws_frames_total": ws.frames,
            "ws_bytes_at_text": ws_at_text,
            "ws_delta_bytes": ws.delta_bytes,
            "ws_event_bytes": ws.event_bytes,
            "cpu_chromium_by_type": {k: v - types0.get(k, 0.0) for k, v in types1.items()},
            "cpu_app_to_text": cpu1["app"] - cpu0["app"],
            "cpu_app_to_final": app_cpu_end - cpu0["app"],
            "cpu_bridge": cpu1["bridge"] - cpu0["bridge"],
            "cpu_chromium": cpu1["chromium"] - cpu0["chromium"],
            "cpu_renderer_task": cpu1["renderer"] - cpu0["renderer"],
            "events": int(status.get("last_event_id") or 0),
            "message_status": run["status"],
            "page_errors": errors,
        }
    finally:
        context.close()


def run_async(fn, *args, **kwargs):
    """asyncio.run(fn(...)) on a worker thread (sync Playwright owns this thread's loop)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(fn(*args, **kwargs))).result()

"""Runs completed per minute with the scripted model, 1 web worker + 1 bridge
against 2 web workers + 2 bridges, side by side in one session.

Both set-ups are the real launcher (`python -m agent_chat.launch.serve --scaled`, agent_chat/launch/scaled.py:
PostgreSQL, Redis, the bridges, `reflex run` with Reflex's Redis state manager and
`GRANIAN_WORKERS`), started once each and kept running; the paced fake model
(benchmarks/fake_model.py) is shared. In each round both are driven in turn (the order swaps
every round, so both see the same load) for `--seconds`: `--clients` threads, each with its own
HTTP connection (so the port's connections spread over the workers), each in a loop: a new
conversation, `POST …/runs` (`bench-text N`), read its SSE stream to the end. A run counts when
it ended `run_completed` inside the window with the last token (`zzend.`) in its text.
`AGENT_CHAT_MAX_ACTIVE_RUNS` is raised to the clients' number on both (one person drives
every run: its per-person limit would cap both set-ups alike otherwise).

Per phase: runs/min, run time p50/p95, CPU seconds per run of the app (the `reflex run` process
and its workers; and how it split over the workers), of the bridges, of PostgreSQL + Redis, and
the load average at the end of the phase.

Run: python benchmarks/scaled_runs.py [--quick] [--rounds K] [--seconds S] [--clients C]
     [--tokens N] [--rate R]
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import httpx  # noqa: E402
import psutil  # noqa: E402

from agent_chat.auth import COOKIE_NAME  # noqa: E402
from tests.support.accounts import session_cookie  # noqa: E402
from tests.support.api import new_session, read_stream  # noqa: E402
from tests.support.processes import start_process, stop_process  # noqa: E402
from tests.support.scaled import Scaled, running_scaled, scaled_env  # noqa: E402

END = "zzend."


def cpu_of(processes: list[psutil.Process]) -> dict[int, float]:
    out = {}
    for p in processes:
        with contextlib.suppress(psutil.Error):
            t = p.cpu_times()
            out[p.pid] = t.user + t.system
    return out


def snapshot(s: Scaled) -> dict[str, dict[int, float]]:
    app = s.app_processes()
    bridges = s.bridges()
    others = [p for p in s.launched() if p.pid not in {q.pid for q in app + bridges}]
    return {
        "app": cpu_of(app),
        "workers": cpu_of(s.web_workers()),
        "bridges": cpu_of(bridges),
        "data": cpu_of(others),
    }


def delta(a: dict[int, float], b: dict[int, float]) -> float:
    return sum(b[pid] - a.get(pid, 0.0) for pid in b)


def drive(s: Scaled, cookie: str, args) -> dict:
    """`args.clients` loops for `args.seconds`; runs that completed inside the window."""
    message = f"bench-text {args.tokens} rate={args.rate:g}"
    stop_at = time.monotonic() + args.seconds
    done: list[float] = []
    failed: list[str] = []
    refused = [0]
    lock = threading.Lock()

    def client_loop() -> None:
        headers = {"Cookie": f"{COOKIE_NAME}={cookie}"}
        with httpx.Client(base_url=s.url, headers=headers, timeout=120) as client:
            while time.monotonic() < stop_at:
                try:
                    session_id = new_session(client)
                    t0 = time.monotonic()
                    response = client.post(
                        f"/api/chat/sessions/{session_id}/runs", json={"message": message}
                    )
                    if response.status_code == 429:
                        with lock:
                            refused[0] += 1
                        time.sleep(0.5)
                        continue
                    response.raise_for_status()
                    read = read_stream(client, response.json()["runId"])
                    t1 = time.monotonic()
                    ok = read.events and read.last().type == "run_completed"
                    with lock:
                        if ok and END in read.text():
                            if t1 <= stop_at:
                                done.append(t1 - t0)
                        else:
                            failed.append(read.types()[-1] if read.events else str(read.status))
                except httpx.HTTPError as exc:
                    with lock:
                        failed.append(repr(exc)[:120])

    before = snapshot(s)
    t0 = time.monotonic()
    threads = [threading.Thread(target=client_loop) for _ in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    after = snapshot(s)
    n = max(len(done), 1)
    workers = [after["workers"][pid] - before["workers"].get(pid, 0.0) for pid in after["workers"]]
    return {
        "completed": len(done),
        "runs_per_min": len(done) / args.seconds * 60,
        "p50_s": h.percentile(done, 50),
        "p95_s": h.percentile(done, 95),
        "failed": len(failed),
        "failures": failed[:5],
        "refused_429": refused[0],
        "wall_s": wall,
        "app_cpu_per_run": delta(before["app"], after["app"]) / n,
        "worker_cpu_s": sorted(workers, reverse=True),
        "bridge_cpu_per_run": delta(before["bridges"], after["bridges"]) / n,
        "data_cpu_per_run": delta(before["data"], after["data"]) / n,
        "load": h.load(),
    }


def open_dir() -> Path:
    """A folder the `postgres` user can enter (PostgreSQL runs as it when we are root)."""
    folder = Path(tempfile.mkdtemp(prefix="agent-chat-bench-scaled-", dir="/tmp"))
    folder.chmod(0o755)
    return folder


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--rounds", type=int, default=None, help="rounds of A, B (default 3)")
        p.add_argument("--seconds", type=float, default=None, help="window per phase (60)")
        p.add_argument("--clients", type=int, default=8, help="concurrent API clients")
        p.add_argument("--tokens", type=int, default=200, help="tokens per answer")
        p.add_argument("--rate", type=float, default=200.0, help="tokens/s per answer")

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    args.rounds = args.rounds or args.repeat or (1 if args.quick else 3)
    args.seconds = args.seconds or (30 if args.quick else 60)
    shapes = {"1 worker + 1 bridge": (1, 1), "2 workers + 2 bridges": (2, 2)}
    report = h.Report(
        "scaled_runs",
        f"runs/min, {args.clients} API clients, bench-text {args.tokens} at {args.rate:g} tokens/s",
    )
    folder = open_dir()
    model_port = h.free_port()
    model = None
    try:
        model = start_process(
            [sys.executable, str(h.ROOT / "benchmarks" / "fake_model.py"), "--port"]
            + [str(model_port), "--rate", str(args.rate)],
            env=h.Stack(tmp=folder, rate=args.rate, db_url="").env,
            log=folder / "model.log",
            health=f"http://127.0.0.1:{model_port}/_bench/stats",
            timeout=60,
        )
        with contextlib.ExitStack() as stack:
            running: dict[str, tuple[Scaled, str]] = {}
            for name, (workers, bridges) in shapes.items():
                tmp = folder / name.replace(" ", "-").replace("+", "")
                tmp.mkdir()
                env = scaled_env(
                    tmp,
                    f"http://127.0.0.1:{model_port}/v1",
                    {"AGENT_CHAT_MAX_ACTIVE_RUNS": str(max(args.clients, 5))},
                )
                h.log(f"starting {name} (launcher, builds its frontend)")
                s = stack.enter_context(
                    running_scaled(tmp, env, web_workers=workers, bridges=bridges)
                )
                running[name] = (s, session_cookie(s.url))
            for s, cookie in running.values():  # warm-up: hermes' first turns, page caches
                args_warm = type(args)(**{**vars(args), "seconds": 8.0, "clients": 2})
                drive(s, cookie, args_warm)
            order = list(shapes)
            for i in range(args.rounds):
                for name in order if i % 2 == 0 else order[::-1]:
                    s, cookie = running[name]
                    result = drive(s, cookie, args)
                    result["shape"], result["round"] = name, i + 1
                    report.runs.append(result)
                    h.log(
                        f"round {i + 1} {name}: {result['runs_per_min']:.1f} runs/min, "
                        f"p50 {result['p50_s']:.2f} s, {result['failed']} failed, "
                        f"app CPU {result['app_cpu_per_run']:.3f} s/run, load {result['load']}"
                        + (f"; failures {result['failures']}" if result["failed"] else "")
                    )
    finally:
        stop_process(model)
        shutil.rmtree(folder, ignore_errors=True)

    def med(name: str, key: str) -> float:
        return h.median([r[key] for r in report.runs if r["shape"] == name])

    a, b = shapes
    n = f"median of {args.rounds} rounds of {args.seconds:g} s"
    ratio = med(b, "runs_per_min") / med(a, "runs_per_min") if med(a, "runs_per_min") else 0
    failed = sum(r["failed"] for r in report.runs)
    report.add(
        "runs/min: 1 worker + 1 bridge / 2 workers + 2 bridges",
        f"{med(a, 'runs_per_min'):.1f} / {med(b, 'runs_per_min'):.1f}",
        "report",
        None,
        f"{n}; ratio {ratio:.2f}; {failed} failed in all; loads per phase: "
        + ", ".join(
            f"{'1+1' if r['shape'] == a else '2+2'} round {r['round']}: {r['load']}"
            for r in report.runs
        ),
    )
    report.add(
        "run time p50 / p95 (s): 1+1 | 2+2",
        f"{med(a, 'p50_s'):.2f} / {med(a, 'p95_s'):.2f} | {med(b, 'p50_s'):.2f} / {med(b, 'p95_s'):.2f}",
        "report",
        None,
        f"the model paces one answer to {args.tokens / args.rate:.1f} s",
    )
    report.add(
        "CPU s per run, app / bridges / PostgreSQL+Redis: 1+1 | 2+2",
        f"{med(a, 'app_cpu_per_run'):.3f} / {med(a, 'bridge_cpu_per_run'):.3f} / "
        f"{med(a, 'data_cpu_per_run'):.3f} | {med(b, 'app_cpu_per_run'):.3f} / "
        f"{med(b, 'bridge_cpu_per_run'):.3f} / {med(b, 'data_cpu_per_run'):.3f}",
        "report",
        None,
        "2+2 web workers' CPU per phase (s): "
        + "; ".join(
            "/".join(f"{x:.1f}" for x in r["worker_cpu_s"]) for r in report.runs if r["shape"] == b
        ),
    )
    report.notes.append(
        "both set-ups run at once (the idle one polls its bridges); a shared 2-core machine: "
        "other sessions' load is in the load averages, and under that load more processes "
        "also means a larger share of the cores"
    )
    report.finish()
    return report


if __name__ == "__main__":
    main()

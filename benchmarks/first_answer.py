"""First answer vs the next: send → the request reaches the model, at the bridge.

A fresh `python -m agent_chat.bridge` process per checkout (this one, and with `--before DIR`
an older checkout, e.g. a `git worktree`), started side by side in turn so both see the same
load. For each round: the first message of a new conversation, a follow-up in it, and a
conversation whose agent was evicted from the pool (pool size 1: another conversation ran in
between), and (where the bridge has it) a conversation opened first (`POST .../prepare`, as the
page does on opening one) and asked 2 s later. The bridge gets `--settle` seconds after /health first (a started bridge warms
hermes up in the background; the issue's "after a bridge restart once the bridge is up").

    python benchmarks/first_answer.py [--before /tmp/bench-before] [--rounds 5]

Prints the median of each case per checkout, and writes results/first_answer.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.model_server import free_port, running_fake_model  # noqa: E402
from tests.support.bridge import hermes_home  # noqa: E402


def wait_health(url: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"no bridge at {url}")


def to_model(client: httpx.Client, fake, session: str, text: str) -> float:
    """Seconds from POST /runs to the model receiving the request; then waits for the end."""
    seen = len(fake.requests())
    body = {
        "session_id": session,
        "message": text,
        "history": [],
        "model": {"base_url": fake.base_url, "model": "fake-model"},
    }
    started = time.perf_counter()
    run_id = client.post("/runs", json=body).raise_for_status().json()["run_id"]
    while len(fake.requests()) == seen:
        time.sleep(0.002)
    arrived = time.perf_counter() - started
    while client.get(f"/runs/{run_id}").json()["status"] not in ("succeeded", "failed"):
        time.sleep(0.02)
    return arrived


def one_round(root: Path, fake, settle: float, prepare_wait: float = 2.0) -> dict[str, float]:
    port = free_port()
    home = hermes_home(Path(tempfile.mkdtemp(prefix="first-answer-")))
    env = {
        **os.environ,
        "HERMES_HOME": str(home),
        "AGENT_CHAT_AGENT_POOL_SIZE": "1",
        "PYTHONPATH": str(root),
    }
    env.pop("AGENT_CHAT_BRIDGE_TOKEN", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_chat.bridge", "--port", str(port)],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_health(url)
        time.sleep(settle)
        with httpx.Client(base_url=url, timeout=60) as client:
            first, other = str(uuid.uuid4()), str(uuid.uuid4())
            figures = {"first message": to_model(client, fake, first, "hello")}
            figures["follow-up"] = to_model(client, fake, first, "and again")
            to_model(client, fake, other, "someone else")  # evicts `first` (pool of 1)
            figures["evicted agent"] = to_model(client, fake, first, "back again")
            # What the page does when a conversation opens: the agent is built meanwhile.
            opened = str(uuid.uuid4())
            model = {"base_url": fake.base_url, "model": "fake-model"}
            if client.post(f"/sessions/{opened}/prepare", json={"model": model}).status_code == 202:
                time.sleep(prepare_wait)
                figures["opened, then first message"] = to_model(client, fake, opened, "hi")
        return figures
    finally:
        process.terminate()
        process.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an older checkout to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--settle", type=float, default=10.0)
    args = parser.parse_args()
    checkouts = {"after": ROOT} if args.before is None else {"before": args.before, "after": ROOT}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    with running_fake_model(token_delay=0.0) as fake:
        for round_no in range(args.rounds):
            for name, root in checkouts.items():
                figures = one_round(root, fake, args.settle)
                results[name].append(figures)
                shown = ", ".join(f"{k} {v:.3f} s" for k, v in figures.items())
                print(f"round {round_no + 1} {name}: {shown}", flush=True)
    print(f"\nmedian of {args.rounds} (load {os.getloadavg()[0]:.1f}):")
    medians = {}
    for name, rounds in results.items():
        keys = sorted({k for r in rounds for k in r}, key=list(rounds[-1]).index)
        medians[name] = {k: statistics.median(r[k] for r in rounds if k in r) for k in keys}
        print(f"  {name}: " + ", ".join(f"{k} {v:.3f} s" for k, v in medians[name].items()))
    out = ROOT / "benchmarks" / "results" / "first_answer.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rounds": results, "medians": medians}, indent=2) + "\n")


if __name__ == "__main__":
    main()

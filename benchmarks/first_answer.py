"""First answer vs the next: send → the request reaches the model, at the bridge.

A fresh `python -m agent_chat.bridge` process per checkout (this one, and with `--before DIR`
an older checkout, e.g. a `git worktree`), started side by side in turn so both see the same
load. Pool of one agent. Each round, in one bridge process (then a second one, restarted):

- *first message*: a new conversation, once the bridge is up: after its warm-up (/health
  says `"warm": true`; a bridge that does not say waits `--settle` seconds);
- *follow-up* in it;
- *evicted agent*: the conversation again after another one took the pool's only agent;
- *evicted, reopened*: the same, but the conversation was opened (`POST .../prepare`, what
  the page does when it shows a conversation) 2 s before the message;
- *opened, then first message*: a new conversation opened 2 s before its first message;
- *opened, sent at once*: a new conversation whose first message follows its prepare at once;
- *after a bridge restart*: the bridge process stopped and started again (same HERMES_HOME),
  and once it is up the first conversation's next message (no prepare: what the app sends
  for a tab that was open all along).

    python benchmarks/first_answer.py [--before /tmp/bench-before] [--rounds 5]

Prints each round with the load average, the median of each case per checkout, and writes
results/first_answer.json.
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
        "user": 1,  # the hermes home (memory) of user 1
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


def start_bridge(root: Path, home: Path, settle: float) -> tuple[subprocess.Popen, str]:
    """A bridge process of checkout `root`, returned once it is up and warm."""
    port = free_port()
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
    wait_health(url)
    if "warm" not in httpx.get(f"{url}/health", timeout=5).json():
        time.sleep(settle)  # an older bridge that does not say when it is warm
    else:
        deadline = time.monotonic() + 180
        while not httpx.get(f"{url}/health", timeout=5).json()["warm"]:
            if time.monotonic() > deadline:
                raise SystemExit("the bridge never got warm")
            time.sleep(0.05)
    return process, url


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(10)


def prepare(client: httpx.Client, fake, session: str) -> bool:
    model = {"base_url": fake.base_url, "model": "fake-model"}
    return (
        client.post(f"/sessions/{session}/prepare", json={"user": 1, "model": model}).status_code
        == 202
    )


def one_round(root: Path, fake, settle: float, prepare_wait: float = 2.0) -> dict[str, float]:
    home = hermes_home(Path(tempfile.mkdtemp(prefix="first-answer-")))
    figures: dict[str, float] = {}
    process, url = start_bridge(root, home, settle)
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            first, other = str(uuid.uuid4()), str(uuid.uuid4())
            figures["first message"] = to_model(client, fake, first, "hello")
            figures["follow-up"] = to_model(client, fake, first, "and again")
            to_model(client, fake, other, "someone else")  # evicts `first` (pool of 1)
            figures["evicted agent"] = to_model(client, fake, first, "back again")
            to_model(client, fake, other, "someone else again")  # evicts it again
            if prepare(client, fake, first):
                time.sleep(prepare_wait)
                figures["evicted, reopened 2 s before"] = to_model(client, fake, first, "back")
            opened = str(uuid.uuid4())
            if prepare(client, fake, opened):
                time.sleep(prepare_wait)
                figures["opened, then first message"] = to_model(client, fake, opened, "hi")
            at_once = str(uuid.uuid4())
            if prepare(client, fake, at_once):
                figures["opened, sent at once"] = to_model(client, fake, at_once, "hi")
    finally:
        stop(process)
    process, url = start_bridge(root, home, settle)
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            figures["after a bridge restart"] = to_model(client, fake, first, "after restart")
    finally:
        stop(process)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an older checkout to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--settle", type=float, default=10.0, help="for a bridge whose /health has no warm"
    )
    args = parser.parse_args()
    checkouts = {"after": ROOT} if args.before is None else {"before": args.before, "after": ROOT}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with running_fake_model(token_delay=0.0) as fake:
        for round_no in range(args.rounds):
            for name, root in checkouts.items():
                load = os.getloadavg()[0]
                figures = one_round(root, fake, args.settle)
                results[name].append({**figures, "load": load})
                shown = ", ".join(f"{k} {v:.3f} s" for k, v in figures.items())
                print(f"round {round_no + 1} {name} (load {load:.1f}): {shown}", flush=True)
    print(f"\nmedian of {args.rounds} (load now {os.getloadavg()[0]:.1f}):")
    medians = {}
    for name, rounds in results.items():
        keys = [k for k in rounds[-1] if k != "load"]
        medians[name] = {k: statistics.median(r[k] for r in rounds if k in r) for k in keys}
        loads = [r["load"] for r in rounds]
        shown = ", ".join(f"{k} {v:.3f} s" for k, v in medians[name].items())
        print(f"  {name} (load {min(loads):.1f}-{max(loads):.1f}): {shown}")
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    out = ROOT / "benchmarks" / "results" / "first_answer.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rounds": results, "medians": medians}, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""What a crash costs in the shape `./run.sh` starts (`python -m agent_chat.launch.serve`: one app
process and one bridge under its supervisor), tried with real processes:

- the bridge killed with SIGKILL mid-answer: the launcher starts it again, the answer ends
  FAILED with the restart sentence, everything received until then kept, and the next
  question is answered;
- the app killed with SIGKILL mid-answer: the launcher exits non-zero and stops the bridge
  (nothing of it left); the next start marks the lost answer FAILED with the reason and
  answers again.

README's table ("What a crash costs") says the same."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil

from agent_chat.auth import COOKIE_NAME
from agent_chat.runs.consumer import BRIDGE_RESTARTED
from tests.fakes.model_server import running_fake_model
from tests.support.accounts import session_cookie
from tests.support.api import ask, new_session, start_run
from tests.support.processes import ROOT, free_port, wait_http
from tests.support.scaled import scaled_env


@contextlib.contextmanager
def _run_sh(tmp: Path, env: dict[str, str], port: int) -> Iterator[subprocess.Popen]:
    """`python -m agent_chat.launch.serve --port PORT` (what ./run.sh runs) until the block ends."""
    log = tmp / f"serve-{time.monotonic_ns()}.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "agent_chat.launch.serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_http(f"http://127.0.0.1:{port}/ping", 600, process, log)
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(90)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


def _children(process: subprocess.Popen, marker: str) -> list[psutil.Process]:
    found = []
    for child in psutil.Process(process.pid).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if marker in " ".join(child.cmdline()):
                found.append(child)
    return found


def _answer(client: httpx.Client, session_id: str) -> dict:
    messages = client.get(f"/api/chat/sessions/{session_id}").json()["messages"]
    return [m for m in messages if m["role"] == "ASSISTANT"][-1]


def _wait_status(client: httpx.Client, session_id: str, status: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while (answer := _answer(client, session_id))["status"] != status:
        assert time.monotonic() < deadline, answer
        time.sleep(0.3)
    return answer


def _words_so_far(client: httpx.Client, session_id: str, at_least: int) -> None:
    """Until the running answer has streamed `at_least` words (its log is stored)."""
    deadline = time.monotonic() + 30
    while True:
        detail = client.get(f"/api/chat/sessions/{session_id}").json()
        text = "".join(
            e["data"].get("text", "")
            for m in detail["messages"]
            for e in (m.get("logs") or [])
            if e["type"] == "text_delta"
        )
        if text.count("word") >= at_least:
            return
        assert time.monotonic() < deadline, detail
        time.sleep(0.2)


def test_a_bridge_or_app_killed_mid_answer_costs_that_answer_only(tmp_path: Path) -> None:
    port = free_port()
    with running_fake_model(0.0) as fake:
        env = scaled_env(
            tmp_path,
            fake.base_url,
            {
                "AGENT_CHAT_DB_URL": f"sqlite:///{tmp_path / 'app.db'}",
                "AGENT_CHAT_BRIDGE_URL": f"http://127.0.0.1:{free_port()}",
            },
        )
        url = f"http://127.0.0.1:{port}"
        with _run_sh(tmp_path, env, port) as launcher:
            cookie = session_cookie(url)
            headers = {"Cookie": f"{COOKIE_NAME}={cookie}"}
            with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
                # The bridge killed mid-answer: restarted; that answer fails, the next works.
                session_id = new_session(client)
                start_run(client, session_id, "long 400 delay=0.03")
                _words_so_far(client, session_id, 20)
                (bridge,) = _children(launcher, "agent_chat.bridge")
                bridge.send_signal(signal.SIGKILL)
                failed = _wait_status(client, session_id, "FAILED")
                assert failed["error"] == BRIDGE_RESTARTED
                assert failed["content"].count("word") >= 20  # what came is kept
                deadline = time.monotonic() + 60
                while not _children(launcher, "agent_chat.bridge"):
                    assert time.monotonic() < deadline, "the bridge was not started again"
                    time.sleep(0.3)
                _, read = ask(client, session_id, "hello after the crash")
                assert read.last().type == "run_completed", read.types()

                # The app killed mid-answer: the launcher exits non-zero, the bridge with it.
                lost = new_session(client)
                start_run(client, lost, "long 400 delay=0.03")
                _words_so_far(client, lost, 20)
            (app,) = [c for c in psutil.Process(launcher.pid).children() if "reflex" in c.cmdline()]
            everything = psutil.Process(launcher.pid).children(recursive=True)
            app.send_signal(signal.SIGKILL)
            assert launcher.wait(60) != 0
            _, alive = psutil.wait_procs(everything, timeout=30)
            assert not alive, [p.cmdline() for p in alive]

        # The next start: the lost answer is FAILED with the reason; chat goes on.
        with (
            _run_sh(tmp_path, env, port),
            httpx.Client(base_url=url, headers=headers, timeout=60) as client,
        ):
            answer = _wait_status(client, lost, "FAILED")
            assert answer["error"] == BRIDGE_RESTARTED
            _, read = ask(client, lost, "hello after the app crash")
            assert read.last().type == "run_completed", read.types()

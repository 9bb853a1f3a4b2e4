"""Schemathesis against the real app: what the suite's fuzz test
(tests/api/test_schemathesis.py) and the long run (`scripts/fuzz.sh`, which runs
`python -m tests.support.fuzz`) share, and that long run.

Importing this module registers, for every schemathesis run in the process (the schemathesis
CLI imports it through SCHEMATHESIS_HOOKS):
- the check `a_422_names_a_known_field`, which takes the place of schemathesis'
  `positive_data_acceptance` (a schema-valid request may be refused with 422 for what a
  schema cannot say: a blank message, an unknown model; the error must then name that field);
- a filter that drops the failures of a request whose path holds a newline: Reflex's outermost router
  mounts the app with `/(?P<path>.*)`, which matches no newline, so such a path never reaches
  the app (nor its guard) and gets Starlette's plain-text 404 there. Refused, which is right;
  its content type is not ours, so no check of the API's can hold on it.

The long run: `python -m tests.support.fuzz [--seconds 600] [--round 150]` starts the stack
the suite's tests use (fake model, bridge with hermes-agent, the app behind its login, on
SQLite, or on PostgreSQL with AGENT_CHAT_TEST_DB_URL set as test.sh sets it), signs in with
a personal API token and runs the schemathesis CLI in rounds, each with a fresh random seed,
on every operation, all four phases (examples, coverage, fuzzing, stateful along the links
the app declares, agent_chat/api/docs.py), all checks but the one above replaces. It prints
each round's seed, the number of test cases and every failure with its curl reproduction;
its exit status is 1 when any round found a failure.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import schemathesis

# Fields whose schema-valid values can still be wrong (a 422 naming them is right).
SEMANTIC_FIELDS = frozenset(
    {
        *("message", "content", "title", "modelId", "skillFolder", "format", "branch"),
        "messageId",  # editing an answer or regenerating a question: the wrong kind of message
        "file",  # an import: any JSON object fits the schema, only an export of this app is taken
        "name",  # a folder: a blank name, or one another folder has
        "folderId",  # filing a conversation in a folder that does not exist
        "toolProfile",  # a profile the operator did not enable
        "parentMessageId",  # not a message of this conversation's active branch
        "attachmentIds",  # an upload that does not exist, or another person's
        "attachmentId",  # a thumbnail of an attachment that is not a picture
        # a schedule: a cron expression that never runs or runs too often, a zone that does
        # not exist, a preset's time, the conversation to add to, a blank prompt, the limit
        *("prompt", "cron", "timezone", "preset", "sessionId", "schedule"),
        # an MCP server: a blank command or URL, a variable's name, a secret kept that was
        # never stored, include and exclude both, an unknown profile
        *("command", "args", "env", "url", "headers", "exclude", "include", "profiles"),
    }
)

# Operations the fuzzing leaves out, each with why (label as schemathesis writes it).
# Operations that are not in the document at all are pages, not API: `GET /s/{token}` (a
# share link's read-only HTML page) and `GET /api/docs` (Swagger UI).
EXCLUDED: dict[str, str] = {
    # They start the command an administrator gives (or connect where told): fuzzed, they
    # would run random programs on the test machine. tests/api/test_mcp_api.py tests them.
    "POST /api/mcp/test": "runs the given command",
    "POST /api/mcp/servers/{server_id}/test": "runs the stored command",
}

# Checks the long run leaves out (the suite runs schemathesis' default ones), with why.
EXCLUDED_CHECKS: dict[str, str] = {
    "positive_data_acceptance": "replaced by a_422_names_a_known_field (above)",
}


@schemathesis.check
def a_422_names_a_known_field(ctx: Any, response: Any, case: schemathesis.Case) -> bool | None:
    """A schema-valid request refused with 422 names the field that was wrong, and only
    fields whose valid values can still be wrong (`SEMANTIC_FIELDS`)."""
    meta = case.meta
    positive = meta is not None and meta.generation.mode == schemathesis.GenerationMode.POSITIVE
    if not positive or response.status_code != 422:
        return None
    fields = set((response.json().get("error") or {}).get("fields") or {})
    # A link schemathesis infers may fill a path parameter from a nullable field (a
    # conversation's folderId): `None` in the path is no valid request, and refused.
    fields -= {name for name, value in (case.path_parameters or {}).items() if value is None}
    if not fields and response.json()["error"].get("fields"):
        return True
    if not fields or not fields <= SEMANTIC_FIELDS:
        raise AssertionError(
            f"A valid request refused with 422 names {sorted(fields) or 'no field'}, "
            f"not one of the fields a schema cannot check ({', '.join(sorted(SEMANTIC_FIELDS))})"
        )
    return True


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: schemathesis.Case, response: Any) -> bool:
    """Keep every failure but those of a request whose path holds a newline, answered by the
    plain-text 404 from outside the app (see the module's doc). The request is still sent
    (and must be refused); only the failure, which is not the app's, is dropped."""
    url = unquote(str(response.request.url))
    content_type = (response.headers.get("content-type") or [""])[0]
    outside = response.status_code == 404 and content_type.startswith("text/plain")
    return not (outside and "\n" in url)


def stop_every_run(url: str, token: str) -> None:
    """Generated messages start real runs: stop them (the next test starts idle). Generated
    schedules would start more later: they go first."""
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        for schedule in client.get("/api/schedules").json()["schedules"]:
            client.delete(f"/api/schedules/{schedule['id']}")
        deadline = time.monotonic() + 60
        while True:
            sessions = client.get("/api/chat/sessions", params={"limit": 200, "archived": True})
            busy = [s["id"] for s in sessions.json()["sessions"] if s["hasActiveRun"]]
            if not busy:
                return
            assert time.monotonic() < deadline, f"runs still going in {busy}"
            for session_id in busy:
                messages = client.get(f"/api/chat/sessions/{session_id}", params={"logs": False})
                for message in messages.json()["messages"]:
                    if message["status"] == "RUNNING" and message["runId"]:
                        client.post(f"/api/chat/runs/{message['runId']}/stop")
            time.sleep(0.5)


# --- the long run -------------------------------------------------------------------------------


def _admin_token(stack: Any) -> str:
    """The fake model as the default model and a token of the administrator's, as the
    suite's `api_stack_and_token` (tests/support/api.py) makes them."""
    from agent_chat.db import api_tokens
    from agent_chat.db.engine import make_engine, open_session
    from tests.support.accounts import ADMIN_USER
    from tests.support.stack import ensure_fake_model
    from tests.support.users import user_named

    ensure_fake_model(None, stack)
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            admin = user_named(session=session, username=ADMIN_USER)
            return api_tokens.create_token(session=session, user_id=admin, name="fuzz").token
    finally:
        engine.dispose()


def _fresh_seed() -> int:
    return random.SystemRandom().randrange(2**32)


_GENERATED = re.compile(r"(\d+) generated(?:, (\d+) found (\d+) unique failures?)?")


def _round(url: str, token: str, seed: int, seconds: int, cwd: Path) -> tuple[int, int, int]:
    """One schemathesis CLI run, its output passed on as it comes: (exit status, test cases
    generated, distinct failures), the last two as its summary says them."""
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "run",
        f"{url}/api/openapi.json",
        "--header",
        f"Authorization: Bearer {token}",
        "--seed",
        str(seed),
        "--max-time",
        str(seconds),
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--checks",
        "all",
        "--exclude-checks",
        ",".join(EXCLUDED_CHECKS),
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--suppress-health-check",
        "all",
        "--generation-database",
        "none",
        "--no-color",
        *(arg for label in EXCLUDED for arg in ("--exclude-name", label)),
    ]
    root = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "tests.support.fuzz",
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
        "PYTHONUNBUFFERED": "1",
    }
    generated = failures = 0
    with subprocess.Popen(
        # In a folder of its own: the CLI keeps a cache (.schemathesis/) where it runs.
        command,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            if found := _GENERATED.search(line):
                generated, failures = int(found[1]), int(found[3] or 0)
    return process.returncode, generated, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/fuzz.sh", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=600, help="the whole run (600)")
    parser.add_argument("--round", type=int, default=150, help="one seed's share (150)")
    parser.add_argument("--seed", type=int, action="append", help="replay these seeds instead")
    args = parser.parse_args(argv)

    from tests.support.stack import running_stack

    started = time.monotonic()
    results: list[tuple[int, int, int, int]] = []  # seed, exit status, test cases, failures
    with tempfile.TemporaryDirectory(prefix="agent-chat-fuzz.") as folder:
        tmp = Path(folder)
        with running_stack(tmp / "stack", token_delay=0.02) as stack:
            token = _admin_token(stack)
            print(f"fuzz: the app at {stack.url} on {stack.db_url.split(':')[0]}", flush=True)
            seeds = list(args.seed or [])
            while True:
                left = args.seconds - (time.monotonic() - started)
                if args.seed is not None:
                    if not seeds:
                        break
                    seed = seeds.pop(0)
                elif left < 30:
                    break
                else:
                    seed = _fresh_seed()
                seconds = int(min(args.round, left)) if args.seed is None else args.round
                print(f"\nfuzz: round {len(results) + 1}, seed {seed}, {seconds} s", flush=True)
                results.append((seed, *_round(stack.url, token, seed, seconds, tmp)))
                stop_every_run(stack.url, token)
    elapsed = time.monotonic() - started
    print(f"\nfuzz: {len(results)} rounds in {elapsed:.0f} s")
    for seed, status, cases, failures in results:
        verdict = "" if status in (0, 1) else f", schemathesis' exit status {status}"
        print(f"  seed {seed}: {cases} test cases, {failures} distinct failures{verdict}")
    total = sum(cases for _, _, cases, _ in results)
    print(f"  in all: {total} test cases, {sum(f for *_, f in results)} distinct failures")
    return 0 if all(status == 0 for _, status, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())

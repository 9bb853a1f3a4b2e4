"""`agent-chat schedule …` against the real stack: added with a cron expression and with each
preset, listed (when in words, the next run in local time), paused, resumed, run now, its
history, deleted; a refusal is the API's sentence on one line with exit status 1, a bad
argument a usage error (exit 2) before any request. One test runs the command as a process,
the others call its `main` in this process (the same code, without a Python start each).
The default zone is the machine's: TZ, /etc/localtime, else UTC."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_chat.cli.__main__ import main
from agent_chat.cli.schedule import local_zone
from tests.cli.runner import Cli
from tests.support.api import api_client, wait_idle
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

YEARLY = "0 9 1 1 *"  # far from now: nothing fires by itself during the tests


@pytest.fixture
def client(api_stack: Stack, api_token: str) -> Iterator[httpx.Client]:
    """The API, to check what the CLI did; no schedule outlives its test (the stack fires
    due ones every 15 s)."""
    with api_client(api_stack, api_token) as client:
        yield client
        for row in client.get("/api/schedules").json()["schedules"]:
            client.delete(f"/api/schedules/{row['id']}")


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process on Berlin time (TZ, as a person there has it)."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def run(cli: Cli, capsys: pytest.CaptureFixture[str], berlin: None):
    """`agent-chat ARGS` in this process: (exit status, stdout, stderr)."""

    def call(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            status = main(["--url", cli.stack.url, "--token", cli.token, *args])
        except SystemExit as exc:  # argparse's usage errors
            status = int(exc.code or 0)
        out, err = capsys.readouterr()
        return status, out, err

    return call


def _id(out: str) -> int:
    found = re.match(r"schedule (\d+): ", out)
    assert found, out
    return int(found[1])


def test_the_command_adds_lists_and_deletes(cli: Cli, client: httpx.Client) -> None:
    added = cli.run("schedule", "add", "Morning digest", "--cron", "0 9 * * 1-5",
                    "--tz", "Europe/Berlin", "--title", "Digest")  # fmt: skip
    assert added.returncode == 0, added.stderr
    ident = _id(added.stdout)
    assert "Digest · Weekdays at 09:00 (Europe/Berlin) · next run " in added.stdout
    row = client.get(f"/api/schedules/{ident}").json()
    assert (row["prompt"], row["cron"], row["timezone"]) == (
        "Morning digest", "0 9 * * 1-5", "Europe/Berlin",
    )  # fmt: skip
    listed = cli.run("schedule", "list")  # piped: tab-separated
    assert listed.returncode == 0, listed.stderr
    [line] = [x for x in listed.stdout.splitlines() if x.startswith(f"{ident}\t")]
    cells = line.split("\t")
    assert cells[1:3] == ["Digest", "Weekdays at 09:00 (Europe/Berlin)"] and cells[4] == ""
    deleted = cli.run("schedule", "delete", str(ident))
    assert deleted.returncode == 0 and client.get(f"/api/schedules/{ident}").status_code == 404


def test_presets_and_the_default_zone(run, client: httpx.Client) -> None:  # noqa: ANN001
    for args, cron in (
        (("--daily", "07:30"), "30 7 * * *"),
        (("--weekdays", "9:00"), "0 9 * * 1-5"),
        (("--weekly", "fri", "17:45"), "45 17 * * 5"),
        (("--weekly", "Sunday", "08:00"), "0 8 * * 0"),
        (("--hourly", "15"), "15 * * * *"),
    ):
        status, out, err = run("schedule", "add", "Check the build", *args)
        assert status == 0, err
        row = client.get(f"/api/schedules/{_id(out)}").json()
        assert (row["cron"], row["timezone"]) == (cron, "Europe/Berlin")  # TZ, no --tz


def test_pause_resume_run_and_history(run, client: httpx.Client) -> None:  # noqa: ANN001
    status, out, err = run("schedule", "add", "Scheduled from the cli", "--cron", YEARLY,
                           "--tz", "UTC", "--title", "Cli run", "--model", "Fake model")  # fmt: skip
    assert status == 0, err
    ident = str(_id(out))
    status, out, _ = run("schedule", "pause", ident)
    assert (status, out.strip()) == (0, f"schedule {ident}: paused")
    status, out, _ = run("schedule", "list")
    [line] = [x for x in out.splitlines() if x.startswith(f"{ident}\t")]
    assert line.split("\t")[3:] == ["", "paused"]
    status, out, _ = run("schedule", "resume", ident)
    # 1 January 09:00 UTC is 10:00 in Berlin (TZ): the next run in local time.
    assert status == 0 and re.fullmatch(rf"schedule {ident}: next run \w+ \d+-01-01 10:00\n", out)

    status, out, err = run("schedule", "run", ident)
    assert status == 0, err
    session_id = re.fullmatch(r"session (\S+) · message \d+\n", out)[1]  # type: ignore[index]
    wait_idle(client, session_id)
    status, out, err = run("schedule", "history", ident)
    assert status == 0, err
    [line] = out.splitlines()
    assert line.split("\t")[1:] == ["run now", "SUCCESS", session_id]


def test_refusals_say_why_on_one_line(run, client: httpx.Client) -> None:  # noqa: ANN001
    status, out, err = run("schedule", "add", "x", "--cron", "*/2 * * * *", "--tz", "UTC")
    assert status == 1 and out == ""
    assert err.strip() == (
        "agent-chat: cron: “*/2 * * * *” runs 2 minutes apart; a schedule may run at most "
        "every 5 minutes. (HTTP 422)"
    )
    status, _, err = run("schedule", "add", "x", "--daily", "09:00", "--tz", "Mars/Base")
    assert status == 1 and "“Mars/Base” is not a time zone" in err and len(err.splitlines()) == 1
    status, _, err = run("schedule", "add", "x", "--cron", YEARLY, "--model", "no such model")
    assert status == 1 and "There is no model 'no such model'" in err
    for action in ("pause", "resume", "run", "delete", "history"):
        status, _, err = run("schedule", action, "2000000000")
        assert status == 1, action
        assert err.strip() == "agent-chat: Schedule 2000000000 does not exist (HTTP 404)"
    for args in (("pause", "abc"), ("add", "x", "--daily", "9h"), ("add", "x"),
                 ("add", "x", "--hourly", "60"), ("add", "x", "--weekly", "someday", "09:00"),
                 ("add", "x", "--daily", "09:00", "--hourly", "5")):  # fmt: skip
        status, _, err = run("schedule", *args)
        assert status == 2, (args, err)
    assert client.get("/api/schedules").json()["schedules"] == []

    session_id = client.post("/api/chat/sessions", json={}).json()["sessionId"]
    status, out, err = run("schedule", "add", "x", "--cron", YEARLY, "--append", session_id)
    assert status == 0, err
    client.delete(f"/api/chat/sessions/{session_id}")
    status, _, err = run("schedule", "run", str(_id(out)))
    assert status == 1
    assert "the firing could not start: The conversation this schedule adds to was deleted" in err


def test_the_machines_zone(tmp_path: Path) -> None:
    none = tmp_path / "missing"
    assert local_zone({"TZ": "America/New_York"}, none, none) == "America/New_York"
    assert local_zone({"TZ": ":Asia/Tokyo"}, none, none) == "Asia/Tokyo"
    assert local_zone({"TZ": "/usr/share/zoneinfo/Europe/Paris"}, none, none) == "Europe/Paris"
    link = tmp_path / "localtime"
    link.symlink_to("/usr/share/zoneinfo/posix/Europe/Lisbon")
    assert local_zone({}, link, none) == "Europe/Lisbon"
    assert local_zone({"TZ": "CET-1CEST"}, link, none) == "Europe/Lisbon"  # not a name
    named = tmp_path / "timezone"
    named.write_text("Africa/Nairobi\n")
    assert local_zone({}, none, named) == "Africa/Nairobi"
    named.write_text("Somewhere\n")
    assert local_zone({}, none, named) == "UTC"
    assert local_zone({}, none, none) == "UTC"

"""Scheduled runs over HTTP (`/api/schedules`, api/schedules.py) against the real stack:
created with a cron expression or a preset, refused field by field with nothing saved, changed,
paused, resumed, run now (a firing that cannot start is still 201, with its reason), its
history, deleted; another person's schedule is the 404 of a missing one on every route."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import httpx
import pytest

from tests.support.api import api_client, member_with_token, new_session, wait_idle
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

BOB, BOB_PASSWORD = "bob-schedules", "bob's long schedule password"
MISSING = 2_000_000_000
# Far from now, so no schedule of these tests fires by itself while they run.
YEARLY = "0 9 1 1 *"


@pytest.fixture(autouse=True)
def no_schedules_left(client: httpx.Client) -> Iterator[None]:
    """The stack fires due schedules every 15 s: none of these outlives its test."""
    yield
    for row in client.get("/api/schedules").json()["schedules"]:
        client.delete(f"/api/schedules/{row['id']}")


@pytest.fixture(scope="module")
def bob(api_stack: Stack) -> Iterator[httpx.Client]:
    """A second person's API client."""
    _, token = member_with_token(api_stack, BOB, BOB_PASSWORD)
    with api_client(api_stack, token) as client:
        yield client


def _create(client: httpx.Client, **body: object) -> dict:
    response = client.post("/api/schedules", json={"prompt": "Summarise", **body})
    assert response.status_code == 201, response.text
    return response.json()


def _utc(stamp: str) -> datetime:
    assert stamp.endswith("Z"), stamp
    return datetime.fromisoformat(stamp)


def test_created_with_cron_and_with_presets(client: httpx.Client) -> None:
    made = _create(
        client, prompt="Summarise the news", title="Digest", cron="0 9 * * 1-5",
        timezone="Europe/Berlin",
    )  # fmt: skip
    assert made["title"] == "Digest" and made["cron"] == "0 9 * * 1-5"
    assert made["description"] == "Weekdays at 09:00" and made["timezone"] == "Europe/Berlin"
    assert made["mode"] == "new" and made["sessionId"] is None and not made["paused"]
    assert made["modelId"] is None and made["skillFolder"] is None and made["toolProfile"] is None
    due = _utc(made["nextRunAt"])
    assert due.weekday() < 5 and (due.hour, due.minute) in {(7, 0), (8, 0)}  # 09:00 in Berlin
    _utc(made["createdAt"])
    assert client.get(f"/api/schedules/{made['id']}").json() == made
    assert made in client.get("/api/schedules").json()["schedules"]

    for preset, cron, words in (
        ({"kind": "weekly", "weekday": 0, "time": "07:30"}, "30 7 * * 1", "Every Monday at 07:30"),
        ({"kind": "weekly", "weekday": 6, "time": "7:05"}, "5 7 * * 0", "Every Sunday at 07:05"),
        ({"kind": "daily", "time": "18:00"}, "0 18 * * *", "Every day at 18:00"),
        ({"kind": "weekdays"}, "0 9 * * 1-5", "Weekdays at 09:00"),
        ({"kind": "hourly", "minute": 15}, "15 * * * *", "Every hour at :15"),
    ):
        row = _create(client, prompt="Check the\nbuild", preset=preset, timezone="UTC")
        assert (row["cron"], row["description"]) == (cron, words)
        assert row["title"] == "Check the build"  # none given: the prompt's first words


BAD = [
    pytest.param({"cron": "0 9 * *"}, "cron", id="four-fields"),
    pytest.param({"cron": "0 25 * * *"}, "cron", id="no-hour-25"),
    pytest.param({"cron": "*/2 * * * *"}, "cron", id="too-often"),
    pytest.param({"cron": "0 9 31 2 *"}, "cron", id="never"),
    pytest.param({"timezone": "Mars/Olympus_Mons"}, "timezone", id="no-such-zone"),
    pytest.param({"modelId": 999_999}, "modelId", id="unknown-model"),
    pytest.param({"toolProfile": "root-shell"}, "toolProfile", id="profile-not-enabled"),
    pytest.param({"prompt": "   "}, "prompt", id="blank-prompt"),
    pytest.param({"preset": {"kind": "daily"}}, "cron", id="cron-and-preset"),
    pytest.param({"cron": None}, "cron", id="neither-cron-nor-preset"),
    pytest.param({"mode": "append"}, "sessionId", id="append-to-nothing"),
    pytest.param(
        {"mode": "append", "sessionId": "00000000-0000-4000-8000-000000000000"},
        "sessionId",
        id="append-to-a-missing-conversation",
    ),
    pytest.param({"sessionId": "whatever"}, "sessionId", id="session-without-append"),
    pytest.param(
        {"preset": {"kind": "daily", "time": "25:00"}, "cron": None},
        "preset.time",
        id="preset-hour-25",
    ),  # fmt: skip
    pytest.param({"preset": {"kind": "yearly"}, "cron": None}, "preset.kind", id="preset-kind"),
    pytest.param({"colour": "red"}, "colour", id="unknown-field"),
]


@pytest.mark.parametrize(("change", "field"), BAD)
def test_a_refused_value_is_422_naming_its_field_and_nothing_is_saved(
    client: httpx.Client, change: dict, field: str
) -> None:
    before = client.get("/api/schedules").json()["schedules"]
    body = {"prompt": "Summarise", "cron": YEARLY, "timezone": "Europe/Berlin", **change}
    created = client.post("/api/schedules", json=body)
    assert created.status_code == 422, created.text
    error = created.json()["error"]
    assert field in error["fields"], error
    assert error["message"]
    assert client.get("/api/schedules").json()["schedules"] == before


def test_another_persons_schedule_is_404_on_every_route(
    client: httpx.Client, bob: httpx.Client
) -> None:
    mine = _create(client, cron=YEARLY, timezone="UTC", title="Alice's")
    for ident in (mine["id"], MISSING):
        for method, path, kw in (
            ("GET", "", {}),
            ("PATCH", "", {"json": {"title": "Bob's now"}}),
            ("DELETE", "", {}),
            ("POST", "/pause", {}),
            ("POST", "/resume", {}),
            ("POST", "/run", {}),
            ("GET", "/runs", {}),
        ):
            answer = bob.request(method, f"/api/schedules/{ident}{path}", **kw)
            assert answer.status_code == 404, (method, path, answer.text)
            assert answer.json()["error"]["message"] == f"Schedule {ident} does not exist"
    assert bob.get("/api/schedules").json()["schedules"] == []
    assert client.get(f"/api/schedules/{mine['id']}").json() == mine  # untouched
    assert client.get(f"/api/schedules/{mine['id']}/runs").json()["runs"] == []


def test_changed_all_or_nothing(client: httpx.Client) -> None:
    made = _create(client, cron=YEARLY, timezone="Europe/Berlin", title="Digest")
    path = f"/api/schedules/{made['id']}"
    changed = client.patch(
        path, json={"title": "Evening", "preset": {"kind": "daily", "time": "18:30"}}
    )
    assert changed.status_code == 200, changed.text
    row = changed.json()
    assert (row["title"], row["cron"], row["description"]) == (
        "Evening", "30 18 * * *", "Every day at 18:30",
    )  # fmt: skip
    assert _utc(row["nextRunAt"]) < _utc(made["nextRunAt"])  # daily comes before 1 January
    assert row["prompt"] == made["prompt"] and row["timezone"] == "Europe/Berlin"

    for body, field in (
        ({"title": "Never", "cron": "0 9 30 2 *"}, "cron"),
        ({"title": "Nowhere", "timezone": "Atlantis/Capital"}, "timezone"),
        ({"modelId": 999_999, "prompt": "other"}, "modelId"),
        ({"sessionId": "00000000-0000-4000-8000-000000000000"}, "sessionId"),
        ({"cron": "0 9 * * *", "preset": {"kind": "hourly"}}, "cron"),
    ):
        refused = client.patch(path, json=body)
        assert refused.status_code == 422, refused.text
        assert field in refused.json()["error"]["fields"]
    assert client.get(path).json() == row


def test_paused_resumed_run_now_and_its_history(client: httpx.Client) -> None:
    made = _create(client, prompt="Scheduled hello", cron=YEARLY, timezone="UTC", title="Hi")
    path = f"/api/schedules/{made['id']}"
    paused = client.post(f"{path}/pause")
    assert paused.status_code == 200, paused.text
    assert paused.json()["paused"] and paused.json()["nextRunAt"] is None
    resumed = client.post(f"{path}/resume").json()
    assert not resumed["paused"] and resumed["nextRunAt"] == made["nextRunAt"]

    fired = client.post(f"{path}/run")
    assert fired.status_code == 201, fired.text
    firing = fired.json()
    assert firing["error"] is None and firing["manual"] and not firing["late"]
    assert firing["sessionId"] and firing["messageId"]
    wait_idle(client, firing["sessionId"])
    conversation = client.get(f"/api/chat/sessions/{firing['sessionId']}").json()
    assert conversation["session"]["title"].startswith("Hi · ")
    assert [m["content"] for m in conversation["messages"]][:1] == ["Scheduled hello"]
    [run] = client.get(f"{path}/runs").json()["runs"]
    assert run["id"] == firing["id"] and run["status"] == "SUCCESS"
    assert run["sessionId"] == firing["sessionId"] and run["messageId"] == firing["messageId"]
    _utc(run["dueAt"]), _utc(run["startedAt"])
    assert client.get(path).json()["nextRunAt"] == made["nextRunAt"]  # its time stays


def test_a_firing_that_cannot_start_is_201_with_its_reason(client: httpx.Client) -> None:
    session_id = new_session(client, title="Where the schedule adds")
    made = _create(client, cron=YEARLY, timezone="UTC", mode="append", sessionId=session_id)
    assert made["mode"] == "append" and made["sessionId"] == session_id
    assert client.delete(f"/api/chat/sessions/{session_id}").status_code == 204
    path = f"/api/schedules/{made['id']}"
    assert client.get(path).json()["sessionId"] is None

    fired = client.post(f"{path}/run")
    assert fired.status_code == 201, fired.text
    firing = fired.json()
    assert firing["error"] == "The conversation this schedule adds to was deleted."
    assert firing["sessionId"] is None and firing["messageId"] is None
    [run] = client.get(f"{path}/runs").json()["runs"]
    assert run["error"] == firing["error"] and run["status"] is None


def test_deleted(client: httpx.Client) -> None:
    made = _create(client, cron=YEARLY, timezone="UTC")
    path = f"/api/schedules/{made['id']}"
    deleted = client.delete(path)
    assert deleted.status_code == 204 and not deleted.content
    for method, suffix in (("GET", ""), ("DELETE", ""), ("GET", "/runs"), ("POST", "/run")):
        assert client.request(method, path + suffix).status_code == 404
    assert made["id"] not in [r["id"] for r in client.get("/api/schedules").json()["schedules"]]

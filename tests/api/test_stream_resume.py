"""Resuming a run's SSE stream with `Last-Event-ID`: in the middle of a live run, inside a
stored row that merged several deltas, and across a restart of the web app. Every time the
text read before plus the text read after is the answer: nothing missing, nothing doubled."""

from __future__ import annotations

import httpx
import pytest

from tests.support.api import api_client, new_session, read_stream, start_run
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e


def _words(count: int) -> str:
    return "".join(f"word{i} " for i in range(1, count + 1))


def _assert_ids_continue(before: list[int], after: list[int], resumed_at: int) -> None:
    assert all(i > resumed_at for i in after), "nothing at or before the resume point again"
    assert after == sorted(set(after)), "each id once, in order"
    assert before[-1] == resumed_at


def test_resume_in_the_middle_of_a_live_run(client: httpx.Client) -> None:
    session_id = new_session(client)
    run = start_run(client, session_id, "long 80 delay=0.04")
    first = read_stream(client, run["runId"], max_events=12)
    assert first.last().type != "run_completed", "the run is still going"
    resumed_at = first.ids()[-1]
    rest = read_stream(client, run["runId"], last_event_id=resumed_at)
    assert rest.last().type == "run_completed"
    _assert_ids_continue(first.ids(), rest.ids(), resumed_at)
    assert (
        (first.text() + rest.text()).strip() == rest.last().data["final_text"] == _words(80).strip()
    )
    # The query parameter does the same (for clients that cannot set headers).
    by_query = read_stream(client, run["runId"], query=resumed_at)
    assert by_query.text() == rest.text()


def test_resume_inside_a_stored_merged_row(client: httpx.Client) -> None:
    session_id = new_session(client)
    run = start_run(client, session_id, "long 60 delay=0.03")
    live = read_stream(client, run["runId"])  # per-seq events, as the bridge sent them
    text_of = {e.id: e.data["text"] for e in live.events if e.type == "text_delta"}
    logs = client.get(f"/api/chat/sessions/{session_id}").json()["messages"][1]["logs"]
    merged = [r for r in logs if r["type"] == "text_delta" and r["seq"] > r["seqFrom"]]
    assert merged, "consecutive deltas were stored as merged rows"
    row = max(merged, key=lambda r: r["seq"] - r["seqFrom"])
    for resume_at in range(row["seqFrom"], row["seq"]):  # every point inside the row
        rest = read_stream(client, run["runId"], last_event_id=resume_at)
        expected = "".join(t for seq, t in sorted(text_of.items()) if seq > resume_at)
        assert rest.text() == expected, (
            f"resumed after {resume_at} in {row['seqFrom']}..{row['seq']}"
        )
        assert all(i > resume_at for i in rest.ids())
        assert rest.last().type == "run_completed"
    whole = read_stream(client, run["runId"])
    assert whole.text() == live.text()
    assert live.text().strip() == live.last().data["final_text"]


def test_resume_across_a_restart_of_the_web_app(
    client: httpx.Client, api_stack: Stack, api_token: str
) -> None:
    session_id = new_session(client)
    run = start_run(client, session_id, "long 300 delay=0.05")
    first = read_stream(client, run["runId"], max_events=25)
    resumed_at = first.ids()[-1]
    api_stack.stop_app()  # the run goes on in the bridge
    api_stack.start_app()
    with api_client(api_stack, api_token, timeout=90) as fresh:
        rest = read_stream(fresh, run["runId"], last_event_id=resumed_at)
        assert rest.last().type == "run_completed", rest.types()[-3:]
        _assert_ids_continue(first.ids(), rest.ids(), resumed_at)
        combined = (first.text() + rest.text()).strip()
        assert combined == rest.last().data["final_text"] == _words(300).strip()
        detail = fresh.get(f"/api/chat/sessions/{session_id}").json()
        assert detail["messages"][1]["content"] == _words(300).strip()

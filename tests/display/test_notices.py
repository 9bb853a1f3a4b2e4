"""What a tab tells its person about the conversations they are not looking at."""

from __future__ import annotations

from agent_chat.display.notices import notices


def row(uuid: str, state: str, title: str = "") -> dict:
    return {"uuid": uuid, "title": title or uuid, "state": state, "archived": False}


def test_the_first_look_only_records_and_counts() -> None:
    found, count, seen = notices(None, [row("a", "waiting"), row("b", "unread")], "c")
    assert found == [] and count == 2 and seen == {"a": "waiting", "b": "unread"}


def test_finishing_and_asking_elsewhere_notify_but_not_in_the_shown_conversation() -> None:
    before = {"a": "running", "b": "running", "c": "running", "d": ""}
    rows = [row("a", "unread", "Plan"), row("b", "waiting", "Ask"), row("c", ""), row("d", "")]
    found, count, _ = notices(before, rows, "c")
    assert [(n.title, n.body, n.session_uuid) for n in found] == [
        ("An answer is ready", "Plan", "a"),
        ("The agent needs you", "Ask", "b"),
    ]
    assert count == 2
    # The conversation on screen never notifies, and nothing changed means nothing new.
    assert notices({"a": "running"}, [row("a", "unread")], "a")[0] == []
    assert notices({"a": "unread"}, [row("a", "unread")], "b")[0] == []


def test_a_scheduled_conversation_that_appears_answered_notifies_once() -> None:
    """A schedule's run shorter than the gap between two looks: its conversation is new and
    already unread. Any other conversation appearing (more loaded, archived shown) does not."""
    landed = {**row("s", "unread", "Morning hello · 5 Dec"), "scheduled": True}
    old_archived = {**row("o", "unread"), "scheduled": True, "archived": True}
    found, count, seen = notices({"a": ""}, [landed, old_archived, row("n", "unread")], "a")
    assert [(n.title, n.body) for n in found] == [("An answer is ready", "Morning hello · 5 Dec")]
    assert notices(seen, [landed], "a")[0] == []  # told once

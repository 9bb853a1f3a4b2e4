"""The composer's hidden field of uploaded ids (state/page_scripts.py:attached_ids): what a
raw client may put there is either a short list of ASCII ids or refused (None), never an
exception; the service then checks whose they are."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent_chat.state.page_scripts import attached_ids, clear_composer, edited_ids, kept_ids


def test_the_ids_are_read_in_order() -> None:
    assert attached_ids({"attachments": "12,7, 30"}) == [12, 7, 30]
    assert attached_ids({"message": "hi"}) == []
    assert attached_ids({"attachments": "  "}) == []


def test_anything_else_is_refused() -> None:
    for raw in ("1,,2", "1;2", "-1", "1.5", "١٢", "x", "9" * 12, ",".join(["1"] * 101)):
        assert attached_ids({"attachments": raw}) is None, raw


@given(st.one_of(st.text(max_size=300), st.integers(), st.none(), st.lists(st.integers())))
def test_no_input_raises(raw: object) -> None:
    found = attached_ids({"attachments": raw})
    assert found is None or all(isinstance(i, int) and i >= 0 for i in found)


def test_clearing_names_the_sent_ids() -> None:
    script = str(clear_composer("hello", [3, 4]))
    assert "agentChatAttach.sent([3, 4])" in script


def test_an_edit_keeps_the_ticked_files() -> None:
    assert kept_ids({"text": "hi"}) is None  # no files listed: keep what it has
    assert kept_ids({"files_listed": "1"}) == []  # all unticked
    form = {"files_listed": "1", "keep-7": "7", "keep-3": "3", "keep-x": "../1", "text": "t"}
    assert kept_ids(form) == [7, 3]


def test_an_edit_sends_the_kept_files_then_the_added_ones() -> None:
    assert edited_ids({"text": "hi"}, []) is None  # nothing listed, nothing added: keep
    assert edited_ids({"text": "hi"}, [9]) == [9]  # a message without files gets one
    assert edited_ids({"files_listed": "1"}, []) == []  # all unticked, none added
    form = {"files_listed": "1", "keep-7": "7", "keep-3": "3"}
    assert edited_ids(form, [5, 7]) == [7, 3, 5]  # an upload that is a kept one goes once

"""Tool results the bridge cut are still read by field, and the cut stays visible."""

from __future__ import annotations

import json

from agent_chat.bridge.truncation import cut_text
from agent_chat.display.cut_json import loads_cut

RESULT = json.dumps(
    {
        "output": 'line "one"\n\\ back\tslash é ☃ \u2028 end' * 3,
        "exit_code": 0,
        "error": None,
        "nested": [1, 2.5, True, {"a": "b", "c": [None, "x"]}],
        "last": "value",
    }
)


def test_whole_json_is_read_as_it_is() -> None:
    assert loads_cut(RESULT) == (json.loads(RESULT), "")


def test_not_json_and_not_cut_gives_nothing() -> None:
    assert loads_cut("Error: no such tool") == (None, "")
    assert loads_cut("") == (None, "")


def test_every_cut_position_of_ascii_and_unicode_json_gives_an_object() -> None:
    for ensure_ascii in (True, False):
        doc = json.dumps(json.loads(RESULT), ensure_ascii=ensure_ascii)
        for limit in range(1, len(doc)):
            value, marker = loads_cut(cut_text(doc, limit))
            assert isinstance(value, dict), (limit, doc[:limit])
            assert marker.startswith("… [truncated ")
            # What was read is a prefix of the original, field by field.
            original = json.loads(doc)
            for key, got in value.items():
                if isinstance(got, str) and marker in got:
                    assert original[key].startswith(got.removesuffix(marker))
                elif got is not None and key != "nested":
                    assert got == original[key], (limit, key)


def test_the_marker_lands_in_the_string_that_was_cut() -> None:
    doc = json.dumps({"output": "x" * 100, "exit_code": 2})
    value, marker = loads_cut(cut_text(doc, 40))
    assert value == {"output": "x" * 28 + marker}
    assert marker == f"… [truncated {len(doc) - 40} chars]"


def test_a_cut_scalar_or_garbage_with_a_marker_gives_none_but_the_marker() -> None:
    value, marker = loads_cut(cut_text('"just a long string"', 5))
    assert value is None and marker
    value, marker = loads_cut("}}} … [truncated 3 chars]")
    assert value is None and marker

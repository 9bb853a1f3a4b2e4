"""Reading a tool result the bridge may have cut (bridge/truncation.py): hermes returns JSON
text, and a result over the limit arrives as its head plus `… [truncated N chars]`, which
is no longer JSON. `loads_cut` closes the head so what was sent can still be shown by
field, and puts the marker where the cut happened (inside the string it cut, usually the
output), so the page keeps saying that something is missing.
"""

from __future__ import annotations

import json
import re
from typing import Any

CUT_MARKER = re.compile(r"… \[truncated \d+ chars\]$")
_PARTIAL_LITERAL = re.compile(r"[A-Za-z0-9.+\-]+$")
_PARTIAL_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{0,3})?$")


def loads_cut(text: str) -> tuple[Any, str]:
    """`(value, marker)`: the parsed JSON and "" when `text` is whole JSON; the closed head
    and the marker when it was cut; `(None, marker or "")` when nothing can be read."""
    try:
        return json.loads(text), ""
    except (TypeError, ValueError):
        pass
    match = CUT_MARKER.search(text or "")
    if not match:
        return None, ""
    marker = match.group(0)
    closed = _close(text[: match.start()], marker)
    if closed is None:
        return None, marker
    try:
        return json.loads(closed), marker
    except ValueError:
        return None, marker


def _close(head: str, marker: str) -> str | None:
    """`head` (the start of a JSON document) made whole: the open string ends with the
    marker, a dangling key gets null, open arrays and objects are closed."""
    stack: list[str] = []  # "{" or "["
    expect_key: list[bool] = []  # per open object: the next string is a key
    in_string = escaped = False
    string_is_key = False
    for char in head:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
            string_is_key = bool(stack and stack[-1] == "{" and expect_key[-1])
        elif char in "{[":
            stack.append(char)
            expect_key.append(char == "{")
        elif char in "}]":
            if not stack:
                return None
            stack.pop()
            expect_key.pop()
        elif char == ":" and stack and stack[-1] == "{":
            expect_key[-1] = False
        elif char == "," and stack and stack[-1] == "{":
            expect_key[-1] = True
    if not stack:
        return None  # a cut scalar: nothing to show by field
    text = head
    if in_string:
        text = _PARTIAL_ESCAPE.sub("", text) if _ends_in_escape(text) else text
        text += json.dumps(marker, ensure_ascii=False)[1:]  # the marker, then the quote
        if string_is_key:
            text += ":null"
    else:
        text = _PARTIAL_LITERAL.sub("", text.rstrip()).rstrip()
        if text.endswith(","):
            text = text[:-1]
        elif text.endswith(":"):
            text += "null"
        elif text.endswith('"') and stack[-1] == "{" and expect_key[-1] is False:
            pass  # a complete value
        elif text.endswith('"') and stack[-1] == "{":
            text += ":null"  # a key whose colon was cut
    closers = {"{": "}", "[": "]"}
    return text + "".join(closers[c] for c in reversed(stack))


def _ends_in_escape(text: str) -> bool:
    """Whether `text` (inside a string) ends in an unfinished escape: an odd run of
    backslashes, or `\\u` with fewer than four hex digits."""
    match = re.search(r"(\\+)(u[0-9a-fA-F]{0,3})?$", text)
    if not match:
        return False
    return len(match.group(1)) % 2 == 1

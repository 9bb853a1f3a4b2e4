"""Diff and excerpt lines for the thinking panel (live/tool_views.py): every line a kind,
an optional line number and its text. Plain text; capped with a visible "cut" line."""

from __future__ import annotations

import difflib
import re
from typing import TypedDict

DIFF_LINES = 400  # lines of one diff shown; the rest is counted in a "cut" line
EXCERPT_LINES = 40  # lines of a read_file result shown
_BRIDGE_CUT = re.compile(r"… \[truncated \d+ chars\]")
_NUMBERED = re.compile(r"^\s*(\d+)\|(.*)$")
# hermes names files in its diffs by absolute path ("--- a//data/workspaces/<uuid>/x.py"):
# inside a conversation's folder the path from there on says it all.
_WORKSPACE_HEADER = re.compile(
    r"^(--- |\+\+\+ )(?:[ab]/)?/\S*?/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/"
)


class DiffLine(TypedDict):
    kind: str  # add | del | ctx | hunk | file | cut
    num: str  # a line number ("" in diffs)
    text: str


def _line(kind: str, text: str, num: str = "") -> DiffLine:
    if _BRIDGE_CUT.search(text):
        kind = "cut"  # the bridge cut the text here: the marker stays visible
    return DiffLine(kind=kind, num=num, text=text)


def cut_lines(lines: list[DiffLine], limit: int = DIFF_LINES) -> list[DiffLine]:
    if len(lines) <= limit:
        return lines
    hidden = len(lines) - limit
    more = f"… {hidden} more line{'s' if hidden != 1 else ''} not shown"
    return [*lines[:limit], DiffLine(kind="cut", num="", text=more)]


def content_lines(content: str) -> list[DiffLine]:
    """A new file's content as added lines."""
    return cut_lines([_line("add", "+" + text) for text in content.splitlines()])


def unified_lines(diff: str) -> list[DiffLine]:
    """A unified diff's lines, each with its kind."""
    lines: list[DiffLine] = []
    for text in diff.splitlines():
        if text.startswith(("--- ", "+++ ")):
            short = _WORKSPACE_HEADER.sub(
                lambda m: m.group(1) + "ab"[m.group(1) == "+++ "] + "/", text
            )
            lines.append(_line("file", short))
        elif text.startswith("@@"):
            lines.append(_line("hunk", text))
        elif text.startswith("+"):
            lines.append(_line("add", text))
        elif text.startswith("-"):
            lines.append(_line("del", text))
        else:
            lines.append(_line("ctx", text))
    return cut_lines(lines)


def diff_of(before: str, after: str, path: str, *, headers: bool = True) -> list[DiffLine]:
    """The unified diff from `before` to `after` (headers name `path`)."""
    diff = difflib.unified_diff(
        before.splitlines(),
        after.splitlines(),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        lineterm="",
        n=3,
    )
    lines = list(diff)
    if not headers:  # a change not applied yet: its place in the file is not known
        lines = [line for line in lines if not line.startswith(("--- ", "+++ ", "@@"))]
    return unified_lines("\n".join(lines))


def patch_text_lines(patch: str) -> list[DiffLine]:
    """A V4A patch (hermes' `patch` mode) before hermes applied it."""
    lines: list[DiffLine] = []
    for text in patch.splitlines():
        if text.strip() in ("*** Begin Patch", "*** End Patch"):
            continue
        if text.startswith("*** "):
            lines.append(_line("file", text[4:]))
        elif text.startswith("@@"):
            lines.append(_line("hunk", text))
        elif text.startswith("+"):
            lines.append(_line("add", text))
        elif text.startswith("-"):
            lines.append(_line("del", text))
        else:
            lines.append(_line("ctx", text))
    return cut_lines(lines)


def excerpt_lines(content: str, total: int | None) -> tuple[list[DiffLine], int, int, str]:
    """read_file's `N|text` lines: (the first EXCERPT_LINES as numbered lines, the first and
    last line number shown, the whole file's text when these are all of its lines, else "")."""
    numbered: list[tuple[int, str]] = []
    plain: list[str] = []
    for text in content.splitlines():
        match = _NUMBERED.match(text)
        if match:
            numbered.append((int(match.group(1)), match.group(2)))
        else:
            plain.append(text)
    if not numbered:  # not hermes' format: the text as it came
        lines = cut_lines([_line("ctx", text) for text in plain], EXCERPT_LINES)
        return lines, 0, 0, ""
    ends_with_newline = False
    if total is not None and numbered[-1][0] == total + 1 and not numbered[-1][1]:
        numbered.pop()  # hermes numbers the empty line after the final newline
        ends_with_newline = True
    shown = numbered[:EXCERPT_LINES]
    lines = [_line("ctx", text, str(num)) for num, text in shown]
    if len(numbered) > EXCERPT_LINES:
        lines = cut_lines([*lines, *([_line("ctx", "")] * (len(numbered) - EXCERPT_LINES))],
                          EXCERPT_LINES)  # fmt: skip
    whole = ""
    complete = total is not None and [n for n, _ in numbered] == list(range(1, total + 1))
    if complete and not any(_BRIDGE_CUT.search(t) for _, t in numbered):
        whole = "\n".join(t for _, t in numbered) + ("\n" if ends_with_newline else "")
    return lines, shown[0][0], shown[-1][0], whole

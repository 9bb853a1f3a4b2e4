"""Tool calls shown as what they are, in plain Python: a call's arguments and
result (hermes' JSON text, maybe cut by the bridge) shaped for the thinking panel.

- terminal: the command and its output as a console block, with the exit code;
- write_file, patch: the path and a diff (a write whose earlier content this run saw is
  diffed against it; otherwise the content shows as added lines);
- read_file: the path and an excerpt with line numbers;
- execute_code: the code (highlighted) and its output;
- anything else: `generic` (the panel shows arguments and result as JSON); an MCP tool's
  pictures by name (`images`: common/tool_images.py), loaded only when asked.

Everything here is text; the page never renders it as HTML. Long texts are cut with a
visible line saying how much is missing, on top of what the bridge cut already.
`shape_calls` shapes one run's calls in order (live and replayed runs alike, so a reload
shows the same); `ShapeCache` keeps shaped calls a live feed has seen unchanged.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from agent_chat.common.tool_images import names_in
from agent_chat.display.cut_json import CUT_MARKER, loads_cut
from agent_chat.display.diff_lines import (
    DiffLine,
    content_lines,
    cut_lines,
    diff_of,
    excerpt_lines,
    patch_text_lines,
    unified_lines,
)
from agent_chat.display.highlight import Token, tokens
from agent_chat.protocol.reducer import ToolCall

GENERIC, TERMINAL, DIFF, READ, CODE = "generic", "terminal", "diff", "read", "code"
# Of a console block or code; past it, cut with a marker. Above the bridge's own limit
# (bridge/truncation.py), so this only guards results that came some other way.
OUTPUT_CHARS = 24_000
CODE_CHARS = 24_000
LABEL_CHARS = 160


class ToolView(TypedDict):
    kind: str  # generic | terminal | diff | read | code
    label: str  # one line for the summary: the command, the path
    code: str  # terminal: the command; execute_code: the code
    tokens: list[Token]  # `code` highlighted ([]: show it plain)
    output: str  # what the command or code printed
    exit_code: str  # "" while running or when hermes gave none
    error: str  # hermes' error text
    note: str  # one short line: "2 lines added", "lines 1–40 of 120", a cut marker
    lines: list[DiffLine]  # diff or excerpt
    images: list[str]  # an MCP tool's pictures (their names in the conversation)


def empty_view(kind: str = GENERIC, label: str = "") -> ToolView:
    return ToolView(
        kind=kind, label=label, code="", tokens=[], output="", exit_code="", error="", note="",
        lines=[], images=[],
    )  # fmt: skip


@dataclass
class _Seen:
    """What earlier calls of the run showed of each file: path → its whole content."""

    files: dict[str, str] = field(default_factory=dict)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    bridge = CUT_MARKER.search(text)  # the bridge's marker says how much it cut: kept
    tail = f" {bridge.group(0)}" if bridge else ""
    hidden = len(text) - limit - (len(bridge.group(0)) if bridge else 0)
    return text[:limit] + f"… [{hidden} more characters not shown]{tail}"


def _one_line(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    more = " …" if text.strip() and text.strip() != first else ""
    if len(first) > LABEL_CHARS:
        return first[:LABEL_CHARS] + "…"
    return first + more


def _str(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _args(call: ToolCall) -> dict[str, Any]:
    args = call.args
    if isinstance(args, str):
        args, _ = loads_cut(args)
    return args if isinstance(args, dict) else {}


def _result(call: ToolCall) -> tuple[dict[str, Any] | None, str, str]:
    """(the result object or None, the raw text, the bridge's cut marker or "")."""
    raw = call.result or ""
    if not raw:
        return None, "", ""
    value, marker = loads_cut(raw)
    return (value if isinstance(value, dict) else None), raw, marker


def _exit_code(result: dict[str, Any]) -> str:
    code = result.get("exit_code")
    return str(code) if isinstance(code, int) and not isinstance(code, bool) else ""


def _with_marker(view: ToolView, marker: str) -> ToolView:
    """Keep the bridge's cut visible: if the marker is in no field shown, say it in note."""
    if not marker:
        return view
    shown = [view["output"], view["code"], view["error"], *(ln["text"] for ln in view["lines"])]
    if not any(marker in text for text in shown):
        view["note"] = f"{view['note']} · result {marker}" if view["note"] else marker
    return view


def _norm(path: str) -> str:
    return posixpath.normpath(path) if path else ""


def _console(call: ToolCall, kind: str, code: str, language: str) -> ToolView:
    view = empty_view(kind, _one_line(code))
    view["code"] = _cut(code, CODE_CHARS)
    view["tokens"] = tokens(view["code"], language=language) if language else []
    result, raw, marker = _result(call)
    if result is None:
        view["output"] = _cut(raw, OUTPUT_CHARS)  # plain text, or an unreadable result
        return view
    view["output"] = _cut(_str(result.get("output")), OUTPUT_CHARS)
    view["exit_code"] = _exit_code(result)
    error = _str(result.get("error"))
    # execute_code repeats stderr in `error`; keep it once, in the output.
    view["error"] = "" if error and error.strip() in view["output"] else error
    notes = []
    if result.get("session_id") and kind == TERMINAL:
        notes.append(f"in the background as {result['session_id']}")
    for key in ("exit_code_meaning", "approval", "_warning", "warning"):
        if result.get(key):
            notes.append(_str(result[key]))
    if result.get("stdout_truncated"):
        notes.append(f"hermes kept {result.get('stdout_bytes_captured', '?')} bytes of output")
    view["note"] = " · ".join(notes)
    return _with_marker(view, marker)


def _terminal(call: ToolCall, seen: _Seen) -> ToolView:
    seen.files.clear()  # a command may change any file: earlier contents are stale
    return _console(call, TERMINAL, _str(_args(call).get("command")), "")


def _execute_code(call: ToolCall, seen: _Seen) -> ToolView:
    seen.files.clear()
    return _console(call, CODE, _str(_args(call).get("code")), "python")


def _error_of(result: dict[str, Any] | None) -> str:
    if not result:
        return ""
    error = _str(result.get("error"))
    hint = _str(result.get("_hint"))
    return f"{error} ({hint})" if error and hint else error


def _write_file(call: ToolCall, seen: _Seen) -> ToolView:
    args = _args(call)
    path = _str(args.get("path"))
    content = _str(args.get("content"))
    view = empty_view(DIFF, path)
    result, raw, marker = _result(call)
    before = seen.files.get(_norm(path))
    if before is not None and before != content:
        view["lines"] = diff_of(before, content, path)
        view["note"] = "changes since this run last saw the file"
    elif before == content:
        view["note"] = "content unchanged"
    else:
        view["lines"] = content_lines(content)
        count = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        view["note"] = f"{count} line{'s' if count != 1 else ''} written"
    view["error"] = _error_of(result) or ("" if result or not raw else raw)
    if result and isinstance(result.get("lint"), dict) and result["lint"].get("status") == "error":
        view["output"] = _cut(_str(result["lint"].get("output")), OUTPUT_CHARS)
    if not view["error"] and not CUT_MARKER.search(content):  # a cut content is no base
        seen.files[_norm(path)] = content
    return _with_marker(view, marker)


def _patch(call: ToolCall, seen: _Seen) -> ToolView:
    args = _args(call)
    mode = _str(args.get("mode")) or "replace"
    result, raw, marker = _result(call)
    diff = _str(result.get("diff")) if result else ""
    if mode == "patch":
        text = _str(args.get("patch"))
        files = [
            line.split(":", 1)[1].strip()
            for line in text.splitlines()
            if line.startswith("*** ") and ":" in line and "File" in line.split(":", 1)[0]
        ]
        view = empty_view(DIFF, ", ".join(files) or "patch")
        view["lines"] = unified_lines(diff) if diff else patch_text_lines(text)
        seen.files.clear()
    else:
        path = _str(args.get("path"))
        view = empty_view(DIFF, path)
        old, new = _str(args.get("old_string")), _str(args.get("new_string"))
        view["lines"] = unified_lines(diff) if diff else diff_of(old, new, path, headers=False)
        if args.get("replace_all"):
            view["note"] = "every occurrence"
        seen.files.pop(_norm(path), None)
    view["error"] = _error_of(result) or ("" if result or not raw else raw)
    if result and result.get("success") is False and not view["error"]:
        view["error"] = "the patch was not applied"
    return _with_marker(view, marker)


def _read_file(call: ToolCall, seen: _Seen) -> ToolView:
    args = _args(call)
    path = _str(args.get("path"))
    view = empty_view(READ, path)
    result, raw, marker = _result(call)
    if result is None:
        view["output"] = _cut(raw, OUTPUT_CHARS)
        return view
    view["error"] = _error_of(result)
    similar = result.get("similar_files")
    if view["error"] and isinstance(similar, list) and similar:
        view["note"] = "similar: " + ", ".join(_str(s) for s in similar[:5])
    content = _str(result.get("content"))
    total = result.get("total_lines") if isinstance(result.get("total_lines"), int) else None
    lines, first, last, whole = excerpt_lines(content, total)
    view["lines"] = lines
    if lines and not view["error"]:
        of = f" of {total}" if total is not None else ""
        view["note"] = f"lines {first}–{last}{of}" if first != last else f"line {first}{of}"
    if result.get("is_binary") or result.get("is_image"):
        view["note"] = _str(result.get("mime_type")) or "binary file"
    offset = args.get("offset", 1)
    if whole and offset in (1, None) and not result.get("truncated") and not marker:
        seen.files[_norm(path)] = whole  # the whole file: a later write can diff against it
    return _with_marker(view, marker)


_SHAPERS = {
    "terminal": _terminal,
    "execute_code": _execute_code,
    "write_file": _write_file,
    "patch": _patch,
    "read_file": _read_file,
}


def shape(call: ToolCall, seen: _Seen | None = None) -> ToolView:
    """The view of one call (`seen`: what earlier calls of the same run showed)."""
    shaper = _SHAPERS.get(call.tool)
    if shaper is None:
        view = empty_view()
        if call.tool.startswith("mcp__"):
            view["images"] = names_in(call.result)
        return view
    try:
        return shaper(call, seen if seen is not None else _Seen())
    except Exception:  # noqa: BLE001 - an odd result must never break the panel
        return empty_view()


class ShapeCache:
    """Shaped calls of one live run, reused while the calls before them are unchanged
    (a call's view depends only on itself and the calls before it)."""

    def __init__(self) -> None:
        self._entries: list[tuple[ToolCall, ToolView, dict[str, str]]] = []

    def shape_calls(self, calls: Sequence[ToolCall]) -> list[ToolView]:
        views: list[ToolView] = []
        seen = _Seen()
        reuse = True
        for index, call in enumerate(calls):
            if reuse and index < len(self._entries) and self._entries[index][0] is call:
                _, view, files = self._entries[index]
                seen = _Seen(dict(files))
            else:
                reuse = False
                view = shape(call, seen)
                del self._entries[index:]
                self._entries.append((call, view, dict(seen.files)))
            views.append(view)
        del self._entries[len(calls) :]
        return views


def shape_calls(calls: Sequence[ToolCall]) -> list[ToolView]:
    """The views of one run's calls, in order."""
    return ShapeCache().shape_calls(calls)


__all__ = ["DiffLine", "ShapeCache", "ToolView", "cut_lines", "shape", "shape_calls"]

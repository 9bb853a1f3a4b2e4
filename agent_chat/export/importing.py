"""Reading an export file back: `read_export(raw)` checks everything before anything is
written and returns an `ImportPlan` (the rows to create), or raises `ImportRefused` with a
sentence a person can act on (and the HTTP status an API client gets).

What is accepted: this app's JSON export (`format` "agent-chat-export", `version` 1 or 2,
either branch); version 2 names each user message's files, with their bytes when exported
"with files" (`import_files`). A message still RUNNING when exported is imported as STOPPED with a note (nothing
runs it any more); a question still waiting becomes ABANDONED. Plain Python, no database:
`db/imports.py` writes the plan in one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from agent_chat.common.tool_profiles import CHAT, TOOLSETS
from agent_chat.db.import_plan import (
    ImportPlan,
    ImportRefused,
    LogPlan,
    MessagePlan,
    PausePlan,
    check_pause_keys,
    ordered_tree,
)
from agent_chat.db.models import MessageRole, MessageStatus, PauseStatus
from agent_chat.export.file_data import FILES_LIMIT_BYTES
from agent_chat.export.import_files import read_files
from agent_chat.export.json_export import EXPORT_FORMAT, EXPORT_VERSION, READABLE_VERSIONS

# 20 MiB of conversation (far above a long one with tool logs) plus an export's files in
# base64 (4 bytes for 3): an export "with files" within its limit always imports.
MAX_IMPORT_MB = 48
MAX_IMPORT_BYTES = MAX_IMPORT_MB * 1024 * 1024
assert MAX_IMPORT_BYTES >= 20 * 1024 * 1024 + (FILES_LIMIT_BYTES + 2) // 3 * 4
RUNNING_NOTE = "Still running when it was exported: imported as stopped."
_ROLES = {r.value for r in MessageRole}
_STATUSES = {s.value for s in MessageStatus}
__all__ = ["MAX_IMPORT_BYTES", "ImportPlan", "ImportRefused", "read_export"]
_PAUSE_STATUSES = {s.value for s in PauseStatus}


# ---- the file as a whole -----------------------------------------------------------------


def _other_format(doc: Any) -> str | None:
    """A sentence naming a known foreign format, if `doc` looks like one."""
    items = doc if isinstance(doc, list) else [doc]
    first = next((i for i in items if isinstance(i, dict)), None)
    if first is None:
        return None
    if "mapping" in first and ("title" in first or "create_time" in first):
        return "This looks like a ChatGPT export (conversations.json)"
    if isinstance(doc, list) and {"role", "content"} <= first.keys():
        return "This looks like a list of OpenAI chat messages"
    messages = first.get("messages")
    head = messages[0] if isinstance(messages, list) and messages else None
    if isinstance(head, dict) and {"role", "content"} <= head.keys() and "format" not in first:
        return "This looks like an OpenAI-style chat (a list of role/content messages)"
    if "chat_messages" in first or ("uuid" in first and "name" in first):
        return "This looks like another app's conversation export"
    return None


def _parse(raw: bytes | str) -> Any:
    size = len(raw.encode("utf-8") if isinstance(raw, str) else raw)
    if size > MAX_IMPORT_BYTES:
        raise ImportRefused(
            f"The file is too large ({size / 1024 / 1024:.1f} MB); the limit is "
            f"{MAX_IMPORT_MB} MB.",
            status=413,
            code="too_large",
        )
    if not size:
        raise ImportRefused("The file is empty.", status=400, code="not_json")
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise ImportRefused(
            "The file is not UTF-8 text: choose a JSON export of Agent Chat.",
            status=400,
            code="not_json",
        ) from exc
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise ImportRefused(
            "The file's JSON is nested too deeply to be an export.", status=400, code="not_json"
        ) from exc
    except ValueError as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if hasattr(exc, "lineno") else ""
        raise ImportRefused(
            f"The file is not valid JSON{where}: choose a JSON export of Agent Chat "
            "(Export as JSON in a conversation).",
            status=400,
            code="not_json",
        ) from exc


def _check_header(doc: Any) -> dict[str, Any]:
    expected = f'only Agent Chat\'s JSON export ("format": "{EXPORT_FORMAT}") can be imported.'
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        foreign = _other_format(doc)
        lead = foreign if foreign else "This is not an Agent Chat export"
        raise ImportRefused(f"{lead}: {expected}", code="unknown_format")
    version = doc.get("version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        newer = isinstance(version, int) and version > EXPORT_VERSION
        readable = " and ".join(map(str, READABLE_VERSIONS))
        raise ImportRefused(
            f"This export has version {version!r}; this app reads versions {readable}"
            + (" (it was made by a newer Agent Chat)." if newer else "."),
            code="unsupported_version",
        )
    if doc.get("branch") not in ("active", "all"):
        raise ImportRefused('"branch" must be "active" or "all".')
    if not isinstance(doc.get("session"), dict) or not isinstance(doc.get("messages"), list):
        raise ImportRefused('The export needs a "session" object and a "messages" list.')
    return doc


# ---- fields ------------------------------------------------------------------------------


class _Fields:
    """Typed reads from one object of the file; errors name where in the file."""

    def __init__(self, obj: Any, where: str) -> None:
        if not isinstance(obj, dict):
            raise ImportRefused(f"{where} must be an object.")
        self.obj = obj
        self.where = where

    def _get(self, name: str, check: Callable[[Any], bool], kind: str, optional: bool) -> Any:
        value = self.obj.get(name)
        if value is None and optional:
            return None
        if not check(value):
            raise ImportRefused(f"{self.where}.{name} must be {kind} (got {value!r:.60}).")
        return value

    def text(self, name: str, *, optional: bool = False, default: str | None = None) -> Any:
        if default is not None and self.obj.get(name) is None:
            return default
        return self._get(name, lambda v: isinstance(v, str), "text", optional)

    def integer(self, name: str, *, optional: bool = False) -> Any:
        def is_int(v: Any) -> bool:
            # The columns are 32-bit on PostgreSQL: a larger number could not be stored.
            return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**31

        return self._get(name, is_int, "a whole number from 0 to 2147483647", optional)

    def flag(self, name: str) -> bool:
        return self._get(name, lambda v: isinstance(v, bool), "true or false", False)

    def one_of(self, name: str, allowed: set[str]) -> str:
        kind = "one of " + ", ".join(sorted(allowed))
        return self._get(name, lambda v: v in allowed, kind, False)

    def time(self, name: str) -> datetime | None:
        value = self.text(name, optional=True)
        if value is None:
            return None
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError as exc:
            raise ImportRefused(f"{self.where}.{name} is not a date ({value!r:.40}).") from exc
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(UTC).replace(tzinfo=None)
        return parsed


def _log(obj: Any, where: str) -> LogPlan:
    f = _Fields(obj, where)
    meta = f.obj.get("meta")
    return LogPlan(
        seq=f.integer("seq"),
        kind=f.text("kind"),
        content=f.text("content", default=""),
        tool_name=f.text("tool_name", optional=True),
        meta_json=None if meta is None else json.dumps(meta, ensure_ascii=False),
        created_at=f.time("created_at"),
    )


def _pause(obj: Any, where: str, notes: set[str]) -> PausePlan:
    f = _Fields(obj, where)
    status = f.one_of("status", _PAUSE_STATUSES)
    if status == PauseStatus.UNANSWERED.value:
        status = PauseStatus.ABANDONED.value  # nothing will answer it in the new conversation
        notes.add("A question that was still waiting is imported as not answered.")
    choices = f.obj.get("choices")
    return PausePlan(
        run_id=f.text("run_id"),
        clarify_id=f.text("clarify_id"),
        kind=f.text("kind", default="clarify"),
        question=f.text("question"),
        detail=f.text("detail", optional=True),
        choices_json=choices if isinstance(choices, str) else json.dumps(choices or []),
        status=status,
        answer=f.text("answer", optional=True),
        created_at=f.time("created_at"),
        answered_at=f.time("answered_at"),
    )


def _list(f: _Fields, name: str) -> list[Any]:
    value = f.obj.get(name) or []
    if not isinstance(value, list):
        raise ImportRefused(f"{f.where}.{name} must be a list.")
    return value


def _message(obj: Any, index: int, notes: set[str]) -> MessagePlan:
    where = f"messages[{index}]"
    f = _Fields(obj, where)
    status = f.one_of("status", _STATUSES)
    error = f.text("error", optional=True)
    if status == MessageStatus.RUNNING.value:
        status, error = MessageStatus.STOPPED.value, error or RUNNING_NOTE
        notes.add("An answer that was still running is imported as stopped.")
    logs = [_log(row, f"{where}.logs[{n}]") for n, row in enumerate(_list(f, "logs"))]
    seqs = [row.seq for row in logs]
    if len(set(seqs)) != len(seqs):
        raise ImportRefused(f"{where} has two log rows with the same seq.", code="broken_tree")
    role = f.one_of("role", _ROLES)
    return MessagePlan(
        source_id=f.integer("id"),
        parent_id=f.integer("parent_id", optional=True),
        is_active=f.flag("is_active"),
        branch_order=f.integer("branch_order", optional=True) or 0,
        role=role,
        status=status,
        content=f.text("content", default=""),
        error=error,
        model_id=f.integer("model_id", optional=True),
        skill_folder=f.text("skill_folder", optional=True),
        tool_profile=f.text("tool_profile", optional=True),
        run_id=f.text("run_id", optional=True),
        input_tokens=f.integer("input_tokens", optional=True),
        output_tokens=f.integer("output_tokens", optional=True),
        total_tokens=f.integer("total_tokens", optional=True),
        context_tokens=f.integer("context_tokens", optional=True),
        created_at=f.time("created_at"),
        completed_at=f.time("completed_at"),
        logs=logs,
        pauses=[_pause(p, f"{where}.pauses[{n}]", notes) for n, p in enumerate(_list(f, "pauses"))],
        files=read_files(f.obj, where, is_user=role == MessageRole.USER.value),
    )


def _models(doc: dict[str, Any]) -> dict[int, tuple[str, str]]:
    found: dict[int, tuple[str, str]] = {}
    listed = doc.get("models") or []
    session = doc["session"]
    for item in [*listed, session.get("model"), session.get("default_model")]:
        if isinstance(item, dict) and isinstance(item.get("id"), int):
            found[item["id"]] = (str(item.get("name") or ""), str(item.get("model") or ""))
    return found


def read_export(raw: bytes | str) -> ImportPlan:
    """The plan of the new conversation, or ImportRefused (see the module doc)."""
    doc = _check_header(_parse(raw))
    s = _Fields(doc["session"], "session")
    notes: set[str] = set()
    messages = [_message(m, n, notes) for n, m in enumerate(doc["messages"])]
    ordered = ordered_tree(messages)
    check_pause_keys(ordered)
    profile = s.text("tool_profile", default=CHAT)
    return ImportPlan(
        title=s.text("title", default=""),
        model_id=s.integer("model_id", optional=True),
        skill_folder=s.text("skill_folder", optional=True),
        tool_profile=profile if profile in TOOLSETS else CHAT,
        last_summarized_at=s.time("last_summarized_at"),
        models=_models(doc),
        messages=ordered,
        notes=sorted(notes),
    )

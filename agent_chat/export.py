"""The export of one conversation as Markdown or JSON (DESIGN.md §6 "Export").

`collect()` is a store function (keyword-only, takes the session): it reads the session, its
messages, their run logs and questions in a handful of queries, whatever the number of
messages. `to_markdown()` and `to_json()` are pure and turn what it read into the file.
Of a model only the id, name and model name are ever read, so an API key cannot leak.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlmodel import Session, col, select

from agent_chat.db.errors import NotFound
from agent_chat.db.messages import active_branch
from agent_chat.db.models import (
    ChatMessage,
    ChatMessageLog,
    ChatSession,
    MessageRole,
    MessageStatus,
    ModelConfig,
    RunPause,
)
from agent_chat.db.sessions import get_session
from agent_chat.protocol.log_codec import row_to_event
from agent_chat.protocol.reducer import RunView, ToolCall, replay

FORMATS = ("md", "json")
BRANCHES = ("active", "all")
EXPORT_FORMAT = "agent-chat-export"
EXPORT_VERSION = 1
MEDIA_TYPES = {"md": "text/markdown; charset=utf-8", "json": "application/json"}

# IN lists are sent in chunks: SQLite and PostgreSQL cap the number of bound parameters.
_IN_CHUNK = 500


@dataclass(frozen=True)
class ModelInfo:
    """What an export says about a model (never its key or URL)."""

    id: int
    name: str
    model_name: str

    def label(self) -> str:
        return self.name if self.name == self.model_name else f"{self.name} ({self.model_name})"


@dataclass(frozen=True)
class SessionExport:
    """Everything one export needs, read in one transaction."""

    chat: ChatSession
    branch: str  # "active" | "all"
    messages: list[ChatMessage]  # by id, so a parent comes before its children
    active_ids: list[int]  # the active branch, root first
    logs: dict[int, list[ChatMessageLog]]  # message id → rows by seq
    pauses: dict[int, list[RunPause]]  # message id → questions by id
    models: dict[int, ModelInfo]  # every model the session or a message names
    default_model: ModelInfo | None

    @property
    def session_model(self) -> ModelInfo | None:
        return self.models.get(self.chat.model_id) if self.chat.model_id else None

    def view(self, message_id: int) -> RunView:
        """The thinking view of a message, replayed from its log like the page does."""
        rows = self.logs.get(message_id, [])
        return replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows])


# ---- reading ------------------------------------------------------------------------------

Row = TypeVar("Row", ChatMessageLog, RunPause)


def _by_message(
    session: Session, table: type[Row], ids: Sequence[int], *order: Any
) -> dict[int, list[Row]]:
    """Rows of `table` for the messages `ids`, grouped by message id, one query per chunk."""
    grouped: dict[int, list[Row]] = {}
    for start in range(0, len(ids), _IN_CHUNK):
        chunk = list(ids[start : start + _IN_CHUNK])
        query = select(table).where(col(table.message_id).in_(chunk)).order_by(*order)
        for row in session.exec(query).all():
            grouped.setdefault(row.message_id, []).append(row)
    return grouped


def _model_infos(session: Session, model_ids: Iterable[int]) -> dict[int, ModelInfo]:
    ids = sorted(set(model_ids))
    if not ids:
        return {}
    # Named columns only: the api_key column is never even read.
    query = select(ModelConfig.id, ModelConfig.name, ModelConfig.model_name).where(
        col(ModelConfig.id).in_(ids)
    )
    return {mid: ModelInfo(mid, name, model) for mid, name, model in session.exec(query).all()}


def _default_model(session: Session) -> ModelInfo | None:
    query = (
        select(ModelConfig.id, ModelConfig.name, ModelConfig.model_name)
        .where(col(ModelConfig.is_default).is_(True))
        .order_by(col(ModelConfig.id))
    )
    row = session.exec(query).first()
    return ModelInfo(*row) if row else None


def collect(*, session: Session, session_uuid: str, branch: str = "active") -> SessionExport:
    """Read a session for export: the active branch, or (`branch="all"`) the whole tree.

    Raises NotFound for an unknown or malformed uuid, ValueError for an unknown branch.
    """
    if branch not in BRANCHES:
        raise ValueError(f"branch must be one of: {', '.join(BRANCHES)}")
    chat = get_session(session=session, session_uuid=session_uuid)
    if chat is None or chat.id is None:
        raise NotFound(f"Chat session {session_uuid!r} does not exist")
    path = active_branch(session=session, chat_session_id=chat.id)
    if branch == "all":
        query = (
            select(ChatMessage)
            .where(ChatMessage.session_id == chat.id)
            .order_by(col(ChatMessage.id))
        )
        messages = list(session.exec(query).all())
    else:
        messages = path
    ids = [m.id for m in messages if m.id is not None]
    logs = _by_message(
        session, ChatMessageLog, ids, col(ChatMessageLog.message_id), col(ChatMessageLog.seq)
    )
    pauses = _by_message(session, RunPause, ids, col(RunPause.id))
    model_ids = [m.model_id for m in messages if m.model_id] + (
        [chat.model_id] if chat.model_id else []
    )
    return SessionExport(
        chat=chat,
        branch=branch,
        messages=messages,
        active_ids=[m.id for m in path if m.id is not None],
        logs=logs,
        pauses=pauses,
        models=_model_infos(session, model_ids),
        default_model=_default_model(session),
    )


# ---- shared helpers -----------------------------------------------------------------------


def _iso(value: datetime | None) -> str | None:
    """A stored (naive UTC) time as ISO 8601 with its offset."""
    return None if value is None else value.replace(tzinfo=UTC).isoformat()


def _when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def slug(text: str, *, ascii_only: bool = False, max_chars: int = 60) -> str:
    """`text` as a file-name part: lower case, words joined by '-' ('' if nothing is left)."""
    text = unicodedata.normalize("NFKC", text or "")
    if ascii_only:
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.sub(r"[\W_]+", "-", text.lower()).strip("-")
    return words[:max_chars].rstrip("-")


def export_filename(
    chat: ChatSession, fmt: str, exported_at: datetime, *, ascii_only: bool = False
) -> str:
    """`<slug of the title>-<export date>.<fmt>`, e.g. `trip-to-rome-2025-01-31.md`."""
    name = slug(chat.title, ascii_only=ascii_only) or "conversation"
    return f"{name}-{exported_at:%Y-%m-%d}.{fmt}"


# ---- JSON ---------------------------------------------------------------------------------


def _meta(meta_json: str | None) -> Any:
    if not meta_json:
        return None
    try:
        return json.loads(meta_json)
    except ValueError:
        return meta_json  # kept as stored rather than lost


def _choices(choices_json: str) -> Any:
    try:
        return json.loads(choices_json or "[]")
    except ValueError:
        return choices_json


def _message_json(message: ChatMessage, data: SessionExport) -> dict[str, Any]:
    mid = message.id or 0
    return {
        "id": mid,
        "parent_id": message.parent_id,
        "is_active": message.is_active,
        "branch_order": message.branch_order,
        "role": message.role,
        "status": message.status,
        "content": message.content,
        "error": message.error,
        "model_id": message.model_id,
        "skill_folder": message.skill_folder,
        "run_id": message.run_id,
        "input_tokens": message.input_tokens,
        "output_tokens": message.output_tokens,
        "total_tokens": message.total_tokens,
        "created_at": _iso(message.created_at),
        "completed_at": _iso(message.completed_at),
        "logs": [
            {
                "seq": row.seq,
                "kind": row.kind,
                "content": row.content,
                "tool_name": row.tool_name,
                "meta": _meta(row.meta_json),
                "created_at": _iso(row.created_at),
            }
            for row in data.logs.get(mid, [])
        ],
        "pauses": [
            {
                "run_id": pause.run_id,
                "clarify_id": pause.clarify_id,
                "question": pause.question,
                "choices": _choices(pause.choices_json),
                "status": pause.status,
                "answer": pause.answer,
                "created_at": _iso(pause.created_at),
                "answered_at": _iso(pause.answered_at),
            }
            for pause in data.pauses.get(mid, [])
        ],
    }


def _model_json(model: ModelInfo | None) -> dict[str, Any] | None:
    return (
        None if model is None else {"id": model.id, "name": model.name, "model": model.model_name}
    )


def to_json(data: SessionExport, *, exported_at: datetime) -> dict[str, Any]:
    """The export document. The tree is rebuilt from `parent_id`, `is_active`, `branch_order`."""
    chat = data.chat
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": _iso(exported_at),
        "branch": data.branch,
        "session": {
            "uuid": chat.session_uuid,
            "title": chat.title,
            "model": _model_json(data.session_model),
            "model_id": chat.model_id,
            "default_model": _model_json(data.default_model),
            "skill_folder": chat.skill_folder,
            "status": chat.status,
            "created_at": _iso(chat.created_at),
            "last_message_at": _iso(chat.last_message_at),
            "updated_at": _iso(chat.updated_at),
            "last_summarized_at": _iso(chat.last_summarized_at),
        },
        "models": [_model_json(m) for _, m in sorted(data.models.items())],
        "active_branch": list(data.active_ids),
        "messages": [_message_json(m, data) for m in data.messages],
    }


def to_json_text(data: SessionExport, *, exported_at: datetime) -> str:
    return json.dumps(to_json(data, exported_at=exported_at), ensure_ascii=False, indent=2) + "\n"


# ---- Markdown: keeping message text from breaking the document ----------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_TAG_START = re.compile(r"[A-Za-z/!?]")
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>&#~|])")
# Headings inside a message sit below every heading of the export (h1-h4).
_HEADING_SHIFT = 4


def _escape_tags(line: str) -> str:
    """`<` that could open raw HTML becomes `&lt;`, except inside `code spans`."""
    out: list[str] = []
    i = 0
    while i < len(line):
        char = line[i]
        if char == "\\" and i + 1 < len(line):
            out.append(line[i : i + 2])
            i += 2
        elif char == "`":
            run_end = i
            while run_end < len(line) and line[run_end] == "`":
                run_end += 1
            ticks = run_end - i
            close = re.compile(rf"(?<!`)`{{{ticks}}}(?!`)").search(line, run_end)
            end = close.end() if close else run_end
            out.append(line[i:end])
            i = end
        elif char == "<" and _TAG_START.match(line, i + 1):
            out.append("&lt;")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def contain(text: str, *, line_breaks: bool = False) -> str:
    """Message text as Markdown that cannot break the document around it.

    Raw HTML is neutralised (so `<script>` or `</details>` stay text), an unclosed code fence
    is closed, headings are shifted below the export's own, and a setext underline cannot turn
    the paragraph above into a heading. Code blocks are left exactly as they are.
    `line_breaks` keeps single newlines as line breaks (for text a person typed).
    """
    out: list[str] = []
    fence: str | None = None
    previous_text: int | None = None  # index in `out` of the last text line
    for line in (text or "").splitlines():
        if line_breaks and previous_text is not None and line.strip() and fence is None:
            out[previous_text] = out[previous_text].rstrip() + "  "
        previous_text = None
        if fence is not None:
            out.append(line)
            match = _FENCE.match(line)
            if (
                match
                and match.group(1)[0] == fence[0]
                and len(match.group(1)) >= len(fence)
                and not match.group(2).strip()
            ):
                fence = None
            continue
        match = _FENCE.match(line)
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            out.append(line)
            continue
        if _SETEXT_UNDERLINE.match(line) and out and out[-1].strip():
            out.append("")
        line = _ATX.sub(lambda m: m.group(1) + "#" * min(6, len(m.group(2)) + _HEADING_SHIFT), line)
        out.append(_escape_tags(line))
        if line.strip():
            previous_text = len(out) - 1
    if fence is not None:
        out.append(fence)
    return "\n".join(out).strip("\n")


def inline(text: str) -> str:
    """One line of plain text, safe inside a heading or list item."""
    return _INLINE_SPECIAL.sub(r"\\\1", _one_line(text))


def fenced(text: str, info: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}"


def details(summary: str, body: str) -> str:
    """A collapsible block; the body is Markdown (the blank lines make it so)."""
    summary_html = html.escape(_one_line(summary), quote=False)
    return f"<details>\n<summary>{summary_html}</summary>\n\n{body.strip()}\n\n</details>"


# ---- Markdown: the parts of a message -----------------------------------------------------


def _code(value: Any) -> str:
    """A tool argument or result as a fenced block (pretty JSON when it is JSON)."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return fenced(value, "text")
        if not isinstance(parsed, dict | list):
            return fenced(value, "text")
        value = parsed
    return fenced(json.dumps(value, ensure_ascii=False, indent=2), "json")


def _tool_md(call: ToolCall) -> str:
    if not call.done:
        note = "did not finish"
    elif call.duration_ms is not None:
        note = f"{call.duration_ms / 1000:.1f} s"
    else:
        note = "done"
    if call.is_error:
        note += ", error"
    parts = ["Arguments:", _code(call.args if call.args is not None else {})]
    if call.result is not None:
        parts += ["Error:" if call.is_error else "Result:", _code(call.result)]
    return details(f"Tool: {call.tool or 'unknown'} ({note})", "\n\n".join(parts))


def _todos_md(view: RunView) -> str:
    done, total = view.todo_counts
    lines = []
    for todo in view.todos:
        status = str(todo.get("status") or "")
        text = inline(str(todo.get("content") or ""))
        if status == "completed":
            lines.append(f"- [x] {text}")
        elif status == "cancelled":
            lines.append(f"- [ ] ~~{text}~~ (cancelled)")
        elif status == "in_progress":
            lines.append(f"- [ ] {text} (in progress)")
        else:
            lines.append(f"- [ ] {text}")
    return details(f"Tasks ({done}/{total} done)", "\n".join(lines))


def _question_md(question: str, answer: str, choices: Sequence[str]) -> str:
    body = []
    if "\n" in question.strip():
        body.append(contain(question))
    if choices:
        body.append("Choices: " + ", ".join(inline(c) for c in choices))
    body.append(f"Answer: {answer}")
    return details(f"Question: {question}", "\n\n".join(body))


def _pause_choices(pauses: Sequence[RunPause]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for pause in pauses:
        choices = _choices(pause.choices_json)
        if isinstance(choices, list):
            found.setdefault(pause.question, [str(c) for c in choices])
    return found


def _assistant_body(message: ChatMessage, data: SessionExport) -> list[str]:
    mid = message.id or 0
    view = data.view(mid)
    choices = _pause_choices(data.pauses.get(mid, []))
    blocks: list[str] = []
    if view.thinking.strip():
        blocks.append(details("Thinking", contain(view.thinking)))
    blocks += [_tool_md(call) for call in view.tools]
    if view.todos:
        blocks.append(_todos_md(view))
    for question, answer in view.answers:
        shown = inline(answer) if answer is not None else "(cancelled)"
        blocks.append(_question_md(question, shown, choices.get(question, [])))
    if view.clarify is not None:
        pending = "(not answered when exported)"
        blocks.append(_question_md(view.clarify.question, pending, view.clarify.choices))
    for summary in view.compactions:
        blocks.append(details("Context compacted", contain(summary)))
    answer = message.content or view.answer
    if answer.strip():
        blocks.append(contain(answer))
    error = message.error or view.error
    if message.status == MessageStatus.FAILED.value:
        blocks.append("**This answer failed.**")
        if error:
            blocks.append(fenced(error, "text"))
    elif message.status == MessageStatus.STOPPED.value:
        blocks.append("**Stopped before the answer was complete.**")
    elif message.status == MessageStatus.RUNNING.value:
        blocks.append("**Still running when exported.**")
    return blocks


def _message_md(message: ChatMessage, data: SessionExport, level: int, version: str) -> list[str]:
    when = _when(message.created_at)
    if message.status == MessageStatus.RESET.value:
        line = f"**Context reset** · {when}: the agent did not see the messages above."
        note = message.content.strip()
        extra = [contain(note)] if note and note.lower() != "context reset" else []
        return ["---", line, *extra]
    if message.role == MessageRole.SYSTEM.value and message.status == MessageStatus.SUMMARY.value:
        return [details(f"Summary of earlier messages ({when})", contain(message.content))]
    who = {MessageRole.USER.value: "You", MessageRole.ASSISTANT.value: "Assistant"}.get(
        message.role, "System"
    )
    heading = " · ".join(part for part in (who, when, version) if part)
    blocks = [f"{'#' * level} {heading}"]
    if message.role == MessageRole.ASSISTANT.value:
        blocks += _assistant_body(message, data)
    elif message.content.strip():
        blocks.append(contain(message.content, line_breaks=message.role == MessageRole.USER.value))
    return blocks


# ---- Markdown: the tree -------------------------------------------------------------------


class _Tree:
    """Children in version order, and the version each parent continues with."""

    def __init__(self, messages: Sequence[ChatMessage]) -> None:
        self.by_id = {m.id: m for m in messages}
        self.children: dict[int | None, list[ChatMessage]] = {}
        for message in messages:
            self.children.setdefault(message.parent_id, []).append(message)
        for group in self.children.values():
            group.sort(key=lambda m: (m.branch_order, m.id or 0))

    def continuation(self, parent_id: int | None) -> ChatMessage | None:
        """The active child (the newest one if the one-active rule was ever broken)."""
        active = [m for m in self.children.get(parent_id, []) if m.is_active]
        return max(active, key=lambda m: (m.branch_order, m.id or 0)) if active else None

    def path_from(self, message: ChatMessage) -> list[ChatMessage]:
        path = [message]
        while (child := self.continuation(path[-1].id)) is not None:
            path.append(child)
        return path

    def version(self, message: ChatMessage) -> tuple[int, int]:
        group = self.children.get(message.parent_id, [message])
        return group.index(message) + 1, len(group)

    def preorder(self) -> list[ChatMessage]:
        ordered: list[ChatMessage] = []
        stack = list(reversed(self.children.get(None, [])))
        while stack:
            message = stack.pop()
            ordered.append(message)
            stack.extend(reversed(self.children.get(message.id, [])))
        return ordered


def _first_line(text: str, limit: int = 80) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _version_label(message: ChatMessage, tree: _Tree) -> str:
    index, total = tree.version(message)
    parent = tree.by_id.get(message.parent_id)
    if message.role == MessageRole.ASSISTANT.value and parent is not None:
        about = f"of the answer to: {_first_line(parent.content)}"
    elif parent is None:
        about = "of the first message"
    else:
        about = f"of the message after: {_first_line(parent.content)}"
    return f"Version {index}/{total} {about}"


def to_markdown(data: SessionExport, *, exported_at: datetime) -> str:
    """The conversation as a Markdown document (see the module doc)."""
    chat = data.chat
    model = data.session_model
    model_text = (
        model.label()
        if model
        else f"default ({data.default_model.label()})"
        if data.default_model
        else "default"
    )
    meta = [f"Model: {inline(model_text)}"]
    if chat.skill_folder:
        meta.append(f"Skill: {inline(chat.skill_folder)}")
    meta += [f"Created: {_when(chat.created_at)}", f"Exported: {_when(exported_at)}"]
    blocks = [f"# {inline(chat.title or 'New conversation')}", " · ".join(meta)]

    tree = _Tree(data.messages)
    show_versions = data.branch == "all"

    def version_note(message: ChatMessage) -> str:
        if not show_versions:
            return ""
        index, total = tree.version(message)
        return f"version {index}/{total}" if total > 1 else ""

    by_id = {m.id: m for m in data.messages}
    main = [by_id[mid] for mid in data.active_ids if mid in by_id]
    for message in main:
        blocks += _message_md(message, data, 2, version_note(message))
    if not main:
        blocks.append("*No messages yet.*")

    if show_versions:
        # Each message not shown yet starts a section with its active continuation, so every
        # message of the tree appears exactly once (parents come before children in preorder).
        shown = {m.id for m in main}
        titled = False
        for head in tree.preorder():
            if head.id in shown:
                continue
            if not titled:
                blocks.append("## Other versions")
                titled = True
            blocks.append(f"### {inline(_version_label(head, tree))}")
            for message in tree.path_from(head):
                if message.id not in shown:
                    shown.add(message.id)
                    blocks += _message_md(message, data, 4, version_note(message))
    return "\n\n".join(blocks) + "\n"

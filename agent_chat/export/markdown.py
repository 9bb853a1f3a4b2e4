"""The Markdown export: the conversation as a document a person reads.

The active branch comes first under level-2 headings; an "all" export then lists every other
version under "Other versions", each message exactly once. Message text goes through
`markdown_escape` so it cannot break the document.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agent_chat.common.tool_profiles import LABELS
from agent_chat.db.attachment_models import Attachment
from agent_chat.db.attachment_notes import human_size
from agent_chat.db.models import ChatMessage, MessageRole, MessageStatus, RunPause
from agent_chat.export.markdown_escape import contain, details, fenced, inline
from agent_chat.export.reading import SessionExport, stored_choices
from agent_chat.export.tree import MessageTree
from agent_chat.protocol.reducer import RunView, ToolCall
from agent_chat.protocol.views import Subagent

_OUTCOME = {"succeeded": "completed", "failed": "failed", "stopped": "stopped"}


def _when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


# ---- the parts of a message ---------------------------------------------------------------


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


def _subagent_md(child: Subagent, place: str) -> str:
    """A child agent of a delegate_task call (its own block after the call's: details never
    nest): goal, outcome, summary or error, and the tools it used."""
    outcome = _OUTCOME.get(child.state, "did not finish")
    calls = len(child.tools)
    facts = [outcome, f"{calls} tool{'s' if calls != 1 else ''}"]
    if child.duration_s is not None:
        facts.append(f"{child.duration_s:.0f} s")
    used = child.usage
    if used.get("input_tokens") or used.get("output_tokens"):
        facts.append(
            f"{used.get('input_tokens') or 0} in · {used.get('output_tokens') or 0} out tokens"
        )
    goal = child.goal.strip() or "(no goal)"
    body = [f"Goal:\n\n{contain(goal)}"]
    if child.summary.strip():
        body.append(f"Summary:\n\n{contain(child.summary)}")
    if child.error:
        body.append(fenced(child.error, "text"))
    if child.tools:
        body.append("Tools: " + ", ".join(f"`{inline(c.tool)}`" for c in child.tools))
    return details(f"Subagent {place}: {goal} ({', '.join(facts)})", "\n\n".join(body))


def _tools_md(view: RunView) -> list[str]:
    """Each call, a delegate_task call followed by its child agents."""
    blocks = []
    for call in view.tools:
        blocks.append(_tool_md(call))
        children = view.children_of(call.call_id)
        blocks += [
            _subagent_md(child, f"{n}/{len(children)}") for n, child in enumerate(children, 1)
        ]
    return blocks


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
        choices = stored_choices(pause.choices_json)
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
    blocks += _tools_md(view)
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
    if files := data.attachments.get(message.id or 0):
        blocks.append(_files_md(files))
    return blocks


def _files_md(files: Sequence[Attachment]) -> str:
    """One line per file, as the page shows them (names and sizes; the bytes are not in a
    Markdown export): `📎 cities.csv (37 bytes, text/plain)`."""
    lines = [f"📎 {inline(f.name)} ({human_size(f.size)}, {inline(f.media_type)})" for f in files]
    return "  \n".join(lines)  # a hard break between lines of one paragraph


# ---- the tree -----------------------------------------------------------------------------


def _first_line(text: str, limit: int = 80) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _version_label(message: ChatMessage, tree: MessageTree) -> str:
    index, total = tree.version(message)
    parent = tree.by_id.get(message.parent_id)
    if message.role == MessageRole.ASSISTANT.value and parent is not None:
        about = f"of the answer to: {_first_line(parent.content)}"
    elif parent is None:
        about = "of the first message"
    else:
        about = f"of the message after: {_first_line(parent.content)}"
    return f"Version {index}/{total} {about}"


def _version_note(message: ChatMessage, tree: MessageTree | None) -> str:
    """'version 2/3' in a heading of an "all" export, when the message has other versions."""
    if tree is None:
        return ""
    index, total = tree.version(message)
    return f"version {index}/{total}" if total > 1 else ""


def _other_versions(data: SessionExport, tree: MessageTree, shown: set[int | None]) -> list[str]:
    """Each message not shown yet starts a section with its active continuation, so every
    message of the tree appears exactly once (parents come before children in preorder)."""
    blocks: list[str] = []
    for head in tree.preorder():
        if head.id in shown:
            continue
        if not blocks:
            blocks.append("## Other versions")
        blocks.append(f"### {inline(_version_label(head, tree))}")
        for message in tree.path_from(head):
            if message.id not in shown:
                shown.add(message.id)
                blocks += _message_md(message, data, 4, _version_note(message, tree))
    return blocks


def _title_md(data: SessionExport, exported_at: datetime) -> list[str]:
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
    meta.append(f"Tools: {inline(LABELS.get(chat.tool_profile, chat.tool_profile))}")
    meta += [f"Created: {_when(chat.created_at)}", f"Exported: {_when(exported_at)}"]
    return [f"# {inline(chat.title or 'New conversation')}", " · ".join(meta)]


def to_markdown(data: SessionExport, *, exported_at: datetime) -> str:
    """The conversation as a Markdown document (see the module doc)."""
    blocks = _title_md(data, exported_at)
    # Only the "all" export shows versions; the active one is just the store's active branch.
    tree = MessageTree(data.messages) if data.branch == "all" else None
    by_id = {m.id: m for m in data.messages}
    main = [by_id[mid] for mid in data.active_ids if mid in by_id]
    for message in main:
        blocks += _message_md(message, data, 2, _version_note(message, tree))
    if not main:
        blocks.append("*No messages yet.*")
    if tree is not None:
        blocks += _other_versions(data, tree, {m.id for m in main})
    return "\n\n".join(blocks) + "\n"

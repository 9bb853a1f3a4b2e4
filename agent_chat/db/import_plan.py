"""The rows an import will create (`importing.read_export` builds them from the file) and
the checks of the message tree. Plain Python."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


class ImportRefused(ValueError):
    """The file cannot be imported; `message` says why, `status`/`code` for the HTTP API."""

    def __init__(self, message: str, *, status: int = 422, code: str = "invalid_export") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


@dataclass(frozen=True)
class LogPlan:
    seq: int
    kind: str
    content: str
    tool_name: str | None
    meta_json: str | None
    created_at: datetime | None


@dataclass(frozen=True)
class PausePlan:
    run_id: str
    clarify_id: str
    kind: str
    question: str
    detail: str | None
    choices_json: str
    status: str
    answer: str | None
    created_at: datetime | None
    answered_at: datetime | None


@dataclass(frozen=True)
class FilePlan:
    """A file of a user message as the export names it; `data` its bytes when the export
    carried them (checked against `size` and `sha256`), else None."""

    name: str
    size: int
    sha256: str
    data: bytes | None


@dataclass(frozen=True)
class MessagePlan:
    source_id: int
    parent_id: int | None  # the file's id of the parent
    is_active: bool
    branch_order: int
    role: str
    status: str
    content: str
    error: str | None
    model_id: int | None  # the file's model id (matched to a local model by db/imports.py)
    skill_folder: str | None
    tool_profile: str | None
    run_id: str | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    context_tokens: int | None  # an export older than the column: None
    created_at: datetime | None
    completed_at: datetime | None
    logs: list[LogPlan] = field(default_factory=list)
    pauses: list[PausePlan] = field(default_factory=list)
    files: list[FilePlan] = field(default_factory=list)  # in the message's order


@dataclass(frozen=True)
class ImportPlan:
    title: str
    model_id: int | None  # the file's id; `models` says which model it was
    skill_folder: str | None
    tool_profile: str
    last_summarized_at: datetime | None
    models: dict[int, tuple[str, str]]  # file id → (name, model name)
    messages: list[MessagePlan]  # parents before children, in the file's id order otherwise
    notes: list[str]


# ---- the tree ----------------------------------------------------------------------------


def _broken(message: str) -> ImportRefused:
    return ImportRefused(f"The message tree is broken: {message}", code="broken_tree")


def ordered_tree(messages: list[MessagePlan]) -> list[MessagePlan]:
    """The messages parents first (ids ascending among those ready), after checking that ids
    are unique, every parent is in the file, nothing is its own ancestor, and each group of
    siblings (the versions of one message) has exactly one active version."""
    by_id: dict[int, MessagePlan] = {}
    for message in messages:
        if message.source_id in by_id:
            raise _broken(f"message id {message.source_id} appears twice.")
        by_id[message.source_id] = message
    children: dict[int | None, list[MessagePlan]] = {}
    for message in messages:
        if message.parent_id is not None and message.parent_id not in by_id:
            raise _broken(
                f"the parent {message.parent_id} of message {message.source_id} is not in the file."
            )
        children.setdefault(message.parent_id, []).append(message)
    for parent_id, group in children.items():
        active = sorted(m.source_id for m in group if m.is_active)
        place = "at the start" if parent_id is None else f"under message {parent_id}"
        if len(active) > 1:
            shown = ", ".join(map(str, active))
            raise _broken(f"messages {shown} are all marked as the active version {place}.")
        if not active:
            raise _broken(f"no version {place} is marked active.")
    reached: set[int] = set()
    frontier = children.get(None, [])
    while frontier:
        reached.update(m.source_id for m in frontier)
        frontier = [c for m in frontier for c in children.get(m.source_id, [])]
    if len(reached) != len(messages):
        stuck = sorted(m.source_id for m in messages if m.source_id not in reached)[:5]
        raise _broken(f"messages {', '.join(map(str, stuck))} are in a cycle (no first message).")
    # Inserted in the file's id order (new ids keep it, so siblings with equal branch_order
    # keep their order), a parent moved before a child with a lower id.
    return _parents_first(sorted(messages, key=lambda m: m.source_id), by_id)


def _parents_first(messages: list[MessagePlan], by_id: dict[int, MessagePlan]) -> list[MessagePlan]:
    """`messages` in id order, except that a parent with a higher id moves before its child."""
    placed: set[int] = set()
    out: list[MessagePlan] = []
    for message in messages:
        chain: list[MessagePlan] = []
        current: MessagePlan | None = message
        while current is not None and current.source_id not in placed:
            chain.append(current)
            current = by_id.get(current.parent_id) if current.parent_id is not None else None
        for item in reversed(chain):
            placed.add(item.source_id)
            out.append(item)
    return out


def check_pause_keys(messages: list[MessagePlan]) -> None:
    seen: set[tuple[str, str]] = set()
    for message in messages:
        for pause in message.pauses:
            key = (pause.run_id, pause.clarify_id)
            if key in seen:
                raise _broken(
                    f"the question {pause.clarify_id!r} of run {pause.run_id!r} is twice."
                )
            seen.add(key)

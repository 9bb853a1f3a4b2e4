"""How run events become `chat_message_log` rows and back (lossless for the reducer)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agent_chat.protocol.events import EventType, RunEvent

# Deltas whose consecutive rows may be merged into one (their texts concatenate); a child
# agent's only with the same child's (`subagent`).
MERGEABLE_KINDS = frozenset(
    {
        EventType.TEXT_DELTA,
        EventType.REASONING_DELTA,
        EventType.SUBAGENT_TEXT_DELTA,
        EventType.SUBAGENT_REASONING_DELTA,
    }
)
_ENVELOPE = ("run_id", "seq")


@dataclass(frozen=True)
class LogRow:
    """One event to store; `seq` is the run's event number (unique per message)."""

    seq: int
    kind: str
    content: str = ""
    tool_name: str | None = None
    meta_json: str | None = None


def event_to_row(kind: str, seq: int, data: dict[str, Any]) -> LogRow:
    """One event as a row: delta text in `content`, everything else in `meta_json`."""
    meta = {k: v for k, v in data.items() if k not in _ENVELOPE}
    content = ""
    if kind in MERGEABLE_KINDS:
        content = str(meta.pop("text", "") or "")
    tool = data.get("tool")
    return LogRow(
        seq=seq,
        kind=kind,
        content=content,
        tool_name=str(tool) if tool else None,
        meta_json=json.dumps(meta, ensure_ascii=False) if meta else None,
    )


def merge_rows(first: LogRow, second: LogRow) -> LogRow | None:
    """Merge `second` into `first` if both are consecutive deltas of one kind, else None.

    The merged row keeps the first seq (its key) and records the last one in `seq_to`, so
    coverage of every seq stays checkable, and each seq's text length in `seq_lens`, so a
    reader resuming after a seq inside the row gets only the text after it (`text_after`).
    """
    if first.kind != second.kind or first.kind not in MERGEABLE_KINDS:
        return None
    meta = json.loads(first.meta_json) if first.meta_json else {}
    if second.seq != meta.get("seq_to", first.seq) + 1:
        return None
    other = json.loads(second.meta_json) if second.meta_json else {}
    if meta.get("subagent") != other.get("subagent"):
        return None  # two children's texts (deltas from parallel threads) stay apart
    meta["seq_lens"] = [*meta.get("seq_lens", [len(first.content)]), len(second.content)]
    meta["seq_to"] = second.seq
    return LogRow(
        seq=first.seq,
        kind=first.kind,
        content=first.content + second.content,
        tool_name=first.tool_name,
        meta_json=json.dumps(meta, ensure_ascii=False),
    )


def row_to_event(seq: int, kind: str, content: str, meta_json: str | None) -> dict[str, Any]:
    """The event a row stands for, shaped like a live event for `reducer.apply`."""
    meta = json.loads(meta_json) if meta_json else {}
    last_seq = meta.pop("seq_to", seq)
    meta.pop("seq_lens", None)
    event = {"type": kind, **meta, "seq": last_seq}
    if kind in MERGEABLE_KINDS:
        event["text"] = content
    return event


def stored_event(seq: int, kind: str, content: str, meta_json: str | None) -> RunEvent:
    """A stored row as a `RunEvent` (a merged delta row carries its last seq)."""
    data = row_to_event(seq, kind, content, meta_json)
    last = int(data.pop("seq"))
    data.pop("type")
    return RunEvent(seq=last, type=kind, data=data)


def stored_events(seq: int, kind: str, content: str, meta_json: str | None) -> list[RunEvent]:
    """A stored row as the events it was made of: a merged delta row split back into one
    event per seq (by its `seq_lens`), each with its own text, as they were live. A takeover
    re-opens a run's stream with these (`RunManager`), so an entry's id is the seq of exactly
    its text: a reader that already has seq n skips the entries up to n and doubles nothing
    (one merged entry under its last seq would carry text the reader had). A row merged
    before `seq_lens` existed stays one event."""
    meta = json.loads(meta_json) if meta_json else {}
    last = int(meta.get("seq_to", seq))
    lens = meta.get("seq_lens")
    if kind not in MERGEABLE_KINDS or last == seq:
        return [stored_event(seq, kind, content, meta_json)]
    if not isinstance(lens, list) or len(lens) != last - seq + 1 or sum(lens) != len(content):
        return [stored_event(seq, kind, content, meta_json)]
    rest = {k: v for k, v in meta.items() if k not in ("seq_to", "seq_lens")}
    events, start = [], 0
    for n, length in enumerate(lens):
        events.append(
            RunEvent(seq=seq + n, type=kind, data={**rest, "text": content[start : start + length]})
        )
        start += length
    return events


def seqs_covered(seq: int, meta_json: str | None) -> range:
    """The event seqs one stored row covers."""
    meta = json.loads(meta_json) if meta_json else {}
    return range(seq, int(meta.get("seq_to", seq)) + 1)


def text_after(seq: int, content: str, meta_json: str | None, after_seq: int) -> str | None:
    """The text of a (merged) delta row that comes after `after_seq`, or None when the row
    does not record its per-seq lengths (rows merged before `seq_lens` existed)."""
    meta = json.loads(meta_json) if meta_json else {}
    last = int(meta.get("seq_to", seq))
    if after_seq < seq:
        return content
    if after_seq >= last:
        return ""
    lens = meta.get("seq_lens")
    if not isinstance(lens, list) or len(lens) != last - seq + 1:
        return None
    return content[sum(lens[: after_seq - seq + 1]) :]

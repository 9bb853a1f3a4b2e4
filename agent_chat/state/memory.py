"""The memory drawer of the open conversation.

Thin: the store's `memory_snapshot` gives working memory, recent tool calls, summaries and
statistics; the bridge gives long-term memory (MEMORY.md / USER.md) and saves edits of it:
the signed-in person's own (hermes keeps a home per person, bridge/homes.py).
Loading and saving run as background events, so a slow bridge never holds the tab's state
lock (the live stream of a run keeps flowing while the drawer loads).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, TypedDict

import reflex as rx

from agent_chat.display.rows import tool_row
from agent_chat.runs.client import BridgeError, BridgeUnavailable
from agent_chat.services.memory import (
    CHARS_PER_TOKEN,
    MemorySnapshot,
    SummaryRecord,
    ToolCallRecord,
    conversation_memory,
)
from agent_chat.state.base import SIGNED_OUT, AppState, SignedOut
from agent_chat.state.sidebar import SidebarState

log = logging.getLogger(__name__)

TABS = ("working", "short", "medium", "long")
TEXT_CAP = 4_000  # characters of one text sent to the drawer (the rest is counted, not shown)
WORKING_SHOWN = 200  # newest messages of the working memory listed in the drawer
FOLD_AT = 280  # texts longer than this (or with several lines) are folded
PREVIEW_CHARS = 120
DEFAULT_LIMITS = {"memory": 2200, "user": 1375}  # hermes' defaults, until the bridge answers


class WorkingRow(TypedDict):
    role: str  # "user" | "assistant"
    content: str
    preview: str  # the first line, shortened (the folded view)
    folded: bool
    chars: int


class ShortTermRow(TypedDict):
    tool: str
    args: str  # pretty JSON
    result: str
    duration: str  # "0.4 s"; "" while running
    is_error: bool
    done: bool
    when: str


class SummaryRow(TypedDict):
    id: int
    content: str
    when: str


def _when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


def _cap(text: str, limit: int = TEXT_CAP) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit:,} more characters not shown)"


def working_row(message: dict[str, str]) -> WorkingRow:
    text = message["content"]
    first_line = text.strip().split("\n", 1)[0]
    preview = first_line[:PREVIEW_CHARS]
    folded = len(text) > FOLD_AT or "\n" in text.strip()
    if folded and len(preview) < len(text.strip()):
        preview += " …"
    return WorkingRow(
        role=message["role"],
        content=_cap(text),
        preview=preview,
        folded=folded,
        chars=len(text),
    )


def short_term_row(record: ToolCallRecord) -> ShortTermRow:
    row = tool_row(record.call)
    return ShortTermRow(
        tool=row["tool"],
        args=_cap(row["args"]),
        result=_cap(row["result"]),
        duration=row["duration"],
        is_error=row["is_error"],
        done=row["done"],
        when=_when(record.started_at),
    )


def summary_row(record: SummaryRecord) -> SummaryRow:
    return SummaryRow(
        id=record.message_id, content=_cap(record.content), when=_when(record.created_at)
    )


class MemoryState(AppState):
    """What the drawer shows. Long-term texts are the only thing edited here."""

    open: bool = False
    tab: str = "working"
    loading: bool = False
    load_error: str = ""  # the conversation could not be read

    working: list[WorkingRow] = []
    working_count: int = 0  # messages the next run sends
    working_hidden: int = 0  # older ones of them not listed here
    working_chars: int = 0
    working_tokens: int = 0

    short_term: list[ShortTermRow] = []
    summaries: list[SummaryRow] = []

    stat_branch: int = 0
    stat_tree: int = 0
    stat_tokens: int = 0
    stat_compressions: int = 0
    stat_last_compression: str = ""

    memory_text: str = ""
    user_text: str = ""
    memory_limit: int = DEFAULT_LIMITS["memory"]
    user_limit: int = DEFAULT_LIMITS["user"]
    long_term_loaded: bool = False  # saving is only offered over texts read from the bridge
    long_term_error: str = ""  # reading failed
    saving: bool = False
    save_message: str = ""
    save_ok: bool = False

    _load_gen: int = 0
    # Whose long-term texts the boxes hold: a tab keeps its state across a sign-out and a
    # sign-in as someone else, and one person's texts or unsaved edits must never be shown
    # to, or saved for, the next.
    _long_term_user: int = 0
    # The texts as the bridge last gave them: an edit that differs is unsaved and survives
    # closing and reopening the drawer.
    _stored_memory: str = ""
    _stored_user: str = ""

    @rx.var
    def chars_per_token(self) -> int:
        return CHARS_PER_TOKEN

    @rx.var
    def has_edits(self) -> bool:
        return self._edited

    @rx.var
    def memory_over(self) -> bool:
        return len(self.memory_text) > self.memory_limit

    @rx.var
    def user_over(self) -> bool:
        return len(self.user_text) > self.user_limit

    # ---- opening and loading ---------------------------------------------------------

    @rx.event
    def open_drawer(self):
        self.open = True
        self.save_message = ""
        return MemoryState.load

    @rx.event
    def set_open(self, value: bool):
        self.open = value
        if value:
            return MemoryState.load
        return None

    @rx.event
    def set_tab(self, value: str) -> None:
        if value in TABS:
            self.tab = value

    @rx.event(background=True)
    async def load(self):
        """Read the conversation's memory views and the long-term files, then show them."""
        async with self:
            chat = await self.get_state(SidebarState)
            session_uuid = chat.current_uuid
            me = await self.user_id_or_none()  # whose views and long-term memory, once
            self._load_gen += 1
            generation = self._load_gen
            self.loading = True
        svc = self.svc()
        snapshot: MemorySnapshot | None = None
        error = ""
        if session_uuid and me is not None:
            try:
                snapshot = await conversation_memory(svc, user_id=me, session_uuid=session_uuid)
            except Exception:  # shown, and logged with its traceback
                log.exception("reading the memory views of %s failed", session_uuid)
                error = "The conversation's memory could not be read (see the app's log)."
        long_term: dict[str, Any] | None = None
        long_term_error = ""
        user_id = me or 0  # the signed-in person's memory, always
        if me is None:
            long_term_error = SIGNED_OUT
        else:
            try:
                await svc.runs.memory_handover.ensure()  # an old install's memory: its admin's
                long_term = await svc.bridge.get_memory(user_id=me)
            except BridgeError as exc:
                long_term_error = (
                    f"{exc.message} Long-term memory lives in the agent service, so it cannot "
                    "be shown or edited until the service is running."
                )
        async with self:
            if generation != self._load_gen:
                return  # a newer load is on its way
            self.loading = False
            self.load_error = error
            self._show_snapshot(snapshot)
            self.long_term_error = long_term_error
            if user_id != self._long_term_user:  # another person (or nobody) now
                self._forget_long_term()
                self._long_term_user = user_id
            if long_term is not None:
                self._show_long_term(long_term, keep_edits=True)

    def _show_snapshot(self, snapshot: MemorySnapshot | None) -> None:
        if snapshot is None:
            snapshot_working: list[dict[str, str]] = []
            self.short_term, self.summaries = [], []
            self.stat_branch = self.stat_tree = self.stat_tokens = self.stat_compressions = 0
            self.stat_last_compression = ""
            self.working_chars = self.working_tokens = 0
        else:
            snapshot_working = snapshot.working
            self.short_term = [short_term_row(r) for r in snapshot.tools]
            self.summaries = [summary_row(r) for r in snapshot.summaries]
            stats = snapshot.stats
            self.stat_branch = stats.branch_messages
            self.stat_tree = stats.tree_messages
            self.stat_tokens = stats.tokens_used
            self.stat_compressions = stats.compressions
            self.stat_last_compression = _when(stats.last_compression_at)
            self.working_chars = snapshot.working_chars
            self.working_tokens = snapshot.working_tokens
        shown = snapshot_working[-WORKING_SHOWN:]
        self.working = [working_row(m) for m in shown]
        self.working_count = len(snapshot_working)
        self.working_hidden = len(snapshot_working) - len(shown)

    @property
    def _edited(self) -> bool:
        return self.long_term_loaded and (
            self.memory_text != self._stored_memory or self.user_text != self._stored_user
        )

    def _show_long_term(self, data: dict[str, Any], *, keep_edits: bool = False) -> None:
        """Show the bridge's texts; with `keep_edits`, unsaved edits stay in the boxes."""
        memory, user = str(data.get("memory") or ""), str(data.get("user") or "")
        if keep_edits and self._edited:
            self.save_message = "Your unsaved changes are kept: save them, or discard them."
            self.save_ok = False
        else:
            self.memory_text, self.user_text = memory, user
        self._stored_memory, self._stored_user = memory, user
        limits = data.get("limits") or {}
        self.memory_limit = int(limits.get("memory") or DEFAULT_LIMITS["memory"])
        self.user_limit = int(limits.get("user") or DEFAULT_LIMITS["user"])
        self.long_term_loaded = True

    # ---- long-term memory --------------------------------------------------------------

    def _forget_long_term(self) -> None:
        self.memory_text = self.user_text = self._stored_memory = self._stored_user = ""
        self.long_term_loaded = False
        self.save_message = ""

    @rx.event
    def discard_edits(self) -> None:
        """Back to the texts last read from the agent service."""
        self.memory_text, self.user_text = self._stored_memory, self._stored_user
        self.save_message = ""

    @rx.event
    def set_memory_text(self, value: str) -> None:
        self.memory_text = value
        self.save_message = ""

    @rx.event
    def set_user_text(self, value: str) -> None:
        self.user_text = value
        self.save_message = ""

    @rx.event
    def save_long_term(self, form: dict):
        """Take the texts from the form (the browser's latest) and save them in the background."""
        if not self.long_term_loaded or self.saving:
            return None
        self.memory_text = str(form.get("memory", self.memory_text))
        self.user_text = str(form.get("user", self.user_text))
        self.saving = True
        self.save_message = ""
        return MemoryState.save_in_background

    @rx.event(background=True)
    async def save_in_background(self):
        async with self:
            memory, user, shown_for = self.memory_text, self.user_text, self._long_term_user
        message, ok, saved = "", False, None
        try:
            user_id = await self.user_id()  # the signed-in person's memory, always
            if user_id != shown_for:  # the texts were another person's
                raise SignedOut
            saved = await self.svc().bridge.put_memory(user_id=user_id, memory=memory, user=user)
        except SignedOut:
            message = f"Not saved: {SIGNED_OUT} Copy your text first."
        except BridgeUnavailable as exc:
            message = (
                f"Not saved: {exc.message} Your text is still here; save again when the "
                "agent service is running."
            )
        except BridgeError as exc:
            if exc.status_code == 422:
                message = f"Not saved: {exc.message} Shorten the text and save again."
            else:
                message = f"Not saved: the agent service answered: {exc.message}"
        else:
            ok = True
            message = "Saved. New runs of every conversation of yours will see it."
        async with self:
            self.saving = False
            self.save_ok = ok
            self.save_message = message
            if saved is not None:
                self._show_long_term(saved)  # the files as hermes stores them

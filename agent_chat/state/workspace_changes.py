"""What an answer changed in the workspace, and undo (services/workspace_changes.py): the
dialog "N files changed" opens under an answer. Undo asks first, then says what it did (a
toast), and the footers and the drawer follow (the drawer's words name the undone state)."""

from __future__ import annotations

from typing import TypedDict

import reflex as rx

from agent_chat.common.checkpoint_diff import Change
from agent_chat.services import workspace_changes
from agent_chat.services.errors import Busy
from agent_chat.services.runs import REFUSALS
from agent_chat.state.chat import ChatState

UNDONE_SAID = "The files are back as before this answer. Its changes are undone."


class ChangeRow(TypedDict):
    path: str
    change: str  # added, changed, deleted
    sizes: str  # "1.2 KB → 1.4 KB" (a binary's, or a diff cut short)
    diff: str
    binary: bool


def _size(n: int | None) -> str:
    if n is None:
        return "none"
    for unit in ("bytes", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return ""


def _row(change: Change) -> ChangeRow:
    sizes = ""
    if change.binary or change.truncated:
        sizes = f"{_size(change.size_before)} → {_size(change.size_after)}"
        if change.truncated:
            sizes += " (diff cut short)"
    return ChangeRow(
        path=change.path,
        change=change.change,
        sizes=sizes,
        diff=change.diff,
        binary=change.binary,
    )


class ChangesState(ChatState):
    wc_open: bool = False
    wc_answer: int = 0
    wc_rows: list[ChangeRow] = []
    wc_can_undo: bool = False
    wc_undone: bool = False
    wc_confirm: bool = False
    wc_error: str = ""

    @rx.event
    async def open_changes(self, answer_id: int) -> None:
        self.wc_answer, self.wc_confirm, self.wc_error = answer_id, False, ""
        try:
            found = await workspace_changes.changes_of(
                self.svc(), user_id=await self.user_id(), message_id=answer_id
            )
        except REFUSALS as exc:
            self.show_error(f"Could not list the changes: {exc}")
            return
        self._show(found)
        self.wc_open = True

    def _show(self, found: workspace_changes.AnswerChanges) -> None:
        self.wc_rows = [_row(c) for c in found.changes]
        self.wc_can_undo, self.wc_undone = found.can_undo, found.undone

    @rx.event
    def set_wc_open(self, value: bool) -> None:
        self.wc_open = value
        if not value:
            self.wc_confirm = False

    @rx.event
    def ask_undo(self) -> None:
        self.wc_confirm, self.wc_error = True, ""

    @rx.event
    def cancel_undo(self) -> None:
        self.wc_confirm = False

    @rx.event
    async def undo(self):
        self.wc_confirm = False
        try:
            found = await workspace_changes.undo_changes(
                self.svc(), user_id=await self.user_id(), message_id=self.wc_answer
            )
        except Busy as exc:  # a run, not the shown files, or the disk: said in the dialog
            self.wc_error = str(exc)
            return None
        except REFUSALS as exc:
            self.wc_error = f"Could not undo: {exc}"
            return None
        self._show(found)
        self.wc_open = False
        await self.reload_messages()
        return rx.toast(UNDONE_SAID, duration=4000)

"""The message tree of an "all branches" export, walked in memory."""

from __future__ import annotations

from collections.abc import Sequence

from agent_chat.db.models import ChatMessage


# The store walks one branch per query; "all" already holds every message, so it is walked here.
class MessageTree:
    """Children in version order, and the version each parent continues with."""

    def __init__(self, messages: Sequence[ChatMessage]) -> None:
        self.by_id = {m.id: m for m in messages}
        self.children: dict[int | None, list[ChatMessage]] = {}
        for message in messages:
            self.children.setdefault(message.parent_id, []).append(message)
        # The store's sibling order (`siblings`, `versions_of_branch`): branch_order, then id.
        for group in self.children.values():
            group.sort(key=lambda m: (m.branch_order, m.id or 0))

    def continuation(self, parent_id: int | None) -> ChatMessage | None:
        """The active child (the newest one if the one-active rule was ever broken)."""
        active = [m for m in self.children.get(parent_id, []) if m.is_active]
        return max(active, key=lambda m: (m.branch_order, m.id or 0)) if active else None

    def path_from(self, message: ChatMessage) -> list[ChatMessage]:
        """`message` and the active continuation below it."""
        path = [message]
        while (child := self.continuation(path[-1].id)) is not None:
            path.append(child)
        return path

    def version(self, message: ChatMessage) -> tuple[int, int]:
        """(1-based position among its siblings, their count), like `versions_of_branch`."""
        group = self.children.get(message.parent_id, [message])
        return group.index(message) + 1, len(group)

    def preorder(self) -> list[ChatMessage]:
        """Every message, parents before children, siblings in version order."""
        ordered: list[ChatMessage] = []
        stack = list(reversed(self.children.get(None, [])))
        while stack:
            message = stack.pop()
            ordered.append(message)
            stack.extend(reversed(self.children.get(message.id, [])))
        return ordered

"""The active branch of a session's message tree: one recursive query and the walk from
the root to the leaf, for whole messages (`messages.active_branch`) or a few columns of
each (`conversation.load_conversation` reads a long branch's outline, not its texts)."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import literal
from sqlalchemy.orm import aliased
from sqlmodel import col, select

from agent_chat.db.models import ChatMessage

log = logging.getLogger(__name__)


def branch_select(chat_session_id: int, *columns: Any) -> Any:
    """The rows of the active branch (`columns`, whole messages by default) by depth: one
    recursive query. Give them to `single_path`."""
    root = (
        select(ChatMessage.id, literal(0).label("depth"))
        .where(
            col(ChatMessage.session_id) == chat_session_id,
            col(ChatMessage.parent_id).is_(None),
            col(ChatMessage.is_active).is_(True),
        )
        .cte("branch", recursive=True)
    )
    child = aliased(ChatMessage)
    branch = root.union_all(
        select(child.id, root.c.depth + 1).where(
            child.parent_id == root.c.id,
            child.is_active.is_(True),
        )
    )
    return (
        select(*(columns or (ChatMessage,)))
        .join(branch, col(ChatMessage.id) == branch.c.id)
        .order_by(branch.c.depth)
    )


def single_path(rows: list[Any]) -> list[Any]:
    """Walk root → leaf. If the one-active-sibling rule was ever broken, follow the newest."""
    children: dict[int | None, list[Any]] = {}
    for message in rows:
        children.setdefault(message.parent_id, []).append(message)
    path: list[Any] = []
    parent_id: int | None = None
    while candidates := children.get(parent_id):
        if len(candidates) == 1:
            current = candidates[0]
        else:
            log.warning("Several active siblings under message %s; following the newest", parent_id)
            current = max(candidates, key=lambda m: (m.branch_order, m.id or 0))
        path.append(current)
        parent_id = current.id
    return path

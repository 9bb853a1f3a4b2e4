"""The active branch of a session's message tree: one recursive query and the walk from
the root to the leaf, for whole messages (`messages.active_branch`) or a few columns of
each (`conversation.load_conversation` reads a long branch's outline, not its texts), or
only the ids of its newest messages (`newest_ids`, the first paint's read)."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import func, literal
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from agent_chat.db.models import ChatMessage

log = logging.getLogger(__name__)


def _branch(chat_session_id: int) -> Any:
    """The active branch's (id, depth) from the root down, following active children."""
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
    return root.union_all(
        select(child.id, root.c.depth + 1).where(
            child.parent_id == root.c.id,
            child.is_active.is_(True),
        )
    )


def branch_select(chat_session_id: int, *columns: Any) -> Any:
    """The rows of the active branch (`columns`, whole messages by default) by depth: one
    recursive query. Give them to `single_path`."""
    branch = _branch(chat_session_id)
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


def newest_ids(*, session: Session, chat_session_id: int, limit: int) -> tuple[list[int], int]:
    """The ids of the active branch's newest `limit` messages (root side first) and the
    branch's length. The walk stays in the database and only `limit` rows come out: for a
    20,000-message branch ~30 ms on SQLite, where reading its outline into Python costs
    ~140 ms. (No message knows its depth and no session its leaf, so the walk itself is
    the whole branch's; a walk up from the newest message would have to reach the root to
    know it is on the active branch.)"""
    branch = _branch(chat_session_id)
    query = (
        select(branch.c.id, branch.c.depth, func.count().over().label("total"))
        .order_by(branch.c.depth.desc())
        .limit(limit)
    )
    rows = session.connection().execute(query).all() if limit > 0 else []
    if not rows:
        return [], 0
    total = rows[0].total
    if total == rows[0].depth + 1:  # one message per depth: the branch is a single path
        return [row.id for row in reversed(rows)], total
    # Several active siblings somewhere (a broken rule): follow the newest like the full read.
    outline = (ChatMessage.id, ChatMessage.parent_id, ChatMessage.branch_order)
    path = single_path(session.connection().execute(branch_select(chat_session_id, *outline)).all())
    return [m.id for m in path[-limit:]], len(path)

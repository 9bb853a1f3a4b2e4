"""Full-text search over titles, user messages, answers and the names of the files messages
carry (the index: db/search_schema.py, the text rules: db/search_text.py), and opening a hit
on its branch.

One result per conversation: its newest matching message (any branch, so an older version
of an answer is found too; a message matches by its text or by one of its files' names, each
a document of its own), else its title; newest first. Archived conversations are found
and say so. Any query is valid: its words are turned into index terms here, never passed to
the engine's own syntax.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import TextClause, bindparam, text
from sqlmodel import Session, col, select

from agent_chat.db.errors import NotFound
from agent_chat.db.messages import active_branch, owned_message, set_active
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, SessionStatus
from agent_chat.db.search_schema import ATTACHMENT_FTS, PREFIX_FUNCTION, SEARCHED_ROLES
from agent_chat.db.search_text import (
    Segment,
    Term,
    file_snippet,
    fts5_query,
    highlight,
    parse_query,
    pg_prefix_lookup,
    pg_tsquery,
    snippet,
)

log = logging.getLogger(__name__)

BATCH = 200  # matching messages read at a time, newest first
MAX_SCANNED = 4_000  # a query matching more messages lists what it found so far


@dataclass
class SearchHit:
    session_uuid: str
    title: list[Segment]  # the conversation's title, matched words marked
    snippet: list[Segment]  # around the match (or the first question, for a title match)
    at: datetime  # the matching message's time (a title match: the last activity)
    archived: bool
    message_id: int | None = None  # None: only the title matched
    role: str = ""
    terms: list[Term] = field(default_factory=list)


def _sqlite(session: Session) -> bool:
    return session.get_bind().dialect.name == "sqlite"


def _newest_first(session: Session, query: TextClause, params: dict, limit: int) -> dict[int, int]:
    """Read matches newest first in batches (`query` takes :before and :n) until `limit`
    conversations are found (one conversation may match many times)."""
    found: dict[int, int] = {}
    before, scanned = 2**62, 0
    while len(found) < limit and scanned < MAX_SCANNED:
        rows = session.execute(query, {**params, "before": before, "n": BATCH}).all()
        for message_id, session_id in rows:
            if session_id not in found and len(found) < limit:
                found[session_id] = message_id
        scanned += len(rows)
        if len(rows) < BATCH:
            break
        before = rows[-1][0]
    return found


def _message_hits(session: Session, terms: list[Term], limit: int, owner: int) -> dict[int, int]:
    """session id → id of its newest matching message, for the newest `limit` sessions of
    the person `owner`."""
    if not _sqlite(session):
        return _pg_message_hits(session, pg_tsquery(terms), limit, owner, terms=terms)
    # FTS5 walks its matches newest first and stops at the LIMIT.
    query = text(
        "SELECT m.id, m.session_id FROM chat_message_fts f JOIN chat_message m "
        "ON m.id = f.rowid JOIN chat_session s ON s.id = m.session_id "
        "WHERE chat_message_fts MATCH :q AND f.rowid < :before AND s.owner_id = :owner "
        "ORDER BY f.rowid DESC LIMIT :n"
    )
    return _newest_first(session, query, {"q": fts5_query(terms), "owner": owner}, limit)


PG_ALL_MATCHES = 3_000


PG_MATCH = "search_vector @@ to_tsquery('simple', :q)"
PG_OWNED = "session_id IN (SELECT id FROM chat_session WHERE owner_id = :owner)"


def _pg_prefix_condition(terms: list[Term]) -> tuple[str, dict] | None:
    """The prefix lookup's condition and its parameters besides :q, or None (no prefix).

    It asks the two-column index (db/search_schema.py) for the query's other plain words in
    `search_vector` and for the prefix as one exact lexeme of
    `agent_chat_search_prefixes(search_vector)`, both in one GIN scan, and tests the query
    itself on each row found with ts_match_vq(), which the planner never hands to the index
    (`@@` it would, and `cam:*` makes GIN read every word beginning so): the same rows as
    PG_MATCH by construction.
    """
    lookup = pg_prefix_lookup(terms)
    if lookup is None:
        return None
    words, prefixes = lookup
    where = f"{PREFIX_FUNCTION}(search_vector) @@ CAST(:prefixes AS tsquery)"
    if words:
        where = f"search_vector @@ to_tsquery('simple', :words) AND {where}"
    where += " AND ts_match_vq(search_vector, to_tsquery('simple', :q))"
    return where, {"words": words, "prefixes": prefixes}


def _pg_any_matches(session: Session, terms: list[Term], tsquery: str) -> tuple[str, dict]:
    """The condition of the first query: the prefix lookup when there is a typed prefix,
    unless the planner would read the plain query by a scan of the table (it expects the
    matches to be dense, e.g. a very common word: the scan stops at 3,001 of them at once,
    where the index would gather them all, and a scan cannot use the prefix lookup, whose
    prefixes only the index holds)."""
    prefix = _pg_prefix_condition(terms)
    if prefix is None:
        return PG_MATCH, {}
    plan = session.execute(
        # Without the owner's filter: how dense the matches are is what decides.
        text(f"EXPLAIN SELECT id FROM chat_message WHERE {PG_MATCH} LIMIT :n"),
        {"q": tsquery, "n": PG_ALL_MATCHES + 1},
    ).all()
    if any("Seq Scan" in row[0] for row in plan):
        return PG_MATCH, {}
    return prefix


def _pg_owned(session: Session, rows: list, owner: int) -> list:
    """The rows (id, session_id) whose conversation is the person `owner`'s."""
    ids = list({session_id for _, session_id in rows})
    if not ids:
        return []
    owned = {
        row[0]
        for row in session.execute(
            text("SELECT id FROM chat_session WHERE owner_id = :owner AND id = ANY(:ids)"),
            {"owner": owner, "ids": ids},
        ).all()
    }
    return [row for row in rows if row[1] in owned]


def _pg_message_hits(
    session: Session, tsquery: str, limit: int, owner: int, terms: list[Term] | None = None
) -> dict[int, int]:
    """PostgreSQL: all matches when there are few, else the newest ones.

    First up to 3,000 matches in any order (the planner takes the GIN index for rare words,
    a scan that stops early for common ones; a typed prefix: see _pg_any_matches), of anyone's
    conversations, then the owner's among them by their ids. The owner's condition is not
    in that query: where the planner expects many matches (a prefix alone, a common word:
    its estimates of a GIN match are rough) it joins them to a hash of all the person's
    conversations, 100,000 read per search (60-100 ms at 1,000,000 messages, not 0.5).
    Fewer than 3,001: that is all of them, the owner's sorted here. More, and some of them
    another person's: the owner's own may still be few, so the same query with the owner's
    condition. More of the owner's: the words are common, so the newest matches are dense
    at the end and walking the primary key backwards finds them at once; the bitmap scan is
    turned off for those queries because the planner, counting a match test as cheap, can
    prefer it and read every match.
    """
    where = f"{PG_MATCH} AND {PG_OWNED}"
    first, params = _pg_any_matches(session, terms or [], tsquery)
    query = f"SELECT id, session_id FROM chat_message WHERE {first}"
    params |= {"q": tsquery, "owner": owner, "n": PG_ALL_MATCHES + 1}
    rows = session.execute(text(f"{query} LIMIT :n"), params).all()
    mine = _pg_owned(session, rows, owner)
    if len(rows) > PG_ALL_MATCHES and len(mine) < len(rows):
        mine = session.execute(text(f"{query} AND {PG_OWNED} LIMIT :n"), params).all()
    if len(mine) > PG_ALL_MATCHES:
        session.execute(text("SET LOCAL enable_bitmapscan = off"))
        query = text(
            f"SELECT id, session_id FROM chat_message WHERE {where} AND id < :before "
            "ORDER BY id DESC LIMIT :n"
        )
        found = _newest_first(session, query, {"q": tsquery, "owner": owner}, limit)
        session.execute(text("SET LOCAL enable_bitmapscan = on"))
        return found
    found = {}
    for message_id, session_id in sorted(mine, reverse=True):
        if session_id not in found and len(found) < limit:
            found[session_id] = message_id
    return found


def _attachment_hits(session: Session, terms: list[Term], limit: int, owner: int) -> dict[int, int]:
    """session id → id of its newest message carrying a file whose name matches, for the
    newest `limit` sessions of the person `owner`. The attachment's owner narrows the lookup
    (a message carries only its person's files: link_to_message checks); the conversation's
    owner is the rule, as for messages."""
    if _sqlite(session):
        source = f"{ATTACHMENT_FTS} f JOIN attachment a ON a.id = f.rowid"
        match, q = f"{ATTACHMENT_FTS} MATCH :q", fts5_query(terms)
    else:
        source = "attachment a"
        match, q = "a.search_vector @@ to_tsquery('simple', :q)", pg_tsquery(terms)
    query = text(
        f"SELECT DISTINCT m.id, m.session_id FROM {source} "
        "JOIN message_attachment ma ON ma.attachment_id = a.id "
        "JOIN chat_message m ON m.id = ma.message_id JOIN chat_session s ON s.id = m.session_id "
        f"WHERE {match} AND a.owner_id = :owner AND s.owner_id = :owner "
        f"AND m.role IN {SEARCHED_ROLES} AND m.id < :before ORDER BY m.id DESC LIMIT :n"
    )
    return _newest_first(session, query, {"q": q, "owner": owner}, limit)


def _file_names(session: Session, message_ids: list[int]) -> dict[int, list[str]]:
    """message id → the names of its files, in their order."""
    if not message_ids:
        return {}
    query = text(
        "SELECT ma.message_id, a.name FROM message_attachment ma "
        "JOIN attachment a ON a.id = ma.attachment_id "
        "WHERE ma.message_id IN :ids ORDER BY ma.message_id, ma.position"
    ).bindparams(bindparam("ids", expanding=True))
    names: dict[int, list[str]] = {}
    for message_id, name in session.execute(query, {"ids": message_ids}).all():
        names.setdefault(message_id, []).append(name)
    return names


def _title_hits(session: Session, terms: list[Term], limit: int, owner: int) -> list[int]:
    if _sqlite(session):
        query = text(
            "SELECT f.rowid FROM chat_session_fts f JOIN chat_session s ON s.id = f.rowid "
            "WHERE chat_session_fts MATCH :q AND s.owner_id = :owner "
            "ORDER BY f.rowid DESC LIMIT :n"
        )
        match = fts5_query(terms)
    else:
        query = text(
            "SELECT id FROM chat_session WHERE search_vector @@ to_tsquery('simple', :q) "
            "AND owner_id = :owner ORDER BY last_message_at DESC LIMIT :n"
        )
        match = pg_tsquery(terms)
    params = {"q": match, "owner": owner, "n": limit}
    return [row[0] for row in session.execute(query, params).all()]


def _first_questions(session: Session, session_ids: list[int]) -> dict[int, str]:
    if not session_ids:
        return {}
    query = (
        select(ChatMessage.session_id, ChatMessage.content)
        .where(
            col(ChatMessage.session_id).in_(session_ids),
            col(ChatMessage.parent_id).is_(None),
            col(ChatMessage.is_active).is_(True),
        )
        .order_by(col(ChatMessage.id))
    )
    first: dict[int, str] = {}
    for session_id, content in session.exec(query).all():
        first.setdefault(session_id, content)
    return first


def search(*, session: Session, user_id: int, query: str, limit: int = 30) -> list[SearchHit]:
    """`user_id`'s conversations matching `query`, newest match first (see the module doc)."""
    terms = parse_query(query)
    if not terms:
        return []
    by_text = _message_hits(session, terms, limit, user_id)
    by_file = _attachment_hits(session, terms, limit, user_id)
    by_message = dict(by_text)
    for chat_id, message_id in by_file.items():  # the newer of the two matches
        if message_id > by_message.get(chat_id, 0):
            by_message[chat_id] = message_id
    # Found by a file's name only: the snippet shows the names (the text has no match).
    file_only = [m for c, m in by_file.items() if by_message[c] == m and by_text.get(c) != m]
    names = _file_names(session, file_only)
    by_title = [i for i in _title_hits(session, terms, limit, user_id) if i not in by_message]
    ids = list(by_message) + by_title
    if not ids:
        return []
    # Only the columns shown (rows, not ORM objects: a third of the search's own time).
    chats = {
        row.id: row
        for row in session.execute(
            select(
                ChatSession.id,
                ChatSession.session_uuid,
                ChatSession.title,
                ChatSession.last_message_at,
                ChatSession.status,
            ).where(col(ChatSession.id).in_(ids))
        )
    }
    messages = {
        row.id: row
        for row in session.execute(
            select(
                ChatMessage.id, ChatMessage.content, ChatMessage.created_at, ChatMessage.role
            ).where(col(ChatMessage.id).in_(list(by_message.values())))
        )
    }
    questions = _first_questions(session, by_title)
    hits = []
    for chat_id in ids:
        chat = chats.get(chat_id)
        if chat is None:
            continue
        title = chat.title or "New conversation"
        hit = SearchHit(
            session_uuid=chat.session_uuid,
            title=highlight(title, terms),
            snippet=[],
            at=chat.last_message_at,
            archived=chat.status == SessionStatus.ARCHIVED.value,
            terms=terms,
        )
        message = messages.get(by_message.get(chat_id, -1))
        if message is not None:
            if message.id in names:
                hit.snippet = file_snippet(names[message.id], message.content, terms)
            else:
                hit.snippet = snippet(message.content, terms)
            hit.at = message.created_at
            hit.message_id, hit.role = message.id, message.role
        else:
            hit.snippet = snippet(questions.get(chat_id, ""), [])
        hits.append(hit)
    hits.sort(key=lambda h: h.at, reverse=True)
    return hits[:limit]


@dataclass
class OpenedHit:
    session_uuid: str
    from_end: int  # messages from the hit to the end of its branch, the hit included


def open_hit(*, session: Session, user_id: int, message_id: int, switch: bool = True) -> OpenedHit:
    """Make the branch through `message_id` the active one (unless `switch` is False, e.g.
    while a run works there) and say where the message is on the branch then shown."""
    message = owned_message(session=session, message_id=message_id, user_id=user_id)
    if message is None or message.role == MessageRole.SYSTEM.value:
        raise NotFound(f"Message {message_id} does not exist")
    chat = session.get(ChatSession, message.session_id)
    if switch:
        node: ChatMessage | None = message
        while node is not None:
            if not node.is_active:
                set_active(session=session, message_id=node.id, user_id=user_id)
            node = session.get(ChatMessage, node.parent_id) if node.parent_id else None
    branch = active_branch(session=session, chat_session_id=message.session_id)
    ids = [m.id for m in branch]
    from_end = len(ids) - ids.index(message_id) if message_id in ids else 0
    return OpenedHit(session_uuid=chat.session_uuid, from_end=from_end)

"""The sidebar's full-text search (db/search.py): results with snippets, and opening one on
the branch of the matching message, scrolled to it."""

from __future__ import annotations

import json

import reflex as rx

from agent_chat import routes
from agent_chat.db.errors import StoreError
from agent_chat.display.rows import SearchHitRow, SegmentRow
from agent_chat.services import listing
from agent_chat.services.conversations import conversation_state
from agent_chat.services.listing import SearchHit
from agent_chat.state.chat import PAGE_SIZE, ChatState

# Finds the message once the page shows it (the conversation loads after the navigation),
# scrolls it to the middle and flashes it (assets/styles.css: .search-hit).
_SCROLL_JS = """(function (id, tries) {
  const find = () => document.querySelector('[data-message-id="' + id + '"]');
  const go = (left) => {
    const el = find();
    if (!el) { if (left > 0) setTimeout(() => go(left - 1), 100); return; }
    el.scrollIntoView({block: "center"});
    el.classList.add("search-hit");
    setTimeout(() => { const again = find(); if (again) again.scrollIntoView({block: "center"}); }, 400);
    setTimeout(() => { const again = find(); if (again) again.classList.remove("search-hit"); }, 2500);
  };
  go(tries);
})(%s, 80)"""


def _date(hit: SearchHit) -> str:
    return hit.at.strftime("%Y-%m-%d")


def hit_row(hit: SearchHit) -> SearchHitRow:
    return SearchHitRow(
        uuid=hit.session_uuid,
        message_id=hit.message_id or 0,
        title=[SegmentRow(text=s["text"], mark=s["mark"]) for s in hit.title],
        snippet=[SegmentRow(text=s["text"], mark=s["mark"]) for s in hit.snippet],
        date=_date(hit),
        archived=hit.archived,
    )


class SearchState(ChatState):
    query: str = ""
    results: list[SearchHitRow] = []

    @rx.event
    async def set_query(self, value: str) -> None:
        self.query = value[:200]
        if not self.query.strip():
            self.results = []
            return
        me = await self.user_id()
        hits = await listing.search_conversations(self.svc(), user_id=me, query=self.query)
        self.results = [hit_row(h) for h in hits]

    @rx.event
    def clear_query(self) -> None:
        self.query, self.results = "", []

    @rx.event
    async def open_result(self, session_uuid: str, message_id: int):
        """Open the conversation; for a message, on its branch and scrolled to it."""
        url = routes.chat_url(session_uuid)
        if not message_id:
            return rx.redirect(url)
        svc = self.svc()
        me = await self.user_id()
        try:
            # A run answers on the branch shown: the hit's is not switched to meanwhile.
            running = bool(await conversation_state(svc, user_id=me, session_uuid=session_uuid))
            opened = await listing.open_search_hit(
                svc, user_id=me, message_id=message_id, switch=not running
            )
        except StoreError:  # the conversation too (ConversationNotFound)
            self.show_error("This message no longer exists; the search results were old.")
            await self.set_query(self.query)
            return None
        if running:
            self.show_error("The agent is answering here: the current branch is shown.")
        # As many messages as reach back to the hit (load_chat keeps them for this uuid).
        self.shown_limit = max(PAGE_SIZE, opened.from_end)
        self.editing_id = 0
        scroll = rx.call_script(_SCROLL_JS % json.dumps(message_id))
        # The hit's own conversation (checked as the person's), never the uuid the event
        # named: a raw event could pair one's own message with another person's uuid.
        url = routes.chat_url(opened.session_uuid)
        if self.current_uuid == opened.session_uuid:
            await self.reload_messages()
            return scroll
        self.current_uuid = opened.session_uuid
        return [rx.redirect(url), scroll]

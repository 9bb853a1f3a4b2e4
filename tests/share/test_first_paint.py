"""The first HTML of `/chat/<uuid>` and `/chat` (api/first_paint.py) in front of a stand-in
for the static SPA page: the owner's newest messages and conversation list go in before
`</body>`, escaped, never cached,
the page asked uncompressed and without validators; anyone else, another path, another
kind of answer and a read over the budget get the page as it is. SQLite and PostgreSQL (the
`engine` fixture); the browser's side is tests/e2e/test_41_first_paint.py."""

from __future__ import annotations

import asyncio
import gzip
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from agent_chat.api import first_paint as layer_module
from agent_chat.api.first_paint import FirstPaintLayer
from agent_chat.auth import SCOPE_USER_KEY
from agent_chat.db.engine import open_session
from agent_chat.db.folders import create_folder, move_session, set_collapsed, set_pinned
from agent_chat.db.sessions import create_session, get_session, set_session_status
from agent_chat.runs.storage import Storage
from agent_chat.share_page import first_paint as paint_module
from tests.support.conversations import add_message

PAGE = (
    b"<!DOCTYPE html><html><head></head><body><div id='root'></div><script>x</script></body></html>"
)


class StaticPage:
    """The static page as Reflex serves it: gzip when asked, validators, 304 when they match;
    records the headers each request came with."""

    def __init__(self, *, content_type: str = "text/html; charset=utf-8") -> None:
        self.seen: list[dict[str, str]] = []
        self.content_type = content_type

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        self.seen.append(headers)
        if "http.response.pathsend" in (scope.get("extensions") or {}):
            # Starlette's FileResponse under granian: the path, not the bytes.
            start = [(b"content-type", self.content_type.encode())]
            await send({"type": "http.response.start", "status": 200, "headers": start})
            await send({"type": "http.response.pathsend", "path": "/srv/index.html"})
            return
        if "if-none-match" in headers:
            await send({"type": "http.response.start", "status": 304, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        out = [(b"content-type", self.content_type.encode()), (b"etag", b'"v1"')]
        out.append((b"last-modified", b"Sat, 05 Dec 2026 20:00:00 GMT"))
        body = PAGE
        if "gzip" in headers.get("accept-encoding", ""):
            out.append((b"content-encoding", b"gzip"))
            body = gzip.compress(PAGE)
        out.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": out})
        half = len(body) // 2
        await send({"type": "http.response.body", "body": body[:half], "more_body": True})
        await send({"type": "http.response.body", "body": body[half:]})


def _conversation(
    engine: Engine, user_id: int, *, running: bool = False, answer: str = "On **steep** meadows."
) -> str:
    with open_session(engine) as session:
        chat = create_session(user_id=user_id, session=session, title="Goats <i>and</i> ibex")
        asked = add_message(
            session, chat, None, content="where do ibex <script>alert(1)</script> graze?"
        )
        status = "RUNNING" if running else "SUCCESS"
        add_message(session, chat, asked, role="ASSISTANT", content=answer, status=status)
        return chat.session_uuid


def _client(
    engine: Engine, page: Any, user_id: int | None, *, pathsend: bool = False
) -> httpx.AsyncClient:
    storage = Storage(engine)
    app = FirstPaintLayer(page, lambda: SimpleNamespace(storage=storage))

    async def signed_in(scope: Any, receive: Any, send: Any) -> None:
        if pathsend:  # as granian serves: with the zero-copy file send
            scope = {**scope, "extensions": {"http.response.pathsend": {}}}
        if user_id is not None:
            scope = {**scope, SCOPE_USER_KEY: SimpleNamespace(user_id=user_id)}
        await app(scope, receive, send)

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=signed_in), base_url="http://t")


BROWSER = {"accept-encoding": "gzip, br", "if-none-match": '"v1"'}


async def test_the_owner_gets_the_newest_messages_in_the_page(engine: Engine, user: int) -> None:
    uuid = _conversation(engine, user)
    page = StaticPage()
    async with _client(engine, page, user, pathsend=True) as client:
        got = await client.get(f"/chat/{uuid}", headers=BROWSER)
    assert got.status_code == 200
    text = got.text
    assert text.startswith(PAGE.decode()[: PAGE.index(b"</body>")])
    assert text.endswith("</body></html>")
    assert "data-testid='first-paint'" in text
    assert "where do ibex &lt;script&gt;alert(1)&lt;/script&gt; graze?" in text
    assert "<script>alert(1)" not in text
    assert "<strong>steep</strong>" in text and "Goats &lt;i&gt;and&lt;/i&gt; ibex" in text
    assert "Still being written" not in text
    assert got.headers["cache-control"] == "private, no-store"
    assert "etag" not in got.headers and "last-modified" not in got.headers
    assert "content-encoding" not in got.headers
    assert int(got.headers["content-length"]) == len(got.content)
    # The page was asked as a first visit, uncompressed.
    assert "accept-encoding" not in page.seen[0] and "if-none-match" not in page.seen[0]


async def test_a_running_answer_says_so(engine: Engine, user: int) -> None:
    uuid = _conversation(engine, user, running=True)
    async with _client(engine, StaticPage(), user) as client:
        got = await client.get(f"/chat/{uuid}")
    assert "Still being written" in got.text


async def test_nobody_else_gets_any_of_it(engine: Engine, user: int, other_user: int) -> None:
    uuid = _conversation(engine, user)
    for who in (other_user, None):
        async with _client(engine, StaticPage(), who) as client:
            got = await client.get(f"/chat/{uuid}")
        assert got.content == PAGE, who
        assert "ibex" not in got.text and "first-paint" not in got.text
    async with _client(engine, StaticPage(), user) as client:
        for path in ("/chat/00000000-0000-4000-8000-000000000000", "/chat/not a uuid"):
            got = await client.get(path)
            assert got.content == PAGE, path
    # A new conversation's page of someone with no conversation: nothing to picture.
    async with _client(engine, StaticPage(), other_user) as client:
        assert (await client.get("/chat")).content == PAGE


def _list(engine: Engine, user_id: int) -> dict[str, str]:
    """A pinned conversation, one in an open folder, one in a folded folder, an archived one
    and 45 others (more than the picture lists); their uuids by name."""
    with open_session(engine) as session:
        made = {
            name: create_session(user_id=user_id, session=session, title=name).session_uuid
            for name in ("pinned-one", "filed-open", "filed-folded", "archived-one")
        }
        for i in range(45):
            create_session(user_id=user_id, session=session, title=f"other-{i:02d}")
        set_pinned(session=session, user_id=user_id, session_uuid=made["pinned-one"], pinned=True)
        for name, collapsed in (("Open <folder>", False), ("Folded", True)):
            folder = create_folder(session=session, user_id=user_id, name=name)
            set_collapsed(
                session=session, user_id=user_id, folder_id=folder.id, collapsed=collapsed
            )
            filed = made["filed-open" if not collapsed else "filed-folded"]
            move_session(session=session, user_id=user_id, session_uuid=filed, folder_id=folder.id)
        archived = get_session(session=session, session_uuid=made["archived-one"], user_id=user_id)
        set_session_status(
            session=session, session_id=archived.id, user_id=user_id, status="ARCHIVED"
        )
    return made


def _rows(text: str) -> list[str]:
    return re.findall(
        r"<div class='fp-row( fp-current)?' data-testid='first-paint-row'>([^<]*)<", text
    )


async def test_the_page_shows_the_conversation_list_as_the_sidebar_first_lists_it(
    engine: Engine, user: int
) -> None:
    _list(engine, user)
    uuid = _conversation(engine, user)  # the newest: first of the others
    async with _client(engine, StaticPage(), user) as client:
        opened = (await client.get(f"/chat/{uuid}")).text
        new = (await client.get("/chat")).text
    rows = _rows(opened)
    titles = [title for _, title in rows]
    # Pins, the open folder's conversation, then the others newest first (40 of 46).
    assert titles[:3] == ["pinned-one", "filed-open", "Goats &lt;i&gt;and&lt;/i&gt; ibex"]
    assert titles[3:5] == ["other-44", "other-43"] and len(titles) == 3 + 39
    assert "filed-folded" not in opened and "archived-one" not in opened
    assert "Open &lt;folder&gt;" in opened and "Folded" in opened
    assert "<div class='fp-label'>Pinned</div>" in opened
    assert [title for current, title in rows if current] == ["Goats &lt;i&gt;and&lt;/i&gt; ibex"]
    # Gone once the app shows a message; of a new conversation, once it lists one.
    assert "data-until='[data-testid=message-user],[data-testid=message-assistant]'" in opened
    assert _rows(new) and not any(current for current, _ in _rows(new))
    assert "data-until='[data-testid=session-item],[data-testid=folder-toggle]'" in new
    assert "first-paint-user" not in new and "<div class='fp-head'>New conversation</div>" in new


async def test_an_empty_conversation_shows_the_list(engine: Engine, user: int) -> None:
    with open_session(engine) as session:
        uuid = create_session(user_id=user, session=session, title="nothing yet").session_uuid
    async with _client(engine, StaticPage(), user) as client:
        text = (await client.get(f"/chat/{uuid}/")).text
    assert _rows(text) == [(" fp-current", "nothing yet")]
    assert "data-until='[data-testid=session-item],[data-testid=folder-toggle]'" in text


async def test_a_list_of_folded_folders_only_is_pictured(engine: Engine, user: int) -> None:
    with open_session(engine) as session:
        uuid = create_session(user_id=user, session=session, title="tucked away").session_uuid
        folder = create_folder(session=session, user_id=user, name="Archive box")
        set_collapsed(session=session, user_id=user, folder_id=folder.id, collapsed=True)
        move_session(session=session, user_id=user, session_uuid=uuid, folder_id=folder.id)
    async with _client(engine, StaticPage(), user) as client:
        text = (await client.get("/chat")).text
    # No conversation row: the app's folder row is what replaces the picture.
    assert "Archive box" in text and _rows(text) == []
    assert "[data-testid=folder-toggle]" in text


def test_the_picture_waits_for_what_the_app_really_shows() -> None:
    # Every test id the picture's script waits for is one the app's page has (a renamed one
    # would leave the picture over the app for 30 s).
    sources = "".join(
        path.read_text()
        for folder in ("components", "pages")
        for path in (Path(paint_module.__file__).parents[1] / folder).rglob("*.py")
    )
    for name in (*paint_module.UNTIL_MESSAGES, *paint_module.UNTIL_LIST, paint_module.ALWAYS_UNTIL):
        assert f'"data-testid": "{name}"' in sources or f'tid("{name}")' in sources, name


async def test_other_paths_and_answers_pass_through(engine: Engine, user: int) -> None:
    uuid = _conversation(engine, user)
    page = StaticPage()
    async with _client(engine, page, user) as client:
        other = await client.get("/settings/models", headers=BROWSER)
        assert other.status_code == 304 and page.seen[-1]["accept-encoding"] == "gzip, br"
        posted = await client.post(f"/chat/{uuid}")
        assert "first-paint" not in posted.text
    script = StaticPage(content_type="text/javascript")
    async with _client(engine, script, user) as client:
        got = await client.get(f"/chat/{uuid}")
    assert got.content == PAGE and got.headers["etag"] == '"v1"'


async def test_a_slow_read_sends_the_page_without_it(
    engine: Engine, user: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    uuid = _conversation(engine, user)

    async def slow(*args: Any, **kwargs: Any) -> None:
        await asyncio.sleep(5)

    monkeypatch.setattr(layer_module, "first_paint", slow)
    monkeypatch.setattr(layer_module, "BUDGET_S", 0.05)
    async with _client(engine, StaticPage(), user) as client:
        got = await client.get(f"/chat/{uuid}")
    assert got.content == PAGE
    assert got.headers["cache-control"] == "private, no-store"


async def test_a_long_answer_shows_its_end_only(engine: Engine, user: int) -> None:
    answer = "start-of-it " + "word " * 200_000 + "the-last-words"
    uuid = _conversation(engine, user, answer=answer)
    async with _client(engine, StaticPage(), user) as client:
        got = await client.get(f"/chat/{uuid}")
    assert "the-last-words" in got.text and "start-of-it" not in got.text
    assert len(got.content) < 20_000

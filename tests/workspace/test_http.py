"""`GET /api/chat/sessions/{uuid}/workspace/{path}`: downloads of a conversation's own files,
404 for every way out (traversal in any spelling, absolute paths, links out, other
conversations, folders), behind the login gate and the Host/Origin guard."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import Engine
from sqlmodel import select

from agent_chat.api.workspace_files import FILE_CSP, workspace_router
from agent_chat.auth import GateConfig, LoginGate
from agent_chat.auth.origins import OriginGuard
from agent_chat.common.hosts import Allowed
from agent_chat.db import users
from agent_chat.db.engine import open_session
from agent_chat.db.models import ChatSession
from agent_chat.db.sessions import create_session
from agent_chat.routes import file_url
from agent_chat.runs.storage import Storage
from tests.support.users import acting_as, default_owner
from tests.support.workspaces import Workspaces

PNG = bytes.fromhex("89504e470d0a1a0a") + b"\0" * 16


@pytest.fixture
def conversations(engine: Engine, workspaces: Workspaces, user: int) -> Workspaces:
    """The two conversations of the workspaces fixture, stored (their folders exist)."""
    with open_session(engine) as session:
        for name in ("mine", "other"):
            chat = create_session(user_id=user, session=session)
            folder = workspaces.root / chat.session_uuid
            (workspaces.root / getattr(workspaces, name)).rename(folder)
            setattr(workspaces, name, chat.session_uuid)
    folder = workspaces.folder
    (folder / "pic.png").write_bytes(PNG)
    (folder / "page.html").write_text("<script>alert(1)</script>", encoding="utf-8")
    (folder / "café ünï.txt").write_text("unicode name", encoding="utf-8")
    (folder / "to-outside").symlink_to(workspaces.outside)
    (folder / "to-other").symlink_to(workspaces.root / workspaces.other / "secret.txt")
    (folder / "dir-out").symlink_to(workspaces.outside.parent, target_is_directory=True)
    (folder / "inner-link").symlink_to(folder / "hello.py")
    os.mkfifo(folder / "pipe")
    return workspaces


def api(engine: Engine, root: Path, *, gated: bool = False) -> Any:
    """The route, acting for the conversations' owner (or, `gated`, for whom the login gate
    in front says)."""
    app = FastAPI()
    storage = Storage(engine)
    # What the route reaches of the services (services/backend.py): the storage here.
    backend = SimpleNamespace(storage=storage)
    app.include_router(workspace_router(lambda: backend, lambda: root))
    return app if gated else acting_as(app, storage.call_sync(default_owner))


@pytest.fixture
async def client(engine: Engine, conversations: Workspaces) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=api(engine, conversations.root))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        yield client


async def raw_get(app, path: str, query: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """A request whose path reaches the app exactly as written (like `curl --path-as-is`):
    no client normalising `..` away first."""
    sent: list[dict] = []
    received = False

    async def receive() -> dict:
        nonlocal received
        if received:  # then the client waits, as a connected one does
            await asyncio.Event().wait()
        received = True
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "raw_path": path.encode("utf-8", "surrogateescape"),
        "query_string": query, "headers": [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80), "root_path": "",
    }  # fmt: skip
    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, body


async def test_downloads_a_file_as_an_attachment_with_its_type(
    client: httpx.AsyncClient, conversations: Workspaces
) -> None:
    reply = await client.get(file_url(conversations.mine, "src/notes.md"))
    assert reply.status_code == 200
    assert reply.content == b"# Notes\n"
    assert reply.headers["content-type"] == "text/markdown; charset=utf-8"
    assert reply.headers["content-disposition"] == 'attachment; filename="notes.md"'
    assert reply.headers["content-length"] == "8"
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.headers["content-security-policy"] == FILE_CSP
    assert reply.headers["cache-control"] == "no-store"
    py = await client.get(file_url(conversations.mine, "hello.py"))
    assert py.headers["content-type"] == "text/x-python; charset=utf-8"
    linked = await client.get(file_url(conversations.mine, "inner-link"))
    assert linked.status_code == 200 and linked.content == b"print('hi')\n"


async def test_unicode_names_get_an_ascii_fallback_and_the_utf8_name(
    client: httpx.AsyncClient, conversations: Workspaces
) -> None:
    reply = await client.get(file_url(conversations.mine, "café ünï.txt"))
    assert reply.status_code == 200
    assert reply.headers["content-disposition"] == (
        "attachment; filename=\"cafe uni.txt\"; filename*=UTF-8''caf%C3%A9%20%C3%BCn%C3%AF.txt"
    )


async def test_only_raster_images_are_ever_inline(
    client: httpx.AsyncClient, conversations: Workspaces
) -> None:
    image = await client.get(file_url(conversations.mine, "pic.png", inline=True, version="1"))
    assert image.status_code == 200 and image.content == PNG
    assert image.headers["content-type"] == "image/png"
    assert image.headers["content-disposition"] == 'inline; filename="pic.png"'
    page = await client.get(file_url(conversations.mine, "page.html", inline=True))
    assert page.headers["content-disposition"] == 'attachment; filename="page.html"'
    assert page.headers["content-security-policy"] == FILE_CSP  # sandboxed even if opened


TRAVERSALS = [
    "../{other}/secret.txt",
    "src/../../{other}/secret.txt",
    "%2e%2e/{other}/secret.txt",
    "%2E%2E%2F{other}%2Fsecret.txt",
    "..%2f..%2foutside.txt",
    "src/%2e%2e/%2e%2e/%2e%2e/outside.txt",
    "%252e%252e/{other}/secret.txt",
    "..%5c{other}%5csecret.txt",
    "/etc/passwd",
    "%2fetc%2fpasswd",
    "//etc/passwd",
    "to-outside",
    "to-other",
    "dir-out/outside.txt",
    "src",
    "pipe",
    "missing.txt",
    "",
    "hello.py%00.png",
]


@pytest.mark.parametrize("form", TRAVERSALS)
async def test_every_way_out_answers_404(
    engine: Engine, client: httpx.AsyncClient, conversations: Workspaces, form: str
) -> None:
    relative = form.format(other=conversations.other)
    prefix = f"/api/chat/sessions/{conversations.mine}/workspace/"
    reply = await client.get(prefix + relative)
    assert reply.status_code == 404, reply.text
    # The same path as a raw client sends it, decoded the way the server decodes it.
    from urllib.parse import unquote

    app = api(engine, conversations.root)
    status, _, body = await raw_get(app, unquote(prefix + relative))
    assert status == 404, body
    assert (await raw_get(app, prefix + "src/../hello.py"))[0] == 200  # the control
    assert b"secret" not in body and b"not in any workspace" not in body


async def test_files_of_unknown_deleted_or_malformed_conversations_answer_404(
    engine: Engine, client: httpx.AsyncClient, conversations: Workspaces, user: int
) -> None:
    import uuid

    from agent_chat.db.sessions import delete_session

    stranger = str(uuid.uuid4())
    (conversations.root / stranger).mkdir()
    (conversations.root / stranger / "x.txt").write_text("no conversation owns this")
    assert (await client.get(file_url(stranger, "x.txt"))).status_code == 404
    assert (await client.get("/api/chat/sessions/..%2F/workspace/x.txt")).status_code == 404
    with open_session(engine) as session:
        delete_session(user_id=user, session=session, session_uuid=conversations.other)
    assert (await client.get(file_url(conversations.other, "secret.txt"))).status_code == 404
    assert (await client.get(file_url(conversations.mine, "hello.py"))).status_code == 200


async def test_behind_the_login_gate_and_the_host_origin_guard(
    engine: Engine, conversations: Workspaces
) -> None:
    storage = Storage(engine)
    admin = storage.call_sync(users.create_user, username="admin", password="password-1")
    config = GateConfig(session_seconds=3600)
    gated = LoginGate(
        api(engine, conversations.root, gated=True),
        storage=lambda: storage,
        config_loader=lambda: config,
    )
    guarded = OriginGuard(gated, Allowed.from_env(None, None))
    transport = httpx.ASGITransport(app=guarded)
    url = file_url(conversations.mine, "hello.py")
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:3000") as c:
        assert (await c.get(url)).status_code == 401
        assert (await c.get(url, headers={"host": "evil.example"})).status_code == 400
        origin = {"origin": "http://evil.example"}
        assert (await c.get(url, headers=origin)).status_code == 403
        login = await c.post("/api/login", json={"username": "admin", "password": "password-1"})
        assert login.status_code in (200, 303), login.text
        assert (await c.get(url)).status_code == 404  # signed in, but someone else's files
        storage.call_sync(_give, session_uuid=conversations.mine, user_id=admin.id)
        reply = await c.get(url)
        assert reply.status_code == 200 and reply.content == b"print('hi')\n"


def _give(*, session: Any, session_uuid: str, user_id: int) -> None:
    chat = session.exec(select(ChatSession).where(ChatSession.session_uuid == session_uuid)).one()
    chat.owner_id = user_id


async def test_the_app_api_serves_the_route(
    engine: Engine, conversations: Workspaces, monkeypatch: pytest.MonkeyPatch, user: int
) -> None:
    from types import SimpleNamespace

    from agent_chat.api import create_api

    monkeypatch.setenv("AGENT_CHAT_WORKSPACES_DIR", str(conversations.root))
    backend = SimpleNamespace(storage=Storage(engine))
    transport = httpx.ASGITransport(app=acting_as(create_api(lambda: backend), user))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        reply = await client.get(file_url(conversations.mine, "hello.py"))
        assert reply.status_code == 200 and reply.content == b"print('hi')\n"
        assert (await client.get(file_url(conversations.mine, "to-other"))).status_code == 404

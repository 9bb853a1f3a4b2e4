"""A share link names a user message's files (name and size) and nothing more: no bytes, no
id, no hash, no download URL (the page is public, the files are private); a picture shows a
thumbnail frozen in the snapshot; the snapshot is frozen, so a file attached later is not
shown; a link made before files existed (snapshot version 1) still renders."""

from __future__ import annotations

import base64
import io
import json
from datetime import timedelta
from types import SimpleNamespace

import httpx
import pytest
from PIL import Image
from sqlalchemy import Engine

from agent_chat.api import create_api
from agent_chat.db.attachment_models import MessageAttachment
from agent_chat.db.attachment_notes import message_attachments
from agent_chat.db.engine import open_session
from agent_chat.db.models import ShareLink
from agent_chat.runs.storage import Storage
from agent_chat.services import attachments as use
from agent_chat.services import shares
from agent_chat.share_page.links import create_share, picture_path, share_path
from agent_chat.share_page.render import share_html
from tests.export.attached import CSV, PNG, attached_conversation, backend, stream


@pytest.fixture
def svc(storage: Storage) -> SimpleNamespace:
    return backend(storage)


def _share(engine: Engine, uuid: str, user: int):
    with open_session(engine) as session:
        return create_share(session=session, session_uuid=uuid, user_id=user)


async def test_the_shared_page_names_the_files_and_links_none(engine, svc, user) -> None:
    conv = await attached_conversation(engine, svc, user)
    new = _share(engine, conv.uuid, user)
    snapshot = json.loads(new.row.snapshot_json)
    assert snapshot["version"] == 3
    user_messages = [m for m in snapshot["messages"] if m["kind"] == "user"]
    assert user_messages[0]["files"] == [
        {"name": "cities.csv", "size": len(CSV)},
        {"name": "map.png", "size": len(PNG)},
    ]
    assert "files" not in user_messages[1]

    transport = httpx.ASGITransport(app=create_api(lambda: svc))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        page = await client.get(share_path(new.token))
    assert page.status_code == 200
    html = page.text
    assert "📎 cities.csv <span class='size'>(37 bytes)</span>" in html
    assert f"📎 map.png <span class='size'>({len(PNG) / 1000:.1f} kB)</span>" in html
    files = _files_of(engine, conv.question, user)
    for leak in (
        "/api/chat/attachments",
        "attachment",
        "Rome,Italy",  # the CSV's bytes
        base64.b64encode(CSV).decode()[:16],
        *(f.sha256 for f in files),
        *(f.storage_key for f in files),
    ):
        assert leak not in html and leak not in new.row.snapshot_json
    assert "<a " not in html.split("<ul class='files'>", 1)[1].split("</ul>", 1)[0]


async def test_the_snapshot_is_frozen_and_an_old_one_still_renders(engine, svc, user) -> None:
    conv = await attached_conversation(engine, svc, user)
    new = _share(engine, conv.uuid, user)
    later = await use.upload(svc, user_id=user, name="later.txt", chunks=stream(b"later\n"))
    await use.link_to_message(
        svc, user_id=user, message_id=conv.followup, attachment_ids=[later.id or 0]
    )
    with open_session(engine) as session:
        stored = session.get(ShareLink, new.row.id)
        assert stored is not None
        assert "later.txt" not in share_html(stored.snapshot_json, token="t" * 32)
    old = json.loads(new.row.snapshot_json)
    old["version"] = 1
    for message in old["messages"]:
        message.pop("files", None)
    page = share_html(json.dumps(old), token="t" * 32)
    assert "Where are these?" in page and "📎" not in page


def _photo(color: str, size: tuple[int, int] = (1200, 800)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


async def test_a_picture_shows_its_frozen_thumbnail_to_anyone_with_the_link(
    engine, svc, user
) -> None:
    """A readable picture keeps a small WebP thumbnail in the snapshot, served at
    `/s/<token>/pictures/<n>` (never the file's bytes); an unreadable `.png` stays a name; the
    thumbnail outlives the file; a revoked link serves none."""
    conv = await attached_conversation(engine, svc, user)  # map.png there is no real picture
    big = _photo("red")
    photo = await use.upload(svc, user_id=user, name="photo.png", chunks=stream(big))
    await use.link_to_message(
        svc, user_id=user, message_id=conv.followup, attachment_ids=[photo.id or 0]
    )
    new = await shares.create_share_link(svc, user_id=user, session_uuid=conv.uuid)
    snapshot = json.loads(new.row.snapshot_json)
    files = [f for m in snapshot["messages"] for f in m.get("files", [])]
    assert [("picture" in f) for f in files] == [False, False, True]

    transport = httpx.ASGITransport(app=create_api(lambda: svc))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        html = (await client.get(share_path(new.token))).text
        assert f"<img src='{picture_path(new.token, 0)}' alt='photo.png'" in html
        assert "📎 map.png" in html and html.count("<img ") == 1
        assert (
            "img-src 'self'"
            in (await client.get(share_path(new.token))).headers["content-security-policy"]
        )
        thumb = await client.get(picture_path(new.token, 0))
        assert thumb.status_code == 200
        assert thumb.headers["content-type"] == "image/webp"
        assert thumb.headers["x-content-type-options"] == "nosniff"
        with Image.open(io.BytesIO(thumb.content)) as image:
            assert image.format == "WEBP" and max(image.size) == 320
            assert image.getpixel((10, 10))[0] > 200  # red, the picture's
        assert len(thumb.content) < len(big) and big not in new.row.snapshot_json.encode()
        assert (await client.get(picture_path(new.token, 1))).status_code == 404

        # The file goes (its message deleted, the sweep run): the link still shows it.
        with open_session(engine) as session:
            session.execute(
                MessageAttachment.__table__.delete().where(
                    MessageAttachment.attachment_id == photo.id
                )
            )
            session.commit()
        assert await use.delete_unused(svc, grace=timedelta(0)) >= 1
        assert (await client.get(picture_path(new.token, 0))).content == thumb.content

        await shares.revoke_share_link(svc, user_id=user, share_id=new.row.id or 0)
        gone = await client.get(picture_path(new.token, 0))
        assert gone.status_code == 404 and gone.content == b""


def _files_of(engine: Engine, message_id: int, user: int):
    with open_session(engine) as session:
        rows = message_attachments(session=session, message_ids=[message_id])[message_id]
        assert all(r.owner_id == user for r in rows)
        return rows

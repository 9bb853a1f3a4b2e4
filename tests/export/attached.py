"""A small conversation whose user messages carry files, uploaded through the attachments'
use case (services/attachments.upload) as the page and the API do; shared by the export,
import and share tests of files."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import SimpleNamespace

from sqlalchemy import Engine

from agent_chat.db.engine import open_session
from agent_chat.db.messages import append_message
from agent_chat.db.sessions import create_session
from agent_chat.runs.storage import Storage
from agent_chat.services import attachments as use

CSV = b"city,country\nRome,Italy\nParis,France\n"  # 37 bytes
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + bytes(range(256)) * 4


def backend(storage: Storage, *, max_upload_mb: int = 2) -> SimpleNamespace:
    """The use cases' backend: the database store (no bucket), a small upload limit."""
    return SimpleNamespace(
        storage=storage, settings=SimpleNamespace(max_upload_mb=max_upload_mb, s3=None)
    )


async def stream(data: bytes, piece: int = 16 * 1024) -> AsyncIterator[bytes]:
    for start in range(0, len(data), piece):
        yield data[start : start + piece]


async def download(svc: SimpleNamespace, user: int, attachment_id: int) -> bytes:
    _, chunks = await use.open_download(svc, user_id=user, attachment_id=attachment_id)
    return b"".join([c async for c in chunks])


@dataclass
class Attached:
    uuid: str
    question: int  # the user message with cities.csv and map.png
    answer: int
    followup: int  # a user message without files


async def attached_conversation(engine: Engine, svc: SimpleNamespace, user: int) -> Attached:
    """ "Where are these?" with cities.csv and map.png, an answer, then a message without."""
    with open_session(engine) as session:
        chat = create_session(user_id=user, session=session, title="Cities")
        question = append_message(
            session=session, chat_session_id=chat.id, parent_id=None, role="USER",
            content="Where are these?", status="SENT",
        )  # fmt: skip
        answer = append_message(
            session=session, chat_session_id=chat.id, parent_id=question.id, role="ASSISTANT",
            content="In Europe.", status="SUCCESS",
        )  # fmt: skip
        followup = append_message(
            session=session, chat_session_id=chat.id, parent_id=answer.id, role="USER",
            content="Thanks", status="SENT",
        )  # fmt: skip
        ids = Attached(chat.session_uuid, question.id or 0, answer.id or 0, followup.id or 0)
    csv = await use.upload(svc, user_id=user, name="cities.csv", chunks=stream(CSV))
    png = await use.upload(svc, user_id=user, name="map.png", chunks=stream(PNG))
    await use.link_to_message(
        svc, user_id=user, message_id=ids.question, attachment_ids=[csv.id or 0, png.id or 0]
    )
    return ids

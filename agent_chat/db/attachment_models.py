"""The attachments' tables: a file a person uploaded, its bytes when they are kept
in the database, and which messages use it. Imported by `db/models.py`, so they are on
`SQLModel.metadata` with the others; they import nothing of it (tables are named by string).

- `attachment`: one per owner, content and name (`uq_attachment_owner_sha256_name`): the same
  person uploading the same file again gets the same row; the same bytes under another name
  are a row of their own (the name is what the message shows and the agent is told). `media_type` is
  sniffed from the content (`services/attachment_kinds.py`), never taken from the client.
  `storage_key` names the bytes in the store (`services/attachment_stores.py`): the rows of
  `attachment_chunk` with that key, or the S3 object of that key.
- `attachment_chunk`: the bytes in order, at most `CHUNK_BYTES` a row, so neither an upload
  nor a download holds the whole file. Keyed by the storage key, not the attachment: the
  chunks are written while the upload streams, before the row (whose sha256 is known only at
  the end) exists; chunks no attachment names are swept with the unused attachments.
- `message_attachment`: a message's attachments, in `position` order.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import BigInteger, DateTime, LargeBinary, UniqueConstraint
from sqlmodel import Field, SQLModel

CHUNK_BYTES = 1024 * 1024  # 1 MiB a row
# What the agent gets as an image part and the page shows as a picture (no SVG: a script).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)  # naive UTC, as models.utcnow


class Attachment(SQLModel, table=True):
    __tablename__ = "attachment"
    __table_args__ = (
        UniqueConstraint("owner_id", "sha256", "name", name="uq_attachment_owner_sha256_name"),
        UniqueConstraint("storage_key", name="uq_attachment_storage_key"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    owner_id: int = Field(foreign_key="app_user.id", ondelete="CASCADE")
    sha256: str = Field(max_length=64)
    name: str = Field(max_length=255)
    media_type: str = Field(max_length=127)
    size: int = Field(sa_type=BigInteger)
    storage_key: str = Field(max_length=64)
    created_at: datetime = Field(default_factory=_now, sa_type=DateTime, index=True)


class AttachmentChunk(SQLModel, table=True):
    __tablename__ = "attachment_chunk"
    __table_args__ = ({"extend_existing": True},)

    storage_key: str = Field(max_length=64, primary_key=True)
    seq: int = Field(primary_key=True)
    data: bytes = Field(sa_type=LargeBinary)
    created_at: datetime = Field(default_factory=_now, sa_type=DateTime)


class MessageAttachment(SQLModel, table=True):
    __tablename__ = "message_attachment"
    __table_args__ = ({"extend_existing": True},)

    message_id: int = Field(foreign_key="chat_message.id", ondelete="CASCADE", primary_key=True)
    attachment_id: int = Field(
        foreign_key="attachment.id", ondelete="CASCADE", primary_key=True, index=True
    )
    position: int = 0
    # Where the file was saved in the conversation's workspace for this message's run
    # ("attachments/data (2).csv"); None outside a Workspace run or when the copy failed.
    workspace_path: str | None = Field(default=None, max_length=300)

"""What the agent receives of a message's attachments, built here only.

The rule, per attachment, in the message's order:
- **Text-like** (`text/*`, which is what a UTF-8 file sniffs as, JSON, XML, YAML, JavaScript):
  inline in the message's text part as a fenced block headed by the file's name, at most
  `TEXT_LIMIT` characters a file (invalid UTF-8 replaced); a longer file is cut and the
  heading says so.
- **PDFs** (sniffed `application/pdf`): their text, the same fenced block, of at most the first
  `attachment_pdf.MAX_PAGES` pages and `TEXT_LIMIT` characters (a cut said), read in a child
  process with a time and memory limit (services/attachment_pdf.py); an encrypted, damaged or
  image-only PDF, or one too slow to read, is one line saying why its text is missing.
- **Images** (PNG, JPEG, GIF, WebP): an OpenAI `image_url` part with a base64 `data:` URL
  when the model is marked `supports_images`; otherwise one line naming the image
  (`[image photo.png attached: this model does not read images]`).
- **Anything else**: one line with its name, type and size (its content is not sent).

With the Workspace tool profile every file is also copied into the conversation's folder as
`attachments/<name>` and a line under its block names the path, or says why it could not be
saved (services/attachment_workspace.py): the agent opens it with its file tools.

With attachments the message is a list of content parts (`[{"type": "text", ...},
{"type": "image_url", ...}]`, the shape hermes' `run_conversation` takes); without, the
plain text, exactly as before. Later turns carry only a note naming them
(db/attachment_notes.py).
"""

from __future__ import annotations

import base64
from typing import Any

from agent_chat.common.tool_profiles import uses_workspace
from agent_chat.db import attachments as attachments_store
from agent_chat.db import messages, turns
from agent_chat.db.attachment_models import IMAGE_TYPES, Attachment
from agent_chat.db.attachment_notes import human_size, message_attachments
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.services import attachment_pdf, attachment_workspace
from agent_chat.services.attachment_kinds import PDF
from agent_chat.services.attachment_stores import store_for
from agent_chat.services.attachments import MAX_PER_MESSAGE, get_attachment
from agent_chat.services.ids import row_id

TEXT_LIMIT = 100_000  # characters of one text-like file inline
TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/x-yaml",
        "application/yaml",
        "application/javascript",
        "application/sql",
        "application/x-sh",
    }
)

ContentPart = dict[str, Any]


def is_text(media_type: str) -> bool:
    return media_type.startswith("text/") or media_type in TEXT_TYPES


async def _read(svc: Any, row: Attachment, limit: int | None = None) -> bytes:
    """The attachment's bytes (the first `limit` or a little more, when given)."""
    data = bytearray()
    chunks = store_for(svc).open(row.storage_key)
    try:
        async for chunk in chunks:
            data.extend(chunk)
            if limit is not None and len(data) >= limit:
                break
    finally:
        await chunks.aclose()
    return bytes(data if limit is None else data[:limit])


def _block(name: str, about: str, text: str) -> str:
    """The text as a fenced block under the file's name; the fence outlasts any inside."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"[attached file {name} ({about})]\n{fence}{name}\n{text}\n{fence}"


def fenced(name: str, text: str, *, size: int, truncated: bool) -> str:
    """A text file's block: its size, and the cut when `truncated`."""
    cut = (
        f", cut: the first {TEXT_LIMIT:,} characters of {human_size(size)} are shown"
        if truncated
        else ""
    )
    return _block(name, human_size(size) + cut, text)


async def text_block(svc: Any, row: Attachment) -> str:
    # A character is at most 4 bytes of UTF-8: this many bytes hold TEXT_LIMIT characters.
    raw = await _read(svc, row, limit=4 * TEXT_LIMIT + 4)
    text = raw.decode("utf-8", errors="replace")
    truncated = len(text) > TEXT_LIMIT or len(raw) < row.size  # more bytes: more characters
    return fenced(row.name, text[:TEXT_LIMIT], size=row.size, truncated=truncated)


def _pages(n: int) -> str:
    return f"{n:,} page" + ("" if n == 1 else "s")


async def pdf_block(svc: Any, row: Attachment) -> str:
    """The PDF's text as a fenced block, or a line saying why there is none."""
    if row.size > attachment_pdf.MAX_BYTES:
        got = attachment_pdf.PdfText(error=attachment_pdf.TOO_LARGE)
    else:  # the limit read, not the row's size, bounds what is held
        data = await _read(svc, row, limit=attachment_pdf.MAX_BYTES + 1)
        got = await attachment_pdf.extract(data, max_chars=TEXT_LIMIT)
    what = "a PDF" if got.pages is None else f"a PDF of {_pages(got.pages)}"
    about = f"{what}, {human_size(row.size)}"
    if got.error is not None:
        return f"[file {row.name} attached ({about}): its text could not be read ({got.error})]"
    cut = ""
    if got.cut and got.pages_read < (got.pages or 0) and len(got.text) < TEXT_LIMIT:
        cut = f", cut: the first {_pages(got.pages_read)} of {got.pages:,} are shown"
    elif got.cut:
        cut = (
            f", cut: its first {TEXT_LIMIT:,} characters are shown,"
            f" which end on page {got.pages_read:,} of {got.pages:,}"
        )
    return _block(row.name, f"{about}; its text{cut}", got.text)


def other_note(row: Attachment) -> str:
    return (
        f"[file {row.name} attached ({row.media_type}, {human_size(row.size)}): "
        "its content is not shown to you]"
    )


def image_note(row: Attachment) -> str:
    return f"[image {row.name} attached: this model does not read images]"


async def agent_message(
    svc: Any,
    *,
    text: str,
    attachments: list[Attachment],
    sees_images: bool,
    workspace: str | None = None,
    saved: dict[int, str] | None = None,
) -> str | list[ContentPart]:
    """The message the agent is sent: `text` alone without attachments, else content parts
    (the text part first: the person's text, then each file's block or note). `workspace`:
    the conversation's uuid when its run has the Workspace profile (each file is saved
    there and its block says where; `saved` gets each saved file's path by its id)."""
    if not attachments:
        return text
    blocks = [text]
    images: list[ContentPart] = []
    for row in attachments:
        if row.media_type in IMAGE_TYPES and sees_images:
            data = base64.b64encode(await _read(svc, row)).decode("ascii")
            url = f"data:{row.media_type};base64,{data}"
            images.append({"type": "image_url", "image_url": {"url": url}})
            block = f"[image {row.name} attached ({human_size(row.size)})]"
        elif row.media_type in IMAGE_TYPES:
            block = image_note(row)
        elif is_text(row.media_type):
            block = await text_block(svc, row)
        elif row.media_type == PDF:
            block = await pdf_block(svc, row)
        else:
            block = other_note(row)
        if workspace is not None:
            line, path = await attachment_workspace.save_line(svc, session_uuid=workspace, row=row)
            block = f"{block}\n{line}"
            if path is not None and saved is not None and row.id is not None:
                saved[row.id] = path
        blocks.append(block)
    return [{"type": "text", "text": "\n\n".join(blocks)}, *images]


def _run_target(
    *,
    session: Any,
    session_uuid: str,
    user_id: int,
    model_id: int | None,
    tool_profile: str | None,
    enabled_profiles: tuple[str, ...],
) -> tuple[bool, bool]:
    """Whether the run's model reads images, and whether the run works in the conversation's
    folder: its model and profile as the turn will choose them (`turns.agent_target`: the
    chosen ones, else the conversation's, else the default)."""
    try:
        target = turns.agent_target(
            session=session,
            session_uuid=session_uuid,
            user_id=user_id,
            model_id=model_id,
            tool_profile=tool_profile,
            enabled_profiles=enabled_profiles,
        )
    except turns.Refused:
        return False, False  # no model, or a profile not enabled: the turn refuses it
    return bool(target.model.supports_images), uses_workspace(target.tool_profile)


async def _message(
    svc: Any,
    *,
    user_id: int,
    session_uuid: str,
    model_id: int | None,
    tool_profile: str | None,
    text: str,
    rows: list[Attachment],
    saved: dict[int, str] | None = None,
) -> str | list[ContentPart]:
    sees, in_workspace = await svc.storage.call(
        _run_target,
        session_uuid=session_uuid,
        user_id=user_id,
        model_id=model_id,
        tool_profile=tool_profile,
        enabled_profiles=svc.settings.tool_profiles,
    )
    return await agent_message(
        svc,
        text=text,
        attachments=rows,
        sees_images=sees,
        workspace=session_uuid if in_workspace else None,
        saved=saved,
    )


async def for_run(
    svc: Any,
    *,
    user_id: int,
    session_uuid: str,
    model_id: int | None,
    text: str,
    attachment_ids: list[int],
    tool_profile: str | None = None,
    saved: dict[int, str] | None = None,
) -> tuple[tuple[int, ...], str | list[ContentPart] | None]:
    """The attachments of a new message, checked as the person's, and the agent's message
    made of them (None without attachments: the turn's text is sent). A bad id is a
    `ValidationFailed` naming `attachmentIds` (the conversation exists: the request's body is
    what is wrong), the same for another person's id as for a missing one; so is more
    than MAX_PER_MESSAGE. `tool_profile`: the one chosen for this run (None: the
    conversation's), which says whether the files are saved in its workspace (`saved` gets
    their paths there, for `remember_saved`)."""
    ids = tuple(dict.fromkeys(row_id(i, "Attachment") for i in attachment_ids))
    if len(ids) > MAX_PER_MESSAGE:
        message = f"At most {MAX_PER_MESSAGE} attachments per message."
        raise ValidationFailed({"attachmentIds": message})
    if not ids:
        return (), None
    rows = []
    for attachment_id in ids:
        try:
            rows.append(await get_attachment(svc, user_id=user_id, attachment_id=attachment_id))
        except NotFound as exc:
            raise ValidationFailed(
                {"attachmentIds": f"There is no attachment {attachment_id}."}
            ) from exc
    content = await _message(
        svc,
        user_id=user_id,
        session_uuid=session_uuid,
        model_id=model_id,
        tool_profile=tool_profile,
        text=text,
        rows=rows,
        saved=saved,
    )
    return ids, content


async def for_regenerate(
    svc: Any,
    *,
    user_id: int,
    session_uuid: str,
    question_id: int,
    saved: dict[int, str] | None = None,
) -> str | list[ContentPart] | None:
    """A regenerated answer's question as it was first sent: its text with its attachments
    (None without any: the turn's text is sent). The rule is the same on every branch: a
    message's files go with that message's own runs, later turns name them. In a Workspace
    conversation only the files missing from its folder are copied again."""
    question = await svc.storage.call(
        messages.owned_message, message_id=question_id, user_id=user_id
    )
    if question is None:
        return None  # the turn refuses it with its own words
    linked = await svc.storage.call(message_attachments, message_ids=[question_id])
    rows = linked.get(question_id, [])
    if not rows:
        return None
    return await _message(
        svc,
        user_id=user_id,
        session_uuid=session_uuid,
        model_id=None,
        tool_profile=None,
        text=question.content,
        rows=rows,
        saved=saved,
    )


async def remember_saved(svc: Any, *, user_id: int, message_id: int, saved: dict[int, str]) -> None:
    """Note where the message's files were saved in the workspace, so later turns' history
    names the paths (`db/attachment_notes.py`). After the turn's transaction, which linked
    them: a crash between the two costs only the path in that note."""
    if saved:
        await svc.storage.call(
            attachments_store.record_workspace_paths,
            user_id=user_id,
            message_id=message_id,
            paths=saved,
        )

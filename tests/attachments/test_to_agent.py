"""What the agent receives of a message's attachments (services/attachment_parts.py),
through the send use case (services/runs.py) with a real RunManager, the real bridge and
hermes, and the scripted model, whose request log is what the model was sent: a CSV inline
with its name, a PNG as an image part with its bytes (model marked as seeing images) or a
note (not marked); another person's attachment id or more than ten are refused with nothing
stored or sent; later turns carry a note naming the files, not their content."""

from __future__ import annotations

import base64
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_chat.bridge.execute import PICTURES_DROPPED
from agent_chat.db import model_configs, queue, sessions
from agent_chat.db.attachment_notes import message_attachments
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.services import attachment_parts, versions
from agent_chat.services import attachments as uploads
from agent_chat.services import runs as use
from agent_chat.services.attachment_parts import TEXT_LIMIT
from agent_chat.services.errors import Busy
from tests.fakes.model_server import RunningFakeModel
from tests.support.runs import chat_messages, finished, new_chat

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + os.urandom(48)
CSV = b"city,people\nLyon,522250\nGhent,265086\n"


async def _upload(svc: Any, user: int, data: bytes, name: str) -> int:
    async def one() -> AsyncIterator[bytes]:
        yield data

    return (await uploads.upload(svc, user_id=user, name=name, chunks=one())).id


def _sent_to_model(fake: RunningFakeModel, marker: str) -> list[dict[str, Any]]:
    """The last user turn's content of the last request whose last user turn holds `marker`."""
    for body in reversed(fake.requests()):
        users = [m for m in body.get("messages", []) if m["role"] == "user"]
        content = users[-1]["content"] if users else ""
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if any(marker in p.get("text", "") for p in parts):
            return parts
    raise AssertionError(f"the model was never sent {marker!r}")


async def _ask(svc: Any, user: int, chat: str, text: str, ids: list[int]) -> None:
    started = await use.start_run(
        svc, user_id=user, session_uuid=chat, text=text, attachment_ids=ids
    )
    await finished(svc.storage, started.assistant_message_id)


@pytest.mark.parametrize("sees_images", [True, False])
async def test_a_csv_inline_and_a_png_as_an_image_part_or_a_note(
    backend, user, fake_model, sees_images: bool
) -> None:
    svc = backend
    await svc.storage.call(
        model_configs.update_model, model_id=svc.model, supports_images=sees_images
    )
    csv_id = await _upload(svc, user, CSV, "cities.csv")
    png_id = await _upload(svc, user, PNG, "photo.png")
    chat = new_chat(svc.storage, user)
    question = f"Compare these, please ({sees_images})"
    await _ask(svc, user, chat, question, [csv_id, png_id])

    parts = _sent_to_model(fake_model, question)
    text = parts[0]["text"]
    assert "```cities.csv\n" + CSV.decode() in text
    images = [p for p in parts if p.get("type") == "image_url"]
    if sees_images:
        url = "data:image/png;base64," + base64.b64encode(PNG).decode()
        assert [p["image_url"]["url"] for p in images] == [url]
    else:
        assert images == []
        assert "[image photo.png attached: this model does not read images]" in text
    stored = chat_messages(svc.storage, chat)[0]
    linked = await svc.storage.call(message_attachments, message_ids=[stored.id])
    assert [a.id for a in linked[stored.id]] == [csv_id, png_id]

    # A later turn: the earlier message's text and a note naming its files, not their content.
    await _ask(svc, user, chat, "And now?", [])
    history = [m for m in fake_model.requests()[-1]["messages"] if m["role"] == "user"]
    earlier = history[-2]["content"]
    earlier = earlier if isinstance(earlier, str) else earlier[0]["text"]
    assert earlier.startswith(question)
    assert "[attached earlier: cities.csv (text/plain" in earlier and "photo.png" in earlier
    assert "Lyon" not in earlier
    assert history[-1]["content"] == "And now?"  # no attachments: plain text, as before


async def test_another_persons_attachment_is_refused_and_nothing_is_stored_or_sent(
    backend, user, other_user, fake_model
) -> None:
    svc = backend
    theirs = await _upload(svc, other_user, CSV, "secret.csv")
    mine = await _upload(svc, user, PNG, "photo.png")
    chat = new_chat(svc.storage, user)
    before = len(fake_model.requests())
    for ids in ([theirs], [mine, theirs], [2**31 - 1]):
        with pytest.raises(ValidationFailed) as bad:  # a missing one's refusal, word for word
            await use.start_run(
                svc, user_id=user, session_uuid=chat, text="Read it", attachment_ids=ids
            )
        wrong = ids[-1]
        assert bad.value.field_errors == {"attachmentIds": f"There is no attachment {wrong}."}
    assert chat_messages(svc.storage, chat) == []
    assert len(fake_model.requests()) == before
    with pytest.raises(ValidationFailed) as refused:
        await use.start_run(
            svc, user_id=user, session_uuid=chat, text="Many", attachment_ids=list(range(1, 12))
        )
    assert "attachmentIds" in refused.value.field_errors
    assert chat_messages(svc.storage, chat) == []


async def test_the_rule_per_kind(backend, user) -> None:
    """Text cut at TEXT_LIMIT characters (said), a fence that outlasts the file's, other
    files named with type and size, and no attachments: the text itself."""
    svc = backend
    long_id = await _upload(svc, user, b"x" * (TEXT_LIMIT + 10), "long.txt")
    fenced_id = await _upload(svc, user, b"a ``` fence\n", "code.md")
    gz_id = await _upload(svc, user, bytes.fromhex("1f8b0800000000000003") + os.urandom(40), "d.gz")
    rows = [
        await uploads.get_attachment(svc, user_id=user, attachment_id=i)
        for i in (long_id, fenced_id, gz_id)
    ]
    parts = await attachment_parts.agent_message(svc, text="Hi", attachments=rows, sees_images=True)
    text = parts[0]["text"]
    assert len(parts) == 1 and text.startswith("Hi\n\n")
    assert f"cut: the first {TEXT_LIMIT:,} characters of 100.0 kB are shown" in text
    assert "x" * TEXT_LIMIT + "\n```" in text and "x" * (TEXT_LIMIT + 1) not in text
    assert "````code.md\na ``` fence\n\n````" in text
    assert "[file d.gz attached (application/gzip, 50 bytes): its content is not shown" in text
    assert (
        await attachment_parts.agent_message(svc, text="Hi", attachments=[], sees_images=True)
        == "Hi"
    )


async def test_a_new_conversation_with_anothers_attachment_keeps_nothing(
    backend, user, other_user
) -> None:
    svc = backend
    theirs = await _upload(svc, other_user, CSV, "secret.csv")
    chat = str(uuid.uuid4())
    with pytest.raises(ValidationFailed, match="attachmentIds"):
        await use.start_conversation(
            svc,
            user_id=user,
            session_uuid=chat,
            hermes_session=chat,
            text="Read it",
            attachment_ids=[theirs],
        )
    assert await svc.storage.call(sessions.get_session, session_uuid=chat, user_id=user) is None


async def test_the_turn_checks_again_and_a_refused_link_stores_nothing(backend, user) -> None:
    """An attachment gone between the use case's check and the turn (the engine called
    directly): the turn's transaction refuses it, nothing is stored, and the next message
    goes (the run's lease was let go)."""
    svc = backend
    chat = new_chat(svc.storage, user)
    with pytest.raises(NotFound):
        await svc.runs.send(user_id=user, session_uuid=chat, text="Hi", attachment_ids=(2**31 - 1,))
    assert chat_messages(svc.storage, chat) == []
    started = await svc.runs.send(user_id=user, session_uuid=chat, text="Hi again")
    await finished(svc.storage, started.assistant_message_id)
    assert [m.content for m in chat_messages(svc.storage, chat)][0] == "Hi again"


async def test_files_do_not_wait_in_the_queue(backend, user) -> None:
    svc = backend
    csv_id = await _upload(svc, user, CSV, "cities.csv")
    chat = new_chat(svc.storage, user)
    started = await use.start_run(svc, user_id=user, session_uuid=chat, text="long 400 delay=0.05")
    with pytest.raises(Busy, match="cannot wait in the queue"):
        await use.send_message(
            svc, user_id=user, session_uuid=chat, text="and this", attachment_ids=[csv_id]
        )
    assert await svc.storage.call(queue.list_queued, session_uuid=chat, user_id=user) == []
    await use.stop(svc, user_id=user, run_id=started.run_id)
    await finished(svc.storage, started.assistant_message_id)


async def test_a_regenerated_answer_gets_its_questions_files_again(
    backend, user, fake_model
) -> None:
    svc = backend
    csv_id = await _upload(svc, user, CSV, "cities.csv")
    chat = new_chat(svc.storage, user)
    await _ask(svc, user, chat, "Sum them (regenerate)", [csv_id])
    first = chat_messages(svc.storage, chat)[1]
    again = await versions.regenerate(svc, user_id=user, message_id=first.id)
    await finished(svc.storage, again.assistant_message_id)
    sent = _sent_to_model(fake_model, "Sum them (regenerate)")
    assert fake_model.requests()[-1]["messages"][-1]["content"] == sent
    assert "```cities.csv\n" + CSV.decode() in sent[0]["text"]


async def test_an_edited_question_keeps_its_files(backend, user, fake_model) -> None:
    svc = backend
    csv_id = await _upload(svc, user, CSV, "cities.csv")
    chat = new_chat(svc.storage, user)
    await _ask(svc, user, chat, "Sum them (before the edit)", [csv_id])
    question = chat_messages(svc.storage, chat)[0]
    edited = await versions.edit_and_resend(
        svc, user_id=user, message_id=question.id, text="Average them (edited)"
    )
    await finished(svc.storage, edited.assistant_message_id)
    sent = _sent_to_model(fake_model, "Average them (edited)")
    assert "```cities.csv\n" + CSV.decode() in sent[0]["text"]
    new_question = chat_messages(svc.storage, chat)[0]
    assert new_question.id != question.id and new_question.content == "Average them (edited)"
    linked = await svc.storage.call(message_attachments, message_ids=[new_question.id])
    assert [row.id for row in linked[new_question.id]] == [csv_id]


async def test_an_edit_can_remove_or_change_the_files(
    backend, user, other_user, fake_model
) -> None:
    svc = backend
    csv_id = await _upload(svc, user, CSV, "cities.csv")
    notes_id = await _upload(svc, user, b"Lyon is on the Rhone.\n", "notes.txt")
    chat = new_chat(svc.storage, user)
    await _ask(svc, user, chat, "Sum them (to edit)", [csv_id])

    async def edit(text: str, ids: list[int]) -> list[int]:
        question = chat_messages(svc.storage, chat)[0]
        started = await versions.edit_and_resend(
            svc, user_id=user, message_id=question.id, text=text, attachment_ids=ids
        )
        await finished(svc.storage, started.assistant_message_id)
        new = chat_messages(svc.storage, chat)[0]
        linked = await svc.storage.call(message_attachments, message_ids=[new.id])
        return [row.id for row in linked.get(new.id, [])]

    assert await edit("Read the notes (edited)", [notes_id]) == [notes_id]
    sent = _sent_to_model(fake_model, "Read the notes (edited)")[0]["text"]
    assert "notes.txt" in sent and "cities.csv" not in sent
    assert await edit("No files now (edited)", []) == []
    assert fake_model.requests()[-1]["messages"][-1]["content"] == "No files now (edited)"
    theirs = await _upload(svc, other_user, CSV, "theirs.csv")
    with pytest.raises(ValidationFailed):
        await edit("Not mine (edited)", [theirs])


async def test_an_endpoint_that_refuses_pictures_is_said_in_the_answer(
    backend, user, fake_model
) -> None:
    """A model marked as reading pictures whose endpoint does not: hermes strips the pictures
    and asks again (its own fallback), and the answer ends by saying it was written without
    seeing them, never a hang; the next message goes on as usual."""
    svc = backend
    blind = fake_model.base_url.removesuffix("/v1") + "/fault/noimages/v1"
    await svc.storage.call(
        model_configs.update_model, model_id=svc.model, base_url=blind, supports_images=True
    )
    png_id = await _upload(svc, user, PNG, "photo.png")
    chat = new_chat(svc.storage, user)
    await _ask(svc, user, chat, "What is this?", [png_id])
    answer = chat_messages(svc.storage, chat)[1]
    assert answer.status == "SUCCESS"
    assert answer.content.startswith("Echo: What is this?")
    assert answer.content.endswith(PICTURES_DROPPED)
    await _ask(svc, user, chat, "Without the picture, then", [])
    last = chat_messages(svc.storage, chat)[-1]
    assert last.status == "SUCCESS" and PICTURES_DROPPED not in last.content

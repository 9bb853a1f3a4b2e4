"""hermes' real context compaction becomes a SUMMARY message in the tree, and the next run
gets the summary instead of what it replaced."""

from __future__ import annotations

from typing import Any

from agent_chat.db import messages, model_configs, sessions
from agent_chat.db.models import MessageRole, MessageStatus
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.runs import MakeManager, chat_messages, finished, new_chat
from tests.support.users import default_owner


def long_history(*, session: Any, session_uuid: str) -> None:
    """~250K characters of earlier turns: far past a 64K-token window's threshold."""
    chat = sessions.get_session(
        user_id=default_owner(session=session), session=session, session_uuid=session_uuid
    )
    parent = None
    for i in range(20):
        for role, status, text in (
            (MessageRole.USER, MessageStatus.SENT, f"question {i} " + "lorem ipsum dolor " * 350),
            (MessageRole.ASSISTANT, MessageStatus.SUCCESS, f"answer {i} " + "sit amet elit " * 400),
        ):
            parent = messages.append_message(
                session=session,
                chat_session_id=chat.id,
                parent_id=parent.id if parent else None,
                role=role,
                content=text,
                status=status,
            )


async def test_compaction_is_stored_as_a_summary_that_later_runs_start_from(
    make_manager: MakeManager,
    bridge: RunningBridge,
    storage: Storage,
    fake_model: RunningFakeModel,
    user: int,
) -> None:
    storage.call_sync(
        model_configs.create_model,
        name="Small window",
        base_url=fake_model.base_url,
        model_name="fake-model",
        context_length=64000,
        is_default=True,
    )
    manager = await make_manager(bridge.base_url)
    session_uuid = new_chat(storage)
    storage.call_sync(long_history, session_uuid=session_uuid)

    started = await manager.send(
        session_uuid=session_uuid, text="hello after a long talk", user_id=user
    )
    answer = await finished(storage, started.assistant_message_id, timeout=60)
    assert answer.status == "SUCCESS"
    assert answer.content == "Echo: hello after a long talk"
    branch = chat_messages(storage, session_uuid)
    summary = branch[-1]
    assert (summary.role, summary.status) == ("SYSTEM", "SUMMARY")
    assert summary.parent_id == answer.id and summary.content.strip()
    chat = storage.call_sync(sessions.get_session, user_id=user, session_uuid=session_uuid)
    assert chat.last_summarized_at is not None

    # The next run starts from the summary, then the turn it was made in; the 20 old turns
    # are not sent again.
    fake_model.reset()
    started = await manager.send(session_uuid=session_uuid, text="recall the start", user_id=user)
    second = await finished(storage, started.assistant_message_id, timeout=60)
    assert second.content.startswith("Earlier you said: [Summary of the earlier conversation]")
    sent = [
        m.get("content") or ""
        for body in fake_model.requests()
        for m in body.get("messages", [])
        if m.get("role") == "user"
    ]
    assert not any("question 3 " in text for text in sent)
    # (hermes merges the summary and the next user turn into one user message)
    assert any("hello after a long talk" in text for text in sent)

"""Model endpoint faults through the RunManager: the answer ends FAILED with the bridge's
sentence in ``error`` (what ``message-error`` shows), the question is kept, the failure
replays from the log, and the session answers the next message."""

from __future__ import annotations

from collections.abc import Callable

from agent_chat.bridge.failures import stream_cut_sentence
from agent_chat.db import model_configs
from agent_chat.runs.manager import RunManager
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.runs import MakeManager, finished, message, new_chat, stored_view
from tests.support.users import default_owner

FAILED = "FAILED"


def _faulty_model(storage: Storage, fake: RunningFakeModel, keywords: str) -> int:
    """A model row whose every chat request has the fault (see tests/fakes/model_server.py):
    the fault belongs to the model, so the healthy default model answers the next message."""
    return storage.call_sync(
        model_configs.create_model,
        name=f"Faulty {keywords}",
        base_url=fake.base_url.replace("/v1", f"/fault/{keywords}/v1"),
        model_name="fake-model",
    ).id


async def _fails_then_recovers(
    manager: RunManager,
    storage: Storage,
    faulty_model: int,
    healthy_model: int,
    error: str,
) -> None:
    chat = new_chat(storage)
    text = "hi there"
    started = await manager.send(
        session_uuid=chat,
        text=text,
        model_id=faulty_model,
        user_id=storage.call_sync(default_owner),
    )
    answer = await finished(storage, started.assistant_message_id)
    assert (answer.status, answer.error) == (FAILED, error)
    assert answer.completed_at is not None
    view = stored_view(storage, answer.id)  # a reopened chat shows the same reason
    assert (view.state, view.error) == ("failed", error)
    question = message(storage, started.user_message_id)
    assert (question.content, question.status) == (text, "SENT")
    assert manager.consumed.for_session(chat) is None

    again = await manager.send(
        session_uuid=chat,
        text="hello again",
        model_id=healthy_model,
        user_id=storage.call_sync(default_owner),
    )
    reply = await finished(storage, again.assistant_message_id)
    assert (reply.status, reply.error) == ("SUCCESS", None)
    assert reply.content.endswith("hello again")


async def test_a_refused_key_fails_the_answer_with_the_sentence_and_the_chat_goes_on(
    bridge: RunningBridge,
    storage: Storage,
    fake_model: RunningFakeModel,
    fake_model_row: int,
    make_manager: MakeManager,
) -> None:
    manager = await make_manager(bridge.base_url)
    await _fails_then_recovers(
        manager,
        storage,
        _faulty_model(storage, fake_model, "error401"),
        fake_model_row,
        "The model endpoint refused the API key (HTTP 401).",
    )


async def test_a_server_error_fails_the_answer_naming_it(
    bridge: RunningBridge,
    storage: Storage,
    fake_model: RunningFakeModel,
    fake_model_row: int,
    make_manager: MakeManager,
) -> None:
    manager = await make_manager(bridge.base_url)
    await _fails_then_recovers(
        manager,
        storage,
        _faulty_model(storage, fake_model, "error500"),
        fake_model_row,
        "The model endpoint failed with a server error (HTTP 500). "
        "It said: The fake model failed on purpose (error500).",
    )


async def test_a_stream_that_keeps_breaking_off_fails_the_answer_readably(
    bridge: RunningBridge,
    storage: Storage,
    fake_model: RunningFakeModel,
    fake_model_row: int,
    make_manager: MakeManager,
) -> None:
    manager = await make_manager(bridge.base_url)
    await _fails_then_recovers(
        manager,
        storage,
        _faulty_model(storage, fake_model, "cutstream"),
        fake_model_row,
        stream_cut_sentence(4),
    )


async def test_a_run_that_goes_quiet_is_failed_by_the_bridge_watchdog(
    start_bridge: Callable[..., RunningBridge],
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    bridge = start_bridge(keepalive_interval_s=0.2)
    registry = bridge.app.state.registry
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    # Build the session's agent under the default timeout (that takes a second or more).
    warm = await manager.send(session_uuid=chat, text="hello", user_id=user)
    assert (await finished(storage, warm.assistant_message_id)).status == "SUCCESS"

    registry.idle_timeout_s = 1.0
    started = await manager.send(session_uuid=chat, text="slowfirst=5 hi", user_id=user)
    answer = await finished(storage, started.assistant_message_id, timeout=4.0)
    error = "No answer from the model for 1 second; the run was stopped."
    assert (answer.status, answer.error) == (FAILED, error)
    assert stored_view(storage, answer.id).error == error
    assert message(storage, started.user_message_id).status == "SENT"

    registry.idle_timeout_s = 600.0
    again = await manager.send(session_uuid=chat, text="hello again", user_id=user)
    reply = await finished(storage, again.assistant_message_id)
    assert (reply.status, reply.error) == ("SUCCESS", None)


async def test_after_a_failed_answer_the_model_gets_the_branch_as_shown(
    bridge: RunningBridge,
    storage: Storage,
    fake_model: RunningFakeModel,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    faulty = _faulty_model(storage, fake_model, "error401")
    failed = await manager.send(
        session_uuid=chat, text="first question", model_id=faulty, user_id=user
    )
    await finished(storage, failed.assistant_message_id)
    again = await manager.send(
        session_uuid=chat, text="second question", model_id=fake_model_row, user_id=user
    )
    await finished(storage, again.assistant_message_id)
    turns = [
        (m["role"], m["content"])
        for m in fake_model.requests()[-1]["messages"]
        if m["role"] in ("user", "assistant")
    ]
    # The failed question stays its own turn, answered by a note naming the failure; it is
    # never merged into the next question.
    assert turns[-3][0] == "user" and turns[-3][1] == "first question"
    assert turns[-2][0] == "assistant" and "refused the API key" in turns[-2][1]
    assert turns[-1] == ("user", "second question")


async def test_a_runs_step_limit_ends_it_failed_with_the_reason(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    steps = "\n".join(["plan twice", *['CALL todo {"todos": [], "merge": true}'] * 3])
    started = await manager.send(session_uuid=chat, text=steps, max_iterations=1, user_id=user)
    answer = await finished(storage, started.assistant_message_id)
    assert answer.status == FAILED
    assert answer.error == "The agent reached its step limit before a final answer."

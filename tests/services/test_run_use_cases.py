"""The page's and the API's use cases on a run (services/runs.py, services/versions.py), with
a real RunManager over a real bridge and the scripted fake model: send (a new conversation's
first message too), queue, answer a question or an approval, steer, stop, regenerate,
edit-and-resend, switch versions, reset. For each: the owner's command is done; another
person gets `NotFound` / `UnknownRun` (the same as for nothing at all) and nothing changes;
bad input is refused with a sentence that says why (and a field and code for the API)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlmodel import select

from agent_chat.db import pauses, queue, sessions
from agent_chat.db.errors import NotFound
from agent_chat.db.models import RunPause
from agent_chat.db.running import RUN_ACTIVE, TOO_MANY_RUNS
from agent_chat.runs.manager import RunManager, RunRefused, UnknownRun
from agent_chat.runs.storage import Storage
from agent_chat.services import conversations, versions
from agent_chat.services import runs as use
from agent_chat.services.errors import Busy
from agent_chat.services.runs import InvalidRunInput, RunConflict
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge, StartBridge
from tests.support.runs import (
    chat_messages,
    fake_model_row,
    finished,
    managers,
    new_chat,
    wait_for,
)

LIMIT = 200  # characters of a message, in these tests


@pytest.fixture
async def svc(
    db_url: str, storage: Storage, bridge: RunningBridge, fake_model: RunningFakeModel
) -> AsyncIterator[SimpleNamespace]:
    """What a use case reaches (services/backend.py): the storage, a started RunManager
    over the bridge with the fake model as the default model, its settings."""
    fake_model_row(storage, fake_model)
    async with managers(db_url, storage) as make:
        runs: RunManager = await make(bridge.base_url, max_message_chars=LIMIT, max_active_runs=2)
        yield SimpleNamespace(storage=storage, runs=runs, settings=runs.settings)


def _pauses_of(*, session: Any, message_id: int) -> list[RunPause]:
    return list(session.exec(select(RunPause).where(RunPause.message_id == message_id)).all())


def _branch(storage: Storage, chat: str) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in chat_messages(storage, chat)]


async def _state_is(svc: Any, user: int, chat: str, wanted: str, timeout: float = 60) -> None:
    """Wait until the conversation's run state is `wanted` ("running", "waiting", "")."""
    for _ in range(int(timeout / 0.02)):
        if await conversations.conversation_state(svc, user_id=user, session_uuid=chat) == wanted:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the conversation never became {wanted!r}")


async def _asked(storage: Storage, answer_id: int, timeout: float = 60) -> RunPause:
    """The run's question (or approval), once it is stored (the consumer stores it before
    it tells anyone)."""
    await wait_for(
        lambda: storage.call_sync(pauses.open_pause, message_id=answer_id) is not None, timeout
    )
    return storage.call_sync(pauses.open_pause, message_id=answer_id)


async def _refused(call: Any, error: type[Exception], match: str | None = None) -> Exception:
    with pytest.raises(error, match=match) as refused:
        await call
    return refused.value


async def test_send_a_message(svc: Any, storage: Storage, user: int, other_user: int) -> None:
    chat = new_chat(storage, user)
    ask = {"user_id": user, "session_uuid": chat}
    for bad, field, code in (
        ("  ", "message", "invalid"),
        ("x" * (LIMIT + 1), "message", use.MESSAGE_TOO_LONG),
    ):
        refused = await _refused(use.start_run(svc, text=bad, **ask), InvalidRunInput)
        assert (set(refused.field_errors), refused.code) == ({field}, code)
    for choice, field in (
        ({"model_id": 999_999}, "modelId"),
        ({"skill_folder": "../nowhere"}, "skillFolder"),
        ({"tool_profile": "root"}, "toolProfile"),
    ):
        refused = await _refused(use.start_run(svc, text="hi", **ask, **choice), InvalidRunInput)
        assert set(refused.field_errors) == {field}
    # Another person, and a uuid nobody has: "does not exist"; nothing is stored.
    for who, where in ((other_user, chat), (user, str(uuid.uuid4()))):
        await _refused(
            use.start_run(svc, user_id=who, session_uuid=where, text="hi"), NotFound, "not exist"
        )
    assert _branch(storage, chat) == []

    started = await use.start_run(svc, text="hello", **ask)
    # While it runs: a second message is refused (RUN_ACTIVE, the API's 409).
    busy = await _refused(use.start_run(svc, text="and this?", **ask), RunRefused, "still running")
    assert busy.code == RUN_ACTIVE
    assert (await finished(storage, started.assistant_message_id)).content == "Echo: hello"
    assert _branch(storage, chat) == [("USER", "hello"), ("ASSISTANT", "Echo: hello")]
    # The client saw another branch: its parent is not the branch's end.
    stale = await _refused(
        use.start_run(svc, text="hi", parent_message_id=started.user_message_id, **ask),
        RunConflict,
    )
    assert stale.code == "not_branch_end"
    then = await use.start_run(
        svc, text="more", parent_message_id=started.assistant_message_id, **ask
    )
    assert (await finished(storage, then.assistant_message_id)).content == "Echo: more"


async def test_the_run_limit_is_per_person(svc: Any, storage: Storage, user: int) -> None:
    """At `max_active_runs` working runs the next start is TOO_MANY_RUNS (the API's 429)."""
    chats = [new_chat(storage, user) for _ in range(3)]
    going = [
        await use.start_run(svc, user_id=user, session_uuid=c, text="long 400 delay=0.05")
        for c in chats[:2]
    ]
    limit = await _refused(
        use.start_run(svc, user_id=user, session_uuid=chats[2], text="one more"), RunRefused
    )
    assert limit.code == TOO_MANY_RUNS and "the limit is 2" in str(limit)
    assert _branch(storage, chats[2]) == []
    for run in going:
        await use.stop(svc, user_id=user, run_id=run.run_id)


async def test_a_new_conversation_starts_with_its_first_message(
    svc: Any, storage: Storage, user: int, other_user: int
) -> None:
    def exists(chat_uuid: str, who: int = user) -> bool:
        found = storage.call_sync(sessions.get_session, session_uuid=chat_uuid, user_id=who)
        return found is not None

    ids = {"session_uuid": str(uuid.uuid4()), "hermes_session": str(uuid.uuid4())}
    # Refused: no conversation is left behind.
    await _refused(use.start_conversation(svc, user_id=user, text="", **ids), InvalidRunInput)
    await _refused(
        use.start_conversation(svc, user_id=user, text="hi", model_id=999_999, **ids),
        InvalidRunInput,
    )
    assert not exists(ids["session_uuid"])
    bad = {**ids, "session_uuid": "not-a-uuid"}
    refused = await _refused(
        use.start_conversation(svc, user_id=user, text="hi", **bad), InvalidRunInput
    )
    assert set(refused.field_errors) == {"sessionId"}

    started = await use.start_conversation(svc, user_id=user, text="first", **ids)
    assert exists(ids["session_uuid"]) and not exists(ids["session_uuid"], other_user)
    assert (await finished(storage, started.assistant_message_id)).content == "Echo: first"
    # Refused once made (the person's run limit) also leaves nothing behind.
    long = "long 400 delay=0.05"
    going = [
        await use.start_run(svc, user_id=user, session_uuid=where, text=long)
        for where in (ids["session_uuid"], new_chat(storage, user))
    ]
    again = {"session_uuid": str(uuid.uuid4()), "hermes_session": str(uuid.uuid4())}
    limit = await _refused(
        use.start_conversation(svc, user_id=user, text="hi", **again), RunRefused
    )
    assert limit.code == TOO_MANY_RUNS and not exists(again["session_uuid"])
    for run in going:
        await use.stop(svc, user_id=user, run_id=run.run_id)


async def test_queue_while_a_run_works(
    svc: Any, storage: Storage, user: int, other_user: int
) -> None:
    chat = new_chat(storage, user)
    ask = {"user_id": user, "session_uuid": chat}

    def queued() -> list[str]:
        rows = storage.call_sync(queue.list_queued, user_id=user, session_uuid=chat)
        return [q.content for q in rows]

    started = await use.send_message(svc, text="long 400 delay=0.05", **ask)
    assert started is not None  # nothing ran: sent at once
    await _state_is(svc, user, chat, "running")
    assert await use.send_message(svc, text="then this", **ask) is None  # Enter queues now
    assert await use.queue_message(svc, text="and this", **ask) is None
    assert queued() == ["then this", "and this"]
    await _refused(
        use.queue_message(svc, user_id=other_user, session_uuid=chat, text="mine"), NotFound
    )
    await _refused(use.queue_message(svc, text=" ", **ask), InvalidRunInput)
    await _refused(use.queue_message(svc, text="x", skill_folder="nope", **ask), InvalidRunInput)
    assert queued() == ["then this", "and this"]

    rows = storage.call_sync(queue.list_queued, user_id=user, session_uuid=chat)
    first, second = (q.id for q in rows)
    for who, which in ((other_user, first), (user, "7; drop table"), (user, first + 1000)):
        await _refused(use.take_queued(svc, user_id=who, queued_id=which), NotFound)
    assert queued() == ["then this", "and this"]
    assert await use.take_queued(svc, user_id=user, queued_id=str(second)) == "and this"
    await _refused(use.take_queued(svc, user_id=user, queued_id=second), NotFound)  # gone
    assert queued() == ["then this"]

    await use.stop(svc, user_id=user, run_id=started.run_id)  # a stop holds the queue
    await _state_is(svc, user, chat, "")
    assert queued() == ["then this"]
    sent = await use.queue_message(svc, text="now", **ask)
    assert sent is not None  # nothing runs: the first queued one goes at once
    assert (await finished(storage, sent.assistant_message_id)).content == "Echo: then this"


async def test_answer_a_question_and_steer(
    svc: Any, storage: Storage, user: int, other_user: int
) -> None:
    chat = new_chat(storage, user)
    started = await use.start_run(svc, user_id=user, session_uuid=chat, text="ask me")
    pause = await _asked(storage, started.assistant_message_id)
    run = {"run_id": started.run_id}

    # Another person: no such run, for every command; nothing changes.
    for command in (
        use.answer(svc, user_id=other_user, clarify_id=pause.clarify_id, answer="red", **run),
        use.steer(svc, user_id=other_user, text="go left", **run),
        use.stop(svc, user_id=other_user, **run),
    ):
        await _refused(command, UnknownRun)
    await _refused(
        use.answer(svc, user_id=user, run_id="no-such-run", clarify_id="x", answer="red"),
        UnknownRun,
    )
    wrong = await _refused(
        use.answer(svc, user_id=user, clarify_id="nope", answer="red", **run), RunConflict
    )
    assert wrong.code == use.NOT_OPEN
    empty = await _refused(
        use.answer(svc, user_id=user, clarify_id=pause.clarify_id, answer="  ", **run),
        InvalidRunInput,
        "Choose an option or type an answer",
    )
    assert set(empty.field_errors) == {"answer"}
    await _refused(use.steer(svc, user_id=user, text="", **run), InvalidRunInput)
    await _refused(use.steer(svc, user_id=user, text="x" * (LIMIT + 1), **run), InvalidRunInput)
    assert await conversations.conversation_state(svc, user_id=user, session_uuid=chat) == "waiting"

    await use.steer(svc, user_id=user, text="Pick the warmest one.", **run)
    await use.answer(svc, user_id=user, clarify_id=pause.clarify_id, answer=" green ", **run)
    await finished(storage, started.assistant_message_id)
    rows = storage.call_sync(_pauses_of, message_id=started.assistant_message_id)
    assert [(p.status, p.answer) for p in rows] == [("ANSWERED", "green")]  # trimmed
    over = await _refused(
        use.answer(svc, user_id=user, clarify_id=pause.clarify_id, answer="red", **run),
        RunConflict,
    )
    assert over.code == use.RUN_FINISHED
    again = await _refused(use.stop(svc, user_id=user, **run), RunConflict)
    assert again.code == use.RUN_FINISHED


async def test_answer_an_approval(
    db_url: str,
    storage: Storage,
    start_bridge: StartBridge,
    fake_model: RunningFakeModel,
    user: int,
    other_user: int,
    tmp_path: Path,
) -> None:
    profiles = ("chat", "workspace")
    workspaces = tmp_path / "workspaces"
    bridge = start_bridge(
        keepalive_interval_s=0.5, tool_profiles=profiles, workspaces_root=workspaces
    )
    fake_model_row(storage, fake_model)
    chat = new_chat(storage, user)
    (workspaces / chat / "victim").mkdir(parents=True)
    async with managers(db_url, storage) as make:
        runs = await make(bridge.base_url, tool_profiles=profiles)
        svc = SimpleNamespace(storage=storage, runs=runs, settings=runs.settings)
        started = await use.start_run(
            svc,
            user_id=user,
            session_uuid=chat,
            text='rm it\nCALL terminal {"command": "rm -rf victim"}',
            tool_profile="workspace",
        )
        # The bridge's first workspace agent is built cold (15 s seen on a loaded machine).
        pause = await _asked(storage, started.assistant_message_id, timeout=90)
        assert pause.kind == "approval"
        asked = {"run_id": started.run_id, "clarify_id": pause.clarify_id}
        await _refused(use.answer(svc, user_id=other_user, answer="once", **asked), UnknownRun)
        refused = await _refused(
            use.answer(svc, user_id=user, answer="yes please", **asked), InvalidRunInput, "deny"
        )
        assert set(refused.field_errors) == {"answer"}
        assert (
            await conversations.conversation_state(svc, user_id=user, session_uuid=chat)
            == "waiting"
        )

        await use.answer(svc, user_id=user, answer="deny", **asked)
        done = await finished(storage, started.assistant_message_id)
        assert "BLOCKED" in done.content and (workspaces / chat / "victim").exists()


async def test_regenerate_edit_and_switch_versions(
    svc: Any, storage: Storage, user: int, other_user: int
) -> None:
    chat = new_chat(storage, user)
    # Slow enough (3 s) that the regenerated run is still going for the refusals below.
    first = await use.start_run(
        svc, user_id=user, session_uuid=chat, text="Version question long 60 delay=0.05"
    )
    await finished(storage, first.assistant_message_id)
    answer, question = first.assistant_message_id, first.user_message_id
    before = _branch(storage, chat)
    for command in (
        versions.regenerate(svc, user_id=other_user, message_id=answer),
        versions.edit_and_resend(svc, user_id=other_user, message_id=question, text="Theirs"),
        versions.switch_version(svc, user_id=other_user, message_id=answer, step=-1),
        versions.regenerate(svc, user_id=user, message_id=999_999),
        versions.regenerate(svc, user_id=user, message_id="1"),  # a page event sends anything
    ):
        await _refused(command, NotFound, "does not exist")
    wrong = await _refused(
        versions.regenerate(svc, user_id=user, message_id=question), InvalidRunInput
    )
    assert wrong.code == "wrong_role" and set(wrong.field_errors) == {"messageId"}
    wrong = await _refused(
        versions.edit_and_resend(svc, user_id=user, message_id=answer, text="x"), InvalidRunInput
    )
    assert wrong.code == "wrong_role"
    empty = await _refused(
        versions.edit_and_resend(svc, user_id=user, message_id=question, text=""),
        InvalidRunInput,
    )
    assert set(empty.field_errors) == {"content"}
    await _refused(
        versions.switch_version(svc, user_id=user, message_id=answer, step="up"), InvalidRunInput
    )
    assert _branch(storage, chat) == before

    again = await versions.regenerate(svc, user_id=user, message_id=answer)
    # While it runs: no other new version, no switch (the run answers on the branch shown).
    busy = await _refused(
        versions.regenerate(svc, user_id=user, message_id=answer),
        RunRefused,
        "Regenerating is not possible while the agent is answering",
    )
    assert busy.code == RUN_ACTIVE
    await _refused(
        versions.edit_and_resend(svc, user_id=user, message_id=question, text="Better"),
        RunRefused,
        "Editing is not possible",
    )
    await _refused(
        versions.switch_version(svc, user_id=user, message_id=answer, step=-1), Busy, "Switching"
    )
    await finished(storage, again.assistant_message_id)
    shown = await versions.switch_version(
        svc, user_id=user, message_id=again.assistant_message_id, step=-1
    )
    assert shown.id == answer and _branch(storage, chat) == before

    edited = await versions.edit_and_resend(
        svc, user_id=user, message_id=question, text="Better wording"
    )
    assert (await finished(storage, edited.assistant_message_id)).content == "Echo: Better wording"
    assert _branch(storage, chat) == [
        ("USER", "Better wording"),
        ("ASSISTANT", "Echo: Better wording"),
    ]
    await versions.switch_version(svc, user_id=user, message_id=edited.user_message_id, step=-5)
    assert _branch(storage, chat) == before  # clamped to the first version


async def test_reset_the_conversation_agent(
    svc: Any, storage: Storage, user: int, other_user: int
) -> None:
    chat = new_chat(storage, user)
    first = await use.start_run(svc, user_id=user, session_uuid=chat, text="Remember banana")
    await finished(storage, first.assistant_message_id)
    for who, where in ((other_user, chat), (user, "not-a-uuid")):
        await _refused(use.reset_conversation(svc, user_id=who, session_uuid=where), NotFound)
    going = await use.start_run(svc, user_id=user, session_uuid=chat, text="long 400 delay=0.05")
    await _refused(
        use.reset_conversation(svc, user_id=user, session_uuid=chat), Busy, "Resetting the context"
    )
    await use.stop(svc, user_id=user, run_id=going.run_id)
    await finished(storage, going.assistant_message_id)
    assert all(m.status != "RESET" for m in chat_messages(storage, chat))

    await use.reset_conversation(svc, user_id=user, session_uuid=chat)
    after = await use.start_run(svc, user_id=user, session_uuid=chat, text="recall")
    done = await finished(storage, after.assistant_message_id)
    assert done.content == "I have no earlier message."

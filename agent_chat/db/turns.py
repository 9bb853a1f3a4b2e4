"""The transactions of a turn: what starting, finishing and resetting a run writes.

Each function is one transaction (run through `Storage.call`). `Refused` carries a sentence
for the person when the data does not allow the request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from sqlalchemy import update
from sqlmodel import Session, col

from agent_chat.db import (
    attachments,
    mcp_servers,
    messages,
    model_configs,
    pauses,
    running,
    sessions,
)
from agent_chat.db.errors import StoreError
from agent_chat.db.models import (
    ChatMessage,
    ChatSession,
    MessageRole,
    MessageStatus,
    ModelConfig,
)


class Refused(StoreError):
    """The request cannot be done with the data as it is; the message says why (`code`:
    which rule, for the HTTP API's status)."""

    def __init__(self, message: str, code: str = "refused") -> None:
        super().__init__(message)
        self.code = code


# Also for another person's conversation: the same words (no way to learn it exists).
NO_CONVERSATION = "This conversation does not exist (it may have been deleted)."
RESET_WHILE_RUNNING = "The conversation is running: stop it before resetting the context."


class TurnMode(StrEnum):
    SEND = "send"  # a new user message at the end of the active branch
    EDIT = "edit"  # a new version of a user message, answered from the same point
    REGENERATE = "regenerate"  # a new version of an answer to the same question


@dataclass(frozen=True)
class TurnPlan:
    mode: TurnMode
    session_uuid: str
    owner_id: int  # the acting person: another person's conversation "does not exist"
    text: str = ""
    message_id: int | None = None
    model_id: int | None = None
    skill_folder: str | None = None
    tool_profile: str | None = None  # None: the conversation's
    # The profiles the operator enabled: a conversation whose profile was disabled since
    # falls back to the first (never to tools the operator took away).
    enabled_profiles: tuple[str, ...] = ("chat",)
    # Several workers: checked in the turn's transaction, under the person's row lock, that
    # the conversation has no run going on and the person fewer working runs than this
    # (db/running.py). None: the caller checked (one worker, its own memory).
    max_active_runs: int | None = None
    # The person's attachments the new user message carries (SEND), linked in this turn.
    attachment_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class PreparedTurn:
    """What the bridge needs to start the run, after the turn's messages are written."""

    chat_session_id: int
    hermes_session: str
    text: str
    history: list[dict[str, str]]
    model: ModelConfig
    system_prompt: str | None
    question_id: int  # the user message the run answers
    assistant_id: int
    tool_profile: str = "chat"
    mcp_servers: tuple[dict[str, object], ...] = ()  # for the bridge: secrets included


@dataclass(frozen=True)
class Outcome:
    """A run's end as stored: the answer, its status and what came with it."""

    content: str
    status: MessageStatus
    error: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    summary: str | None = None  # the last compaction summary, if the context was compacted


def prepare_turn(
    *,
    session: Session,
    plan: TurnPlan,
    run_id: str,
    skill_prompt: Callable[[str], str],
) -> PreparedTurn:
    """Write the turn's messages and gather what the bridge needs. `skill_prompt(folder)`
    reads a skill (raises OSError/ValueError when it is broken: nothing is written then)."""
    if plan.max_active_runs is not None:
        running.lock_person(session, plan.owner_id)  # first: before anything is read
    chat = existing_chat(session, plan.session_uuid, plan.owner_id)
    if plan.max_active_runs is not None:
        try:
            running.refuse_new_run(
                session=session,
                owner_id=plan.owner_id,
                chat_session_id=chat.id,
                limit=plan.max_active_runs,
            )
        except running.Refused as exc:
            raise Refused(str(exc), exc.code) from exc
    model = resolve_model(session, plan.model_id, chat.model_id)
    skill_folder = plan.skill_folder if plan.mode == TurnMode.SEND else chat.skill_folder
    tool_profile = _tool_profile(plan, chat.tool_profile)
    system_prompt = None
    if skill_folder:
        try:
            system_prompt = skill_prompt(skill_folder)
        except (OSError, ValueError) as exc:
            raise Refused(str(exc)) from exc
    text = plan.text
    user: ChatMessage | None = None
    if plan.mode == TurnMode.SEND:
        branch = messages.active_branch(session=session, chat_session_id=chat.id)
        parent_id = branch[-1].id if branch else None
    elif plan.mode == TurnMode.EDIT:
        original = own_message(session, chat.id, plan.message_id, MessageRole.USER)
        parent_id = original.parent_id
    else:  # regenerate: the same question, a new answer beside the old one
        original = own_message(session, chat.id, plan.message_id, MessageRole.ASSISTANT)
        user = own_message(session, chat.id, original.parent_id, MessageRole.USER)
        parent_id, text = user.parent_id, user.content
    history = messages.history_for(session=session, chat_session_id=chat.id, parent_id=parent_id)
    if user is None:
        user = messages.append_message(
            session=session,
            chat_session_id=chat.id,
            parent_id=parent_id,
            role=MessageRole.USER,
            content=text,
            status=MessageStatus.SENT,
            model_id=model.id,
            skill_folder=skill_folder,
            tool_profile=tool_profile,
        )
        if plan.attachment_ids:  # another's or a missing one: NotFound, nothing written
            attachments.link_to_message(
                session=session,
                user_id=plan.owner_id,
                message_id=user.id,
                attachment_ids=list(plan.attachment_ids),
            )
    assistant = messages.append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=user.id,
        role=MessageRole.ASSISTANT,
        content="",
        status=MessageStatus.RUNNING,
        run_id=run_id,
        model_id=model.id,
        skill_folder=skill_folder,
        tool_profile=tool_profile,
    )
    sessions.set_title_if_empty(session=session, session_id=chat.id, text=text)
    sessions.set_session_model(
        session=session,
        session_id=chat.id,
        model_id=model.id,
        skill_folder=skill_folder,
        tool_profile=tool_profile,
    )
    return PreparedTurn(
        chat_session_id=chat.id,
        hermes_session=chat.hermes_session,
        text=text,
        history=history,
        model=model,
        system_prompt=system_prompt,
        question_id=user.id,
        assistant_id=assistant.id,
        tool_profile=tool_profile,
        mcp_servers=mcp_servers.for_profile(session=session, profile=tool_profile),
    )


def _tool_profile(plan: TurnPlan, current: str) -> str:
    if plan.tool_profile and plan.tool_profile not in plan.enabled_profiles:
        raise Refused(
            f"The tool profile {plan.tool_profile!r} is not enabled here "
            f"(enabled: {', '.join(plan.enabled_profiles)})."
        )
    chosen = plan.tool_profile if plan.mode == TurnMode.SEND and plan.tool_profile else current
    return chosen if chosen in plan.enabled_profiles else plan.enabled_profiles[0]


def finalise_run(*, session: Session, message_id: int, run_id: str, outcome: Outcome) -> bool:
    """The run's outcome in one transaction: the answer, a compaction summary, open
    questions abandoned unless it succeeded, and the conversation marked unread.

    Once per run: False (and nothing written) when the message is no longer RUNNING. The
    status moves first, by an UPDATE conditional on RUNNING, so of two consumers racing
    (a takeover, `runs/leases.py`) exactly one sees its row change."""
    claimed = session.execute(
        update(ChatMessage)
        .where(
            col(ChatMessage.id) == message_id,
            col(ChatMessage.status) == MessageStatus.RUNNING.value,
        )
        .values(status=MessageStatus(outcome.status).value)
    )
    if claimed.rowcount != 1:
        return False
    usage = outcome.usage
    messages.finish_message(
        session=session,
        message_id=message_id,
        content=outcome.content,
        status=outcome.status,
        error=outcome.error,
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        total_tokens=usage.get("total_tokens"),
        context_tokens=usage.get("context_tokens"),
    )
    if outcome.summary:
        messages.add_summary(session=session, after_message_id=message_id, summary=outcome.summary)
    # Unread until a tab shows the conversation (the tab that watched the run clears it).
    answer = messages.get_message(session=session, message_id=message_id)
    if answer is not None:
        sessions.set_unread(session=session, session_id=answer.session_id, unread=True)
    if outcome.status != MessageStatus.SUCCESS:
        pauses.abandon_pauses(session=session, run_id=run_id)
    return True


def mark_reset(
    *, session: Session, session_uuid: str, user_id: int, check_running: bool = False
) -> str:
    """A new hermes session id and a RESET marker under the branch's leaf; the old id.
    `check_running` (several workers): refused while the conversation has a run going on."""
    if check_running:
        running.lock_person(session, user_id)
    chat = existing_chat(session, session_uuid, user_id)
    if check_running and running.running_runs(session=session, chat_session_id=chat.id):
        raise Refused(RESET_WHILE_RUNNING)
    branch = messages.active_branch(session=session, chat_session_id=chat.id)
    if not branch or branch[-1].status == MessageStatus.RESET.value:
        raise Refused("There is nothing to reset yet.")
    old = chat.hermes_session
    sessions.new_hermes_session(session=session, session_id=chat.id)
    messages.append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=branch[-1].id,
        role=MessageRole.SYSTEM,
        content="Context reset",
        status=MessageStatus.RESET,
    )
    return old


def session_uuid_of(*, session: Session, chat_session_id: int) -> str:
    chat = session.get(ChatSession, chat_session_id)
    return chat.session_uuid if chat else ""


def session_and_owner(*, session: Session, chat_session_id: int) -> tuple[str, int | None]:
    """The conversation's uuid and owner (the app re-attaching to a run)."""
    chat = session.get(ChatSession, chat_session_id)
    return (chat.session_uuid, chat.owner_id) if chat else ("", None)


def resolve_model(session: Session, chosen: int | None, session_model: int | None) -> ModelConfig:
    """The chosen model, else the session's, else the default; Refused if none exists."""
    for model_id in (chosen, session_model):
        if model_id is not None:
            model = model_configs.get_model(session=session, model_id=model_id)
            if model is not None:
                return model
    model = model_configs.get_default_model(session=session)
    if model is None:
        raise Refused("No model is configured yet. Add one in Settings → Models.")
    return model


def own_message(
    session: Session, chat_session_id: int, message_id: int | None, role: MessageRole
) -> ChatMessage:
    message = messages.get_message(session=session, message_id=message_id) if message_id else None
    if message is None or message.session_id != chat_session_id or message.role != role.value:
        raise Refused("That message is not part of this conversation any more.")
    return message


def existing_chat(session: Session, session_uuid: str, user_id: int) -> ChatSession:
    chat = sessions.get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    if chat is None:
        raise Refused(NO_CONVERSATION)
    return chat


@dataclass(frozen=True)
class AgentTarget:
    """What the conversation's next run would be built with (for preparing its agent)."""

    hermes_session: str
    model: ModelConfig
    tool_profile: str
    mcp_servers: tuple[dict[str, object], ...] = ()


def agent_target(
    *,
    session: Session,
    session_uuid: str,
    user_id: int,
    model_id: int | None,
    tool_profile: str | None,
    enabled_profiles: tuple[str, ...],
    draft_hermes_session: str | None = None,
) -> AgentTarget:
    """`draft_hermes_session`: a new conversation not created yet (a page at /chat), whose
    first message will bring this hermes session id."""
    plan = TurnPlan(
        TurnMode.SEND,
        session_uuid,
        user_id,
        tool_profile=tool_profile,
        enabled_profiles=enabled_profiles,
    )
    if draft_hermes_session is not None:
        hermes_session, model = draft_hermes_session, resolve_model(session, model_id, None)
        profile = _tool_profile(plan, enabled_profiles[0])
    else:
        chat = existing_chat(session, session_uuid, user_id)
        hermes_session = chat.hermes_session
        model = resolve_model(session, model_id, chat.model_id)
        profile = _tool_profile(plan, chat.tool_profile)
    servers = mcp_servers.for_profile(session=session, profile=profile)
    return AgentTarget(hermes_session, model, profile, servers)

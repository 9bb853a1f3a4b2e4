"""A Workspace conversation's attachments saved in its folder (services/attachment_workspace.py,
through services/attachment_parts.py): through the send use case with a real RunManager,
the real bridge, hermes and the scripted model, a CSV and a binary file land in
`attachments/` byte-identical, the message names their paths and the agent reads the CSV
with its own file tool; a regenerate copies only what is missing; a copy that fails still
sends the message, saying so; later turns name the files with their paths. Through `for_run` on both stores: a second file of the same
name and other bytes gets " (2)", the same file again is not copied again, a Chat
conversation copies nothing, and a link named `attachments` never leads a copy out."""

from __future__ import annotations

import errno
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent_chat.common.workspaces import NAME_BYTES, numbered
from agent_chat.config import S3Settings
from agent_chat.db import model_configs
from agent_chat.runs.manager import RunRefused
from agent_chat.runs.storage import Storage
from agent_chat.services import attachment_parts, attachment_workspace, versions
from agent_chat.services import attachments as uploads
from agent_chat.services import runs as use
from tests.fakes.model_server import RunningFakeModel
from tests.support.runs import fake_model_row, finished, managers, new_chat

PROFILES = ("chat", "workspace")
CSV = b"city,people\nLyon,522250\nGhent,265086\n"
BINARY = b"PK\x03\x04" + bytes(range(256)) * 40  # a zip's start: not text, not inlined


@pytest.fixture
def workspaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The root both sides read: the bridge from its settings, the app from the environment."""
    root = tmp_path / "workspaces"
    monkeypatch.setenv("AGENT_CHAT_WORKSPACES_DIR", str(root))
    return root


async def _upload(svc: Any, user: int, data: bytes, name: str) -> int:
    async def one() -> AsyncIterator[bytes]:
        yield data

    return (await uploads.upload(svc, user_id=user, name=name, chunks=one())).id


def _last_user_text(fake: RunningFakeModel, marker: str) -> str:
    """The text part of the last request's user turn holding `marker`."""
    for body in reversed(fake.requests()):
        users = [m for m in body.get("messages", []) if m["role"] == "user"]
        content = users[-1]["content"] if users else ""
        text = content if isinstance(content, str) else content[0]["text"]
        if marker in text:
            return text
    raise AssertionError(f"the model was never sent {marker!r}")


def _earlier_user_texts(fake: RunningFakeModel, marker: str) -> list[str]:
    """The user turns before the last one, in the last request whose last turn holds
    `marker` (what the history told the agent)."""
    for body in reversed(fake.requests()):
        texts = [
            m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
            for m in body.get("messages", [])
            if m["role"] == "user"
        ]
        if texts and marker in texts[-1]:
            return texts[:-1]
    raise AssertionError(f"the model was never sent {marker!r}")


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.is_dir() else {}


# ---- a real run ------------------------------------------------------------------------------


async def test_a_workspace_run_finds_its_files_and_a_failed_copy_is_said(
    db_url: str,
    storage: Storage,
    start_bridge: Any,
    fake_model: RunningFakeModel,
    user: int,
    workspaces: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bridge = start_bridge(
        keepalive_interval_s=0.5, tool_profiles=PROFILES, workspaces_root=workspaces
    )
    fake_model_row(storage, fake_model)
    chat = new_chat(storage, user)
    async with managers(db_url, storage) as make:
        runs = await make(bridge.base_url, tool_profiles=PROFILES)
        svc = SimpleNamespace(storage=storage, runs=runs, settings=runs.settings)
        ids = [
            await _upload(svc, user, CSV, "cities.csv"),
            await _upload(svc, user, BINARY, "bundle.zip"),
        ]
        question = 'Read it\nCALL read_file {"path": "attachments/cities.csv"}'
        started = await use.start_run(
            svc,
            user_id=user,
            session_uuid=chat,
            text=question,
            tool_profile="workspace",
            attachment_ids=ids,
        )
        # The bridge's first workspace agent is built cold (15 s seen on a loaded machine).
        answer = await finished(storage, started.assistant_message_id, timeout=90)
        folder = workspaces / chat / "attachments"
        assert _files(folder) == {"cities.csv": CSV, "bundle.zip": BINARY}
        text = _last_user_text(fake_model, "CALL read_file")
        assert "Saved in your workspace as attachments/cities.csv" in text
        assert "Saved in your workspace as attachments/bundle.zip" in text
        # The agent opened the copy with its own tool, in its own folder.
        assert answer.status == "SUCCESS" and "Ghent" in answer.content, answer.content

        # A regenerate copies again only what is missing.
        kept = (folder / "cities.csv").stat().st_ino
        (folder / "bundle.zip").unlink()
        again = await versions.regenerate(svc, user_id=user, message_id=answer.id)
        await finished(storage, again.assistant_message_id, timeout=60)
        assert _files(folder) == {"cities.csv": CSV, "bundle.zip": BINARY}
        assert (folder / "cities.csv").stat().st_ino == kept

        # A full disk: the message goes, the run answers, the agent reads why.
        monkeypatch.setattr(attachment_workspace, "free_bytes", lambda _fd: 0)
        notes = await _upload(svc, user, b"remember the milk\n", "notes.txt")
        later = await use.start_run(
            svc, user_id=user, session_uuid=chat, text="And these notes", attachment_ids=[notes]
        )
        done = await finished(storage, later.assistant_message_id, timeout=60)
        assert done.status == "SUCCESS"
        text = _last_user_text(fake_model, "And these notes")
        assert "remember the milk" in text  # still inline
        assert "notes.txt could not be saved in your workspace (no space left on device)." in text
        assert "notes.txt" not in _files(folder)
        # Later turns name the earlier files with their paths in the workspace; one the copy
        # failed for has none.
        history = _earlier_user_texts(fake_model, "And these notes")
        assert any(
            "cities.csv (text/plain, 37 bytes; in your workspace as attachments/cities.csv)" in t
            and "in your workspace as attachments/bundle.zip)" in t
            for t in history
        ), history
        final = await use.start_run(svc, user_id=user, session_uuid=chat, text="Thanks")
        await finished(storage, final.assistant_message_id, timeout=60)
        history = _earlier_user_texts(fake_model, "Thanks")
        assert any("notes.txt (text/plain, 18 bytes); their" in t for t in history), history


# ---- the service on both stores --------------------------------------------------------------


@pytest.fixture
def svc(
    storage: Storage, s3_settings: S3Settings | None, fake_model: RunningFakeModel
) -> SimpleNamespace:
    fake_model_row(storage, fake_model)  # a model: the run's target is known
    settings = SimpleNamespace(max_upload_mb=2, s3=s3_settings, tool_profiles=PROFILES)
    return SimpleNamespace(storage=storage, settings=settings)


async def _sent(svc: Any, user: int, chat: str, ids: list[int], profile: str | None) -> str:
    _, content = await attachment_parts.for_run(
        svc,
        user_id=user,
        session_uuid=chat,
        model_id=None,
        text="Look",
        attachment_ids=ids,
        tool_profile=profile,
    )
    assert isinstance(content, list)
    return content[0]["text"]


async def test_a_taken_name_is_numbered_and_the_same_file_is_not_copied_again(
    svc, user, workspaces: Path
) -> None:
    chat = new_chat(svc.storage, user)
    first = await _upload(svc, user, CSV, "cities.csv")
    other = await _upload(svc, user, CSV + b"Turku,201863\n", "cities.csv")
    text = await _sent(svc, user, chat, [first, other], "workspace")
    assert "Saved in your workspace as attachments/cities.csv\n" in text + "\n"
    assert "Saved in your workspace as attachments/cities (2).csv" in text
    folder = workspaces / chat / "attachments"
    before = {p.name: p.stat().st_ino for p in folder.iterdir()}

    # Sent again, alone or both, in either order: found where they are, nothing new.
    for ids in ([first], [other, first]):
        text = await _sent(svc, user, chat, ids, "workspace")
        assert "attachments/cities (3).csv" not in text
    assert "Saved in your workspace as attachments/cities (2).csv" in text
    assert {p.name: p.stat().st_ino for p in folder.iterdir()} == before
    assert _files(folder) == {"cities.csv": CSV, "cities (2).csv": CSV + b"Turku,201863\n"}


async def test_a_chat_conversation_copies_nothing_and_names_no_path(
    svc, user, workspaces: Path
) -> None:
    chat = new_chat(svc.storage, user)
    csv = await _upload(svc, user, CSV, "cities.csv")
    text = await _sent(svc, user, chat, [csv], None)  # the conversation's: Chat
    assert "Lyon" in text and "workspace" not in text
    assert not (workspaces / chat).exists()
    # A Workspace conversation whose profile the operator disabled since: Chat again.
    svc.settings.tool_profiles = ("chat",)
    assert "workspace" not in await _sent(svc, user, chat, [csv], None)
    assert not (workspaces / chat).exists()


def _refuse(exc: OSError) -> Any:
    def refused(*_args: Any, **_kw: Any) -> Any:
        raise exc

    return refused


@pytest.mark.parametrize(
    ("where", "exc", "said"),
    [
        ("open_subfolder", PermissionError(errno.EACCES, "Permission denied"), "permission denied"),
        ("free_bytes", None, "no space left on device"),
        ("place", OSError(errno.EIO, "Input/output error"), "input/output error"),
    ],
)
async def test_a_failing_copy_is_said_and_leaves_nothing(
    svc, user, workspaces: Path, monkeypatch: pytest.MonkeyPatch, where: str, exc, said: str
) -> None:
    chat = new_chat(svc.storage, user)
    csv = await _upload(svc, user, CSV, "cities.csv")
    fake = (lambda _fd: 0) if exc is None else _refuse(exc)
    monkeypatch.setattr(attachment_workspace, where, fake)
    text = await _sent(svc, user, chat, [csv], "workspace")
    assert "```cities.csv\n" + CSV.decode() in text
    assert f"cities.csv could not be saved in your workspace ({said})." in text
    assert _files(workspaces / chat / "attachments") == {}  # no temporary file left either


async def test_a_link_named_attachments_never_leads_a_copy_out(
    svc, user, workspaces: Path, tmp_path: Path
) -> None:
    chat = new_chat(svc.storage, user)
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspaces / chat).mkdir(parents=True)
    (workspaces / chat / "attachments").symlink_to(outside)
    csv = await _upload(svc, user, CSV, "cities.csv")
    text = await _sent(svc, user, chat, [csv], "workspace")
    assert "cities.csv could not be saved in your workspace (attachments/ is not a folder" in text
    assert list(outside.iterdir()) == []


async def test_a_link_under_the_name_is_taken_never_followed(
    svc, user, workspaces: Path, tmp_path: Path
) -> None:
    chat = new_chat(svc.storage, user)
    secret = tmp_path / "secret.csv"
    secret.write_bytes(CSV)  # the same bytes, outside: still never the copy
    folder = workspaces / chat / "attachments"
    folder.mkdir(parents=True)
    (folder / "cities.csv").symlink_to(secret)
    csv = await _upload(svc, user, CSV, "cities.csv")
    text = await _sent(svc, user, chat, [csv], "workspace")
    assert "Saved in your workspace as attachments/cities (2).csv" in text
    assert (folder / "cities (2).csv").read_bytes() == CSV and not (
        folder / "cities (2).csv"
    ).is_symlink()


def test_a_numbered_name_keeps_its_extension_within_the_filesystems_limit() -> None:
    assert numbered("cities.csv", 1) == "cities.csv"
    assert numbered("cities.csv", 2) == "cities (2).csv"
    assert numbered("README", 3) == "README (3)"
    long = numbered("é" * 250 + ".csv", 12)
    assert long.endswith("é (12).csv") and len(long.encode()) <= NAME_BYTES


async def test_images_for_a_model_that_does_not_read_them_are_saved_and_named(
    svc, user, workspaces: Path
) -> None:
    png = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + os.urandom(48)
    chat = new_chat(svc.storage, user)
    image = await _upload(svc, user, png, "photo.png")
    model = await svc.storage.call(model_configs.list_models)
    assert not model[0].supports_images
    text = await _sent(svc, user, chat, [image], "workspace")
    assert "[image photo.png attached: this model does not read images]\n" in text
    assert "Saved in your workspace as attachments/photo.png" in text
    assert (workspaces / chat / "attachments" / "photo.png").read_bytes() == png


async def test_a_new_conversation_refused_after_the_copy_leaves_no_folder(
    svc, user, workspaces: Path
) -> None:
    """The turn refuses (another worker's run took the person's last slot meanwhile): the
    conversation is removed, and so is the folder its files were copied into."""

    async def no_slot(**_: Any) -> Any:
        raise RunRefused("You already have 4 answers running.", "too_many_runs")

    async def nothing_running(*_: Any, **__: Any) -> Any:
        return None

    async def none_working(**_: Any) -> int:
        return 0

    runs = SimpleNamespace(
        validate_message=lambda text: text,
        running_in=nothing_running,
        working_runs=none_working,
        send=no_slot,
    )
    settings = SimpleNamespace(**vars(svc.settings), max_active_runs=4, skills_dir=workspaces)
    backend = SimpleNamespace(storage=svc.storage, settings=settings, runs=runs)
    csv = await _upload(svc, user, CSV, "cities.csv")
    chat = str(uuid.uuid4())
    with pytest.raises(RunRefused):
        await use.start_conversation(
            backend,
            user_id=user,
            session_uuid=chat,
            hermes_session=uuid.uuid4().hex,
            text="Look",
            tool_profile="workspace",
            attachment_ids=[csv],
        )
    assert not (workspaces / chat).exists()

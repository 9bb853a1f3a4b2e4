"""The JSON export: every stored field of the session and its messages, logs and questions.

The document is enough to rebuild the tree (`parent_id`, `is_active`, `branch_order`) and to
replay each message's thinking view from its `logs`.

Version 2 added each user message's `attachments` (name, size, media_type, sha256; with the
"with files" option also `data`, the bytes in base64, and a top-level `files` saying the limit
and which files were left out). An import still reads version 1, which has no files.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from agent_chat.db.models import ChatMessage, MessageRole
from agent_chat.export.file_data import FileData
from agent_chat.export.reading import ModelInfo, SessionExport, stored_choices

EXPORT_FORMAT = "agent-chat-export"
EXPORT_VERSION = 2
READABLE_VERSIONS = (1, 2)  # what an import reads: 1 is 2 without files


def _iso(value: datetime | None) -> str | None:
    """A stored (naive UTC) time as ISO 8601 with its offset."""
    return None if value is None else value.replace(tzinfo=UTC).isoformat()


def _meta(meta_json: str | None) -> Any:
    if not meta_json:
        return None
    try:
        return json.loads(meta_json)
    except ValueError:
        return meta_json  # kept as stored rather than lost


def _attachments_json(
    message: ChatMessage, data: SessionExport, files: FileData | None
) -> dict[str, Any]:
    """`attachments` of a user message (none on others: only a person attaches files)."""
    if message.role != MessageRole.USER.value:
        return {}
    listed = []
    for row in data.attachments.get(message.id or 0, []):
        item: dict[str, Any] = {
            "name": row.name,
            "size": row.size,
            "media_type": row.media_type,
            "sha256": row.sha256,
        }
        if files is not None and (encoded := files.data.get(row.id or 0)) is not None:
            item["data"] = encoded
        listed.append(item)
    return {"attachments": listed}


def _message_json(
    message: ChatMessage, data: SessionExport, files: FileData | None
) -> dict[str, Any]:
    mid = message.id or 0
    return {
        "id": mid,
        "parent_id": message.parent_id,
        "is_active": message.is_active,
        "branch_order": message.branch_order,
        "role": message.role,
        "status": message.status,
        "content": message.content,
        "error": message.error,
        "model_id": message.model_id,
        "skill_folder": message.skill_folder,
        "tool_profile": message.tool_profile,
        "run_id": message.run_id,
        "input_tokens": message.input_tokens,
        "output_tokens": message.output_tokens,
        "total_tokens": message.total_tokens,
        "context_tokens": message.context_tokens,
        "created_at": _iso(message.created_at),
        "completed_at": _iso(message.completed_at),
        "logs": [
            {
                "seq": row.seq,
                "kind": row.kind,
                "content": row.content,
                "tool_name": row.tool_name,
                "meta": _meta(row.meta_json),
                "created_at": _iso(row.created_at),
            }
            for row in data.logs.get(mid, [])
        ],
        "pauses": [
            {
                "run_id": pause.run_id,
                "clarify_id": pause.clarify_id,
                "kind": pause.kind,
                "question": pause.question,
                "detail": pause.detail,
                "choices": stored_choices(pause.choices_json),
                "status": pause.status,
                "answer": pause.answer,
                "created_at": _iso(pause.created_at),
                "answered_at": _iso(pause.answered_at),
            }
            for pause in data.pauses.get(mid, [])
        ],
        **_attachments_json(message, data, files),
    }


def _model_json(model: ModelInfo | None) -> dict[str, Any] | None:
    return (
        None if model is None else {"id": model.id, "name": model.name, "model": model.model_name}
    )


def _files_json(files: FileData | None) -> dict[str, Any]:
    if files is None:
        return {}
    return {"files": {"limit_bytes": files.limit_bytes, "left_out": list(files.left_out)}}


def to_json(
    data: SessionExport,
    *,
    exported_at: datetime,
    files: FileData | None = None,
    workspace: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The export document. The tree is rebuilt from `parent_id`, `is_active`, `branch_order`.
    `files` (`file_data.gather_files`): the "with files" export, each file's bytes in it;
    `workspace` its workspace checkpoints (`checkpoint_data.gather_checkpoints`)."""
    chat = data.chat
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": _iso(exported_at),
        "branch": data.branch,
        "session": {
            "uuid": chat.session_uuid,
            "title": chat.title,
            "model": _model_json(data.session_model),
            "model_id": chat.model_id,
            "default_model": _model_json(data.default_model),
            "skill_folder": chat.skill_folder,
            "tool_profile": chat.tool_profile,
            "status": chat.status,
            "created_at": _iso(chat.created_at),
            "last_message_at": _iso(chat.last_message_at),
            "updated_at": _iso(chat.updated_at),
            "last_summarized_at": _iso(chat.last_summarized_at),
        },
        "models": [_model_json(m) for _, m in sorted(data.models.items())],
        "active_branch": list(data.active_ids),
        **_files_json(files),
        **({"workspace": workspace} if workspace is not None else {}),
        "messages": [_message_json(m, data, files) for m in data.messages],
    }


def to_json_text(
    data: SessionExport,
    *,
    exported_at: datetime,
    files: FileData | None = None,
    workspace: dict[str, Any] | None = None,
) -> str:
    """`to_json` as the file: UTF-8 text kept as is, indented, ending with a newline."""
    doc = to_json(data, exported_at=exported_at, files=files, workspace=workspace)
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"

"""The files of an imported message: reading `attachments` from an export (version 2) and
the note lines that name, in the message itself, a file that did not come along.

A file with `data` must be exactly the file it names (its size and SHA-256), else the export
is refused: it was changed or cut. A file without `data` (an export without the "with files"
option, or one left out over its limit) is named in its message
("[file cities.csv was not included in the export]"), as is one the upload refuses (a
program): the import goes on, and the agent of the new conversation reads the note too.
Plain Python: `services/imports.py` stores the files and writes the notes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Any

from agent_chat.db.attachments import MAX_PER_MESSAGE
from agent_chat.db.import_plan import FilePlan, ImportRefused

NOT_INCLUDED = "Files whose bytes were not in the export are named in their messages."
REFUSED = "A file that cannot be attached (a program) is named in its message instead."
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _refuse(where: str, what: str) -> ImportRefused:
    return ImportRefused(f"{where} {what}")


def _file(obj: Any, where: str) -> FilePlan:
    if not isinstance(obj, dict):
        raise _refuse(where, "must be an object.")
    name, size, sha256, data = (obj.get(k) for k in ("name", "size", "sha256", "data"))
    if not isinstance(name, str) or not name.strip():
        raise _refuse(f"{where}.name", "must be a file name.")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise _refuse(f"{where}.size", "must be a whole number of bytes.")
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise _refuse(f"{where}.sha256", "must be 64 lower-case hex digits.")
    if data is None:
        return FilePlan(name=name, size=size, sha256=sha256, data=None)
    if not isinstance(data, str):
        raise _refuse(f"{where}.data", "must be base64 text.")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _refuse(f"{where}.data", "is not valid base64.") from exc
    if len(raw) != size or hashlib.sha256(raw).hexdigest() != sha256:
        raise _refuse(
            f"{where}.data", "is not the file it names (another size or SHA-256): changed or cut."
        )
    return FilePlan(name=name, size=size, sha256=sha256, data=raw)


def read_files(message: dict[str, Any], where: str, *, is_user: bool) -> list[FilePlan]:
    """The message's `attachments`, checked; none in a version 1 export."""
    listed = message.get("attachments")
    if listed is None or listed == []:
        return []
    if not isinstance(listed, list):
        raise _refuse(f"{where}.attachments", "must be a list.")
    if not is_user:
        raise _refuse(f"{where}.attachments", "is only for a user message.")
    if len(listed) > MAX_PER_MESSAGE:
        raise _refuse(f"{where}.attachments", f"has more than {MAX_PER_MESSAGE} files.")
    return [_file(item, f"{where}.attachments[{n}]") for n, item in enumerate(listed)]


def _shown(name: str) -> str:
    return " ".join(name.split())[:255]  # one line: a note cannot break the message around it


def not_included_line(name: str) -> str:
    return f"[file {_shown(name)} was not included in the export]"


def refused_line(name: str, why: str) -> str:
    return f"[file {_shown(name)} was not imported: {_shown(why)}]"


def with_lines(content: str, lines: list[str]) -> str:
    """The message's text with the note lines under it."""
    if not lines:
        return content
    notes = "\n".join(lines)
    return f"{content.rstrip()}\n\n{notes}" if content.strip() else notes

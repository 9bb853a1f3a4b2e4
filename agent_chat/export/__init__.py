"""The export of one conversation as Markdown or JSON.

- `reading`: `collect()` reads a session, its messages, run logs, questions and models in a
  handful of queries, whatever the number of messages, into a `SessionExport`.
- `markdown` / `json_export`: pure functions turning a `SessionExport` into the file;
  `markdown_escape` keeps message text from breaking the Markdown around it.
- `files`: the download's file name and media type.
- `file_data`: the attached files' bytes (base64) of a JSON export "with files", read through
  the store within `FILES_LIMIT_BYTES`.

Of a model only the id, name and model name are ever read, so an API key cannot leak.
Plain Python: nothing here imports reflex.
"""

from __future__ import annotations

from agent_chat.export.file_data import FILES_LIMIT_BYTES, FileData, gather_files
from agent_chat.export.files import FORMATS, MEDIA_TYPES, export_filename, slug
from agent_chat.export.json_export import EXPORT_FORMAT, EXPORT_VERSION, to_json, to_json_text
from agent_chat.export.markdown import to_markdown
from agent_chat.export.markdown_escape import contain, details, fenced, inline
from agent_chat.export.reading import BRANCHES, ModelInfo, SessionExport, collect

__all__ = [
    "BRANCHES",
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "FILES_LIMIT_BYTES",
    "FORMATS",
    "FileData",
    "MEDIA_TYPES",
    "ModelInfo",
    "SessionExport",
    "collect",
    "contain",
    "details",
    "export_filename",
    "fenced",
    "gather_files",
    "inline",
    "slug",
    "to_json",
    "to_json_text",
    "to_markdown",
]

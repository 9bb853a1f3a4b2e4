"""An MCP tool result's binary data left out of what the model and the page get.

hermes turns each content block of a result into text: an image or audio block is written to
the person's hermes cache and named `MEDIA:<path>`, an embedded resource's `blob` to its
document cache and named in a `[MCP resource saved to <path> (<mime>, <n> bytes) …]` line
(`tools.mcp_tool._make_tool_handler`); no block's base64 reaches that text. But hermes puts a
server's structured copy of the result (`structuredContent`, FastMCP's default for a tool
returning blocks or a dict) beside the text as it came, and FastMCP's text block for a dict
is that dict as JSON: base64 there would reach the model, the `tool_end` event and the
database. `without_binary_data` replaces it with a short placeholder saying what was there:
an image block's data names the picture kept for the page (bridge/mcp_images.py), an audio
block's gives its mime type and size, a resource's blob its mime type, size and uri, and any
other run of at least `MIN_CHARS` base64 characters (a `data:` URL's too), in the structured
copy or the text, its size. A tool's result is passed through it before its pictures are
kept (`mcp_images.keeping`); the utility tools hermes adds per server go through it too
(`install`): `read_resource` returns a text resource as it is (a `data:` URL in it too) and
`get_prompt` a message's image, audio or resource block as its Python repr, base64 and all.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

from agent_chat.common.tool_images import names_in

MIN_CHARS = 2048  # a base64 run this long (1.5 KB of data) is data, not words or an id
_B64 = "A-Za-z0-9+/_-"  # standard and URL-safe alphabets
# Anchored at the start of a run (the look-behind), so a long run that is not data costs one
# pass, not one per character.
_RUN = re.compile(
    rf"(?<![{_B64}])(?:data:([\w.+-]+/[\w.+-]+)(?:;[^;,\s\"]*)*?;base64,)?([{_B64}]{{{MIN_CHARS},}}=*)"
)
_MARKERS = ('"image"', '"audio"', '"blob"')
_UTILITIES = ("_make_read_resource_handler", "_make_get_prompt_handler")
_lock = threading.Lock()
_installed = False


def install() -> None:
    """Wrap hermes' factories of a server's resource and prompt readers once per process."""
    global _installed
    import tools.mcp_tool as mcp

    with _lock:
        if _installed:
            return
        for factory in _UTILITIES:
            setattr(mcp, factory, _leaving_out(getattr(mcp, factory)))
        _installed = True


def _leaving_out(make: Callable[..., Callable[..., str]]) -> Callable[..., Callable[..., str]]:
    def factory(*made_with: Any) -> Callable[..., str]:
        handler = make(*made_with)

        def call(args: dict, **kwargs: Any) -> str:
            result = handler(args, **kwargs)
            return without_binary_data(result) if isinstance(result, str) else result

        return call

    return factory


def without_binary_data(result: str) -> str:
    """hermes' result JSON with base64 data replaced by placeholders (the text's `MEDIA:`
    references untouched; the n-th image block is named after the n-th); anything else as
    it was."""
    if len(result) < MIN_CHARS and not any(marker in result for marker in _MARKERS):
        return result
    try:
        parsed = json.loads(result)
    except ValueError:
        return _without_runs(result)
    text = parsed.get("result") if isinstance(parsed, dict) else None
    names = iter(names_in(text) if isinstance(text, str) else [])
    stripped = _strip(parsed, names)
    return result if stripped == parsed else json.dumps(stripped, ensure_ascii=False)


def _strip(value: Any, names: Any) -> Any:
    if isinstance(value, str):
        return _without_runs(value)
    if isinstance(value, list):
        return [_strip(item, names) for item in value]
    if not isinstance(value, dict):
        return value
    kind, data, mime = value.get("type"), value.get("data"), value.get("mimeType")
    if kind == "image" and isinstance(data, str):
        name = next(names, None)
        shown = f"[image: {name} shown behind Show image]" if name else None
        return {**value, "data": shown or _placeholder("image", mime, data)}
    if kind == "audio" and isinstance(data, str):
        return {**value, "data": _placeholder("audio", mime, data)}
    blob = value.get("blob")
    if isinstance(blob, str) and "uri" in value:  # a resource's contents (BlobResourceContents)
        return {**value, "blob": _placeholder("blob", mime, blob, value["uri"])}
    return {key: _strip(item, names) for key, item in value.items()}


def _without_runs(text: str) -> str:
    if len(text) < MIN_CHARS:
        return text
    return _RUN.sub(lambda m: _placeholder("base64 data", m.group(1), m.group(2)), text)


def _placeholder(kind: str, mime: Any, data: str, uri: Any = None) -> str:
    about = [str(mime)] if mime else []
    about.append(f"{_size(data)} bytes")
    if uri:
        about.append(f"uri={uri}")
    return f"[{kind} left out: {', '.join(about)}]"


def _size(data: str) -> int:
    """The bytes `data` decodes to, without decoding it."""
    return (len(data) - sum(data.count(c) for c in "=\r\n \t")) * 3 // 4

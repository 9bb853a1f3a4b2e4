"""The shared page: one server-rendered HTML document, no script at all.

Markdown goes through markdown-it (CommonMark + tables + strikethrough) with raw HTML off,
so a message's `<script>` stays text; only http(s) and mailto links survive, each with
`rel="noopener noreferrer nofollow"`; an image becomes a link that loads nothing. The style is
inline and allowed by its hash, so the Content-Security-Policy can forbid everything else.
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from agent_chat.db.attachment_notes import human_size
from agent_chat.share_page.links import picture_path
from agent_chat.share_page.style import CSS as _CSS

_CSS_HASH = base64.b64encode(hashlib.sha256(_CSS.encode("utf-8")).digest()).decode("ascii")
# Images only from this site: the snapshot's own thumbnails (`/s/<token>/pictures/<n>`);
# a message's Markdown image stays a link that loads nothing.
CSP = (
    f"default-src 'none'; style-src 'sha256-{_CSS_HASH}'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    # Never kept by a shared cache: a revoked link must stop answering everywhere.
    "Cache-Control": "private, no-store, max-age=0",
    "X-Robots-Tag": "noindex, nofollow, noarchive",
    "Content-Security-Policy": CSP,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
# A thumbnail: never a page (no script, no sniffing), only an image on this site's pages.
PICTURE_HEADERS = {
    "Cache-Control": "private, no-store, max-age=0",
    "X-Robots-Tag": "noindex, nofollow, noarchive",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cross-Origin-Resource-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}
_SAFE_SCHEMES = ("http://", "https://", "mailto:")


def _validate_link(url: str) -> bool:
    return url.strip().lower().startswith(_SAFE_SCHEMES)


def _link_open(
    renderer: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return renderer.renderToken(tokens, idx, options, env)


def _image(
    renderer: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    alt = html.escape(token.content or "image")
    src = str(token.attrGet("src") or "")
    if not _validate_link(src) or src.lower().startswith("mailto:"):
        return f'<span class="image-link">[image: {alt}]</span>'
    href = html.escape(src, quote=True)
    return (
        f'<a class="image-link" href="{href}" rel="noopener noreferrer nofollow">[image: {alt}]</a>'
    )


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = _validate_link
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image)
    return md


_MD = _markdown()


def markdown_html(text: str) -> str:
    return _MD.render(text or "")


def _e(text: Any) -> str:
    return html.escape(str(text or ""), quote=True)


def _when(iso: str | None) -> str:
    if not iso:
        return ""
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return ""


def _tool(tool: dict[str, Any]) -> str:
    note = " (error)" if tool.get("is_error") else ""
    parts = [f"<div class='tool'><div class='tool-name'>{_e(tool.get('tool'))}{note}</div>"]
    if tool.get("args"):
        parts.append(f"<pre class='code'>{_e(tool['args'])}</pre>")
    if tool.get("result"):
        parts.append(f"<pre class='code result'>{_e(tool['result'])}</pre>")
    return "".join(parts) + "</div>"


def _folded(message: dict[str, Any]) -> str:
    """Thinking, tools, tasks and questions in one closed <details>, like the app."""
    tools = message.get("tools") or []
    todos = message.get("todos") or []
    questions = message.get("questions") or []
    thinking = message.get("thinking") or ""
    if not (thinking.strip() or tools or todos or questions):
        return ""
    label = "Thinking"
    if tools:
        label += f" · {len(tools)} tool call{'s' if len(tools) != 1 else ''}"
    body = []
    if thinking.strip():
        body.append(f"<div class='thinking-text'>{markdown_html(thinking)}</div>")
    body += [_tool(t) for t in tools]
    if todos:
        items = "".join(
            f"<li class='todo {_e(t.get('status'))}'>{_e(t.get('content'))}</li>" for t in todos
        )
        body.append(f"<ul class='todos'>{items}</ul>")
    for question, answer in questions:
        shown = _e(answer) if answer is not None else "<em>cancelled</em>"
        body.append(
            f"<p class='question'><b>Asked:</b> {_e(question)}<br><b>Answer:</b> {shown}</p>"
        )
    return f"<details class='thinking'><summary>{label}</summary>{''.join(body)}</details>"


def _files(message: dict[str, Any], pictures: Iterator[str]) -> str:
    """A user message's files: a picture's frozen thumbnail (the next of `pictures`, its
    URLs in page order), else the name and size; never a link to the file itself (the page
    is public, the files are not)."""
    files = [f for f in message.get("files") or [] if isinstance(f, dict)]
    if not files:
        return ""
    items = []
    for f in files:
        named = f"{_e(f.get('name'))} <span class='size'>({_e(_size(f.get('size')))})</span>"
        if isinstance(f.get("picture"), str):
            items.append(
                f"<li class='picture'><img src='{_e(next(pictures))}' alt='{_e(f.get('name'))}'"
                f" loading='lazy' decoding='async'><span>{named}</span></li>"
            )
        else:
            items.append(f"<li>📎 {named}</li>")
    return f"<ul class='files'>{''.join(items)}</ul>"


def _size(size: Any) -> str:
    return human_size(size) if isinstance(size, int) and size >= 0 else ""


def _message(message: dict[str, Any], pictures: Iterator[str]) -> str:
    kind = message.get("kind")
    when = _e(_when(message.get("created_at")))
    if kind == "reset":
        return f"<div class='marker'>Context reset · {when}</div>"
    if kind == "summary":
        return (
            "<details class='summary'><summary>Summary of earlier messages</summary>"
            f"{markdown_html(message.get('content') or '')}</details>"
        )
    if kind == "user":
        return (
            f"<section class='msg user'><div class='who'>You <time>{when}</time></div>"
            f"<div class='bubble'>{markdown_html(message.get('content') or '')}</div>"
            f"{_files(message, pictures)}</section>"
        )
    status, error = str(message.get("status")), message.get("error") or ""
    notes = ""
    if status == "FAILED":
        said = f"This answer failed: {_e(error)}" if error else "This answer failed."
        notes = f"<p class='status-note'>{said}</p>"
    elif status == "STOPPED":
        notes = "<p class='status-note'>Stopped before the answer was complete.</p>"
    elif status == "RUNNING":
        notes = "<p class='status-note'>Still being written when the link was made.</p>"
    return (
        f"<section class='msg assistant'><div class='who'>Assistant <time>{when}</time></div>"
        f"{_folded(message)}<div class='answer'>{markdown_html(message.get('content') or '')}"
        f"</div>{notes}</section>"
    )


def _document(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<meta name='robots' content='noindex, nofollow'>"
        "<meta name='referrer' content='no-referrer'>"
        f"<meta name='color-scheme' content='light dark'><title>{_e(title)}</title>"
        f"<style>{_CSS}</style></head><body><main>{body}</main></body></html>"
    )


def share_html(snapshot_json: str, *, token: str) -> str:
    """The page of a snapshot (`snapshot.take_snapshot`) opened by `token`."""
    snapshot = json.loads(snapshot_json)
    title = snapshot.get("title") or "Conversation"
    urls = (picture_path(token, n) for n in itertools.count())
    messages = "".join(_message(m, urls) for m in snapshot.get("messages", []))
    header = (
        f"<header><h1>{_e(title)}</h1><p class='meta'>A read-only copy of a conversation, "
        f"as it was on {_e(_when(snapshot.get('taken_at')))}.</p></header>"
    )
    footer = "<footer>Shared from Agent Chat. Later messages are not shown.</footer>"
    return _document(f"{title} · shared conversation", header + messages + footer)


def missing_html() -> str:
    body = (
        "<header><h1>This link does not work</h1></header><p class='meta'>It does not exist, "
        "it has expired, or the person who shared it revoked it.</p>"
    )
    return _document("Link not found", body)

"""The first paint of `/chat` and `/chat/<uuid>`: the owner's conversation list and the
conversation's newest messages, server-rendered into the app's HTML (api/first_paint.py),
shown until the app has rendered them itself.

It is a read-only picture of the page, laid out like it (sidebar, header, message column),
outside React's tree: a fixed layer at the end of `<body>`, which React 19's hydration of
the document skips. A question is its text as typed, an answer its Markdown, as in the app.
A small script removes it as soon as the app shows what it pictures (a message, or with no
message a conversation in the list) or "not found", so it never stands for the live page for
long. Text goes through the share page's safe Markdown (raw HTML off); an answer still being
written says so.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from agent_chat.share_page.render import markdown_html

LAYER_ID = "first-paint"


@dataclass(frozen=True)
class PaintedMessage:
    kind: str  # "user", "assistant", "reset", "summary"
    status: str  # the message's MessageStatus value
    content: str
    cut: bool = False  # only the content's end is here


@dataclass(frozen=True)
class PaintedRow:
    title: str
    current: bool = False  # the conversation the page opens


@dataclass(frozen=True)
class PaintedFolder:
    name: str
    count: int
    collapsed: bool
    rows: list[PaintedRow]  # none when folded


@dataclass(frozen=True)
class PaintedSidebar:
    pinned: list[PaintedRow]
    folders: list[PaintedFolder]
    others: list[PaintedRow]


@dataclass(frozen=True)
class FirstPaint:
    title: str
    messages: list[PaintedMessage]
    earlier: bool  # older messages are not in it
    sidebar: PaintedSidebar | None = None


# The app's look (assets/styles.css, Radix's tokens, which the page's stylesheet defines on
# :root) with fallbacks, so the hand-over to the app barely moves anything. Like the app's
# scroller, a short conversation starts at the top and a long one shows its end
# (column-reverse, the column's bottom margin taking any room left). It covers the app but
# not the app's toasts (Sonner's list sits at z-index 999999999): "Cannot connect to server"
# must show over it when the websocket never opens.
_CSS = """
#first-paint { position: fixed; inset: 0; z-index: 999999000; display: flex;
  background: var(--color-background, #fff); color: var(--gray-12, #1c2024);
  font-family: var(--default-font-family, system-ui, sans-serif); font-size: 16px;
  line-height: 1.5; }
#first-paint .fp-main { flex: 1; display: flex; flex-direction: column; min-width: 0; }
#first-paint .fp-head { padding: 12px 24px; border-bottom: 1px solid var(--gray-4, #e8e8ec);
  font-weight: 600; min-height: 49px; overflow: hidden; white-space: nowrap;
  text-overflow: ellipsis; }
#first-paint .fp-side { width: 270px; min-width: 270px; background: var(--gray-2, #f9f9fb);
  border-right: 1px solid var(--gray-5, #e0e1e6); padding: 14px 10px; display: flex;
  flex-direction: column; gap: 8px; overflow: hidden; font-size: 14px; }
#first-paint .fp-brand { font-size: 20px; font-weight: 700; min-height: 32px; }
#first-paint .fp-new { height: 32px; border-radius: 6px; background: var(--accent-a3, #f1eefe);
  color: var(--accent-11, #6550b9); display: flex; align-items: center;
  justify-content: center; font-weight: 500; }
#first-paint .fp-search { height: 32px; border-radius: 6px; padding: 0 10px;
  border: 1px solid var(--gray-a7, #d0d1d8); color: var(--gray-a10, #8b8d98);
  display: flex; align-items: center; }
#first-paint .fp-list { display: flex; flex-direction: column; gap: 4px; margin-top: 4px; }
#first-paint .fp-row { padding: 6px 8px; border-radius: 8px; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; line-height: 20px; }
#first-paint .fp-current { background: var(--accent-4, #e4defc); }
#first-paint .fp-label { font-size: 12px; font-weight: 500; color: var(--gray-11, #60646c);
  padding: 6px 8px 0; }
#first-paint .fp-count { color: var(--gray-11, #60646c); font-size: 12px; margin-left: 4px; }
#first-paint .fp-scroll { flex: 1; overflow: hidden; display: flex;
  flex-direction: column-reverse; }
#first-paint .fp-col { max-width: 820px; margin: 0 auto auto; padding: 24px 24px 40px;
  width: 100%; display: flex; flex-direction: column; gap: 24px; }
#first-paint .fp-user { align-self: flex-end; background: var(--accent-3, #f4f0fe);
  padding: 10px 14px; border-radius: 16px; max-width: 80%; overflow-wrap: anywhere; }
#first-paint .fp-answer { overflow-wrap: anywhere; position: relative; padding: 20px 0 0 44px;
  min-height: 52px; }
#first-paint .fp-answer::before { content: "H"; position: absolute; left: 0; top: 0;
  width: 32px; height: 32px; border-radius: 50%; background: var(--accent-3, #f4f0fe);
  color: var(--accent-11, #6550b9); display: flex; align-items: center;
  justify-content: center; }
#first-paint .fp-user > :first-child, #first-paint .fp-answer > :first-child { margin-top: 0; }
#first-paint .fp-user > :last-child, #first-paint .fp-answer > :last-child { margin-bottom: 0; }
#first-paint .fp-answer p, #first-paint .fp-answer ul, #first-paint .fp-answer ol {
  margin: 0 0 0.75em; }
#first-paint .fp-answer ul { list-style: disc; padding-left: 1.5em; }
#first-paint .fp-answer ol { list-style: decimal; padding-left: 1.5em; }
#first-paint .fp-answer li { margin: 0.25em 0; }
#first-paint .fp-answer code { background: var(--gray-3, #f0f0f3); padding: 0.1em 0.35em;
  border-radius: 4px; font-size: 0.88em; }
#first-paint .fp-user { white-space: pre-wrap; }
#first-paint pre { background: var(--gray-3, #f0f0f3); padding: 10px 12px; border-radius: 8px;
  overflow-x: auto; white-space: pre-wrap; }
#first-paint .fp-note, #first-paint .fp-marker { color: var(--gray-11, #60646c);
  font-size: 14px; }
#first-paint .fp-marker { text-align: center; border-top: 1px dashed var(--gray-6, #d9d9e0);
  padding-top: 6px; }
#first-paint .fp-composer { max-width: 820px; width: 100%; margin: 0 auto;
  padding: 8px 24px 18px; }
#first-paint .fp-box { height: 80px; border: 1px solid var(--gray-a7, #d0d1d8);
  border-radius: 12px; }
@media (max-width: 767px) { #first-paint .fp-side { display: none; }
  #first-paint .fp-answer { padding-left: 0; }
  #first-paint .fp-answer::before { display: none; }
  #first-paint .fp-col { padding: 16px 14px 24px; }
  #first-paint .fp-composer { padding: 8px 12px 12px; } }
"""

# Gone once the app has taken over: it shows what the picture shows (`data-until`: a message,
# not its empty page, which it shows for a moment between its first state and the messages;
# with no message, a conversation in its list, not its empty list) or "not found"; and after
# 30 s, so it never stands for a page that did not start.
_SCRIPT = """
(function () {
  var layer = document.getElementById("first-paint");
  if (!layer) return;
  var sel = layer.getAttribute("data-until") + ',[data-testid=%s]';
  var done = false;
  function gone() {
    if (done) return; done = true; observer.disconnect();
    if (layer.parentNode) layer.parentNode.removeChild(layer);
  }
  var observer = new MutationObserver(function () {
    var root = document.querySelector('.radix-themes');
    if (root && root.querySelector(sel)) gone();
  });
  observer.observe(document.documentElement, {childList: true, subtree: true});
  setTimeout(gone, 30000);
})();
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _message(message: PaintedMessage) -> str:
    if message.kind == "reset":
        return "<div class='fp-marker'>Context reset</div>"
    if message.kind == "summary":
        return "<div class='fp-marker'>Summary of earlier messages</div>"
    more = "<div class='fp-note'>…</div>" if message.cut else ""
    if message.kind == "user":  # as the app shows it: the text as typed
        shown = ("…" if message.cut else "") + message.content
        return f"<div class='fp-user' data-testid='first-paint-user'>{_e(shown)}</div>"
    text = more + markdown_html(message.content)
    note = ""
    if message.status == "RUNNING":
        note = "<div class='fp-note'>Still being written…</div>"
    elif message.status == "FAILED":
        note = "<div class='fp-note'>This answer failed.</div>"
    elif message.status == "STOPPED":
        note = "<div class='fp-note'>Stopped before the answer was complete.</div>"
    return f"<div class='fp-answer' data-testid='first-paint-assistant'>{text}{note}</div>"


def _row(row: PaintedRow) -> str:
    current = " fp-current" if row.current else ""
    return f"<div class='fp-row{current}' data-testid='first-paint-row'>{_e(row.title)}</div>"


def _sidebar(side: PaintedSidebar | None) -> str:
    """As components/sidebar.py lays it out: pins, folders, then the others."""
    parts = ["<div class='fp-brand'>Agent Chat</div><div class='fp-new'>New conversation</div>"]
    parts.append("<div class='fp-search'>Search messages and titles</div><div class='fp-list'>")
    if side is not None:
        if side.pinned:
            parts.append("<div class='fp-label'>Pinned</div>")
            parts.extend(_row(r) for r in side.pinned)
        for folder in side.folders:
            name = f"{_e(folder.name)}<span class='fp-count'>{folder.count}</span>"
            parts.append(f"<div class='fp-row'>{'▸' if folder.collapsed else '▾'} {name}</div>")
            parts.extend(_row(r) for r in folder.rows)
        if side.pinned or side.folders:
            parts.append("<div class='fp-label'>Conversations</div>")
        parts.extend(_row(r) for r in side.others)
    return "<div class='fp-side'>" + "".join(parts) + "</div></div>"


# What in the app's page stands for the picture once shown (the script's selector): its
# messages; without any, its list (a conversation, or a folder whose are folded away).
UNTIL_MESSAGES = ("message-user", "message-assistant")
UNTIL_LIST = ("session-item", "folder-toggle")
ALWAYS_UNTIL = "not-found"


def until(paint: FirstPaint) -> str:
    names = UNTIL_MESSAGES if paint.messages else UNTIL_LIST
    return ",".join(f"[data-testid={name}]" for name in names)


def first_paint_html(paint: FirstPaint) -> str:
    """The layer and its script, to go right before `</body>`."""
    earlier = "<div class='fp-marker'>Earlier messages</div>" if paint.earlier else ""
    body = earlier + "".join(_message(m) for m in paint.messages)
    return (
        f"<div id='{LAYER_ID}' data-testid='{LAYER_ID}' aria-busy='true' "
        f"data-until='{_e(until(paint))}'><style>{_CSS}</style>"
        f"{_sidebar(paint.sidebar)}<div class='fp-main'>"
        f"<div class='fp-head'>{_e(paint.title or 'New conversation')}</div>"
        f"<div class='fp-scroll'><div class='fp-col'>{body}</div></div>"
        "<div class='fp-composer'><div class='fp-box'></div></div></div></div>"
        f"<script>{_SCRIPT % ALWAYS_UNTIL}</script>"
    )

"""Keeping message text from breaking the Markdown document around it.

Pure text functions: what a message says stays text (no raw HTML, no stray heading, no fence
left open), and the export's own blocks (`fenced`, `details`) hold any content safely.
"""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_TAG_START = re.compile(r"[A-Za-z/!?]")
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>&#~|])")
# Headings inside a message sit below every heading of the export (h1-h4).
_HEADING_SHIFT = 4


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def _escape_tags(line: str) -> str:
    """`<` that could open raw HTML becomes `&lt;`, except inside `code spans`."""
    out: list[str] = []
    i = 0
    while i < len(line):
        char = line[i]
        if char == "\\" and i + 1 < len(line):
            out.append(line[i : i + 2])
            i += 2
        elif char == "`":
            run_end = i
            while run_end < len(line) and line[run_end] == "`":
                run_end += 1
            ticks = run_end - i
            close = re.compile(rf"(?<!`)`{{{ticks}}}(?!`)").search(line, run_end)
            end = close.end() if close else run_end
            out.append(line[i:end])
            i = end
        elif char == "<" and _TAG_START.match(line, i + 1):
            out.append("&lt;")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def contain(text: str, *, line_breaks: bool = False) -> str:
    """Message text as Markdown that cannot break the document around it.

    Raw HTML is neutralised (so `<script>` or `</details>` stay text), an unclosed code fence
    is closed, headings are shifted below the export's own, and a setext underline cannot turn
    the paragraph above into a heading. Code blocks are left exactly as they are.
    `line_breaks` keeps single newlines as line breaks (for text a person typed).
    """
    out: list[str] = []
    fence: str | None = None
    previous_text: int | None = None  # index in `out` of the last text line
    for line in (text or "").splitlines():
        if line_breaks and previous_text is not None and line.strip() and fence is None:
            out[previous_text] = out[previous_text].rstrip() + "  "
        previous_text = None
        if fence is not None:
            out.append(line)
            match = _FENCE.match(line)
            if (
                match
                and match.group(1)[0] == fence[0]
                and len(match.group(1)) >= len(fence)
                and not match.group(2).strip()
            ):
                fence = None
            continue
        match = _FENCE.match(line)
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            out.append(line)
            continue
        if _SETEXT_UNDERLINE.match(line) and out and out[-1].strip():
            out.append("")
        line = _ATX.sub(lambda m: m.group(1) + "#" * min(6, len(m.group(2)) + _HEADING_SHIFT), line)
        out.append(_escape_tags(line))
        if line.strip():
            previous_text = len(out) - 1
    if fence is not None:
        out.append(fence)
    return "\n".join(out).strip("\n")


def inline(text: str) -> str:
    """One line of plain text, safe inside a heading or list item."""
    return _INLINE_SPECIAL.sub(r"\\\1", _one_line(text))


def fenced(text: str, info: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}"


def details(summary: str, body: str) -> str:
    """A collapsible block; the body is Markdown (the blank lines make it so)."""
    summary_html = html.escape(_one_line(summary), quote=False)
    return f"<details>\n<summary>{summary_html}</summary>\n\n{body.strip()}\n\n</details>"

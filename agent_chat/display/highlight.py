"""Syntax highlighting on the server, as text tokens (no HTML): the page renders each token
as a span whose class names its kind (assets/workspace.css colours them).

Pygments comes with hermes-agent (through rich); without it every text stays plain.
Highlighting is capped: past `MAX_CHARS` a text is shown plain (a token list per character
class would make the page's state large).
"""

from __future__ import annotations

from typing import TypedDict

MAX_CHARS = 24_000
MAX_TOKENS = 6_000

# Pygments token types → the short classes assets/workspace.css knows (checked in order,
# first match wins; a type matches its subtypes).
_CLASSES = (
    ("Comment", "hl-c"),
    ("Keyword", "hl-k"),
    ("Name.Builtin", "hl-b"),
    ("Name.Function", "hl-f"),
    ("Name.Class", "hl-f"),
    ("Name.Decorator", "hl-b"),
    ("Name.Tag", "hl-k"),
    ("Name.Attribute", "hl-f"),
    ("Literal.String", "hl-s"),
    ("Literal.Number", "hl-n"),
    ("Operator.Word", "hl-k"),
    ("Generic.Heading", "hl-k"),
    ("Generic.Subheading", "hl-k"),
    ("Generic.Inserted", "hl-s"),
    ("Generic.Deleted", "hl-e"),
    ("Error", ""),
)


class Token(TypedDict):
    c: str  # css class ("" plain)
    t: str  # the text


def _css_class(token_type: object) -> str:
    name = str(token_type).removeprefix("Token.")
    for prefix, css in _CLASSES:
        if name == prefix or name.startswith(prefix + "."):
            return css
    return ""


def _lexer(filename: str = "", language: str = ""):
    try:
        from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
        from pygments.util import ClassNotFound
    except ImportError:
        return None
    try:
        if language:
            return get_lexer_by_name(language, stripnl=False, ensurenl=False)
        if filename:
            return get_lexer_for_filename(filename, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    return None


def language_for(filename: str) -> str:
    """The language pygments would highlight `filename` as ("" when none: plain text)."""
    lexer = _lexer(filename=filename)
    if lexer is None or lexer.name in ("Text only", "Text output"):
        return ""
    return lexer.aliases[0] if lexer.aliases else lexer.name.lower()


def tokens(text: str, *, filename: str = "", language: str = "") -> list[Token]:
    """`text` as tokens ([] when there is no lexer or it is too long: show it plain).

    Adjacent tokens of the same class are merged, so the joined texts always give `text`
    back exactly."""
    if not text or len(text) > MAX_CHARS:
        return []
    lexer = _lexer(filename=filename, language=language)
    if lexer is None:
        return []
    out: list[Token] = []
    for token_type, value in lexer.get_tokens(text):
        if not value:
            continue
        css = _css_class(token_type)
        if out and out[-1]["c"] == css:
            out[-1] = Token(c=css, t=out[-1]["t"] + value)
        else:
            out.append(Token(c=css, t=value))
    if len(out) > MAX_TOKENS or "".join(t["t"] for t in out) != text:
        return []
    return out

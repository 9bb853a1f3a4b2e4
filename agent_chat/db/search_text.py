"""The text side of full-text search, in plain Python: what the index sees of a text, how a
person's query becomes index terms, and the highlighted snippet of a hit.

Both engines index `search_form(text)`, not the raw text: every character that is not a letter
or digit becomes a space, and each CJK character (Han, kana, bopomofo) becomes a word of its
own. SQLite's unicode61 tokenizer and PostgreSQL's parser then see the same words, and a
Chinese query of any length is a phrase of single characters (机器学习 → 机 器 学 习 next to each
other), which both engines answer from the index. No stemming (a language-neutral index:
the seeds are Chinese, answers often English) and no accent folding, so both engines match
the same words and the highlighter below marks exactly what matched.

PostgreSQL has the same transformation as the SQL function `agent_chat_search_form` (the
migration creates it); SQLite's triggers call this module's function, which the app's engine
registers on every connection (`db/engine.py`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TypedDict

# What is indexed of one text (PostgreSQL's tsvector is at most 1 MB; the rest is not searched).
INDEXED_CHARS = 100_000
QUERY_MAX_CHARS = 200
MAX_TERMS = 12

CJK_RANGES = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3040-\u30ff\u3100-\u312f"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
)
_CJK = re.compile(f"([{CJK_RANGES}])")
_SEPARATORS = re.compile(r"[\W_]+")
# One token of a raw text: a CJK character, or a run of other letters and digits.
_TOKEN = re.compile(f"[{CJK_RANGES}]|[^\\W_{CJK_RANGES}]+")
_QUOTED = re.compile(r'"([^"]*)"')

SQL_FUNCTION = "agent_chat_search_form"


def search_form(text: str | None) -> str:
    """The text as the index sees it (see the module doc)."""
    if not text:
        return ""
    spaced = _SEPARATORS.sub(" ", text[:INDEXED_CHARS])
    return _CJK.sub(r" \1 ", spaced)


def tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


@dataclass(frozen=True)
class Term:
    """Words that must appear next to each other; the last may be a prefix."""

    words: tuple[str, ...]
    prefix: bool = False


def parse_query(query: str) -> list[Term]:
    """The terms of a query, all of which must match. Never fails.

    "quoted words" are a phrase; other words are single terms (a word the index splits, like
    foo-bar or 机器学习, is a phrase of its parts); `hel*` is a prefix, and so is the last word
    when the query does not end in a space (people search while typing). Operators and
    syntax of the engines (AND, OR, NOT, NEAR, -, :, parentheses...) are plain words here.
    """
    text = (query or "")[:QUERY_MAX_CHARS]
    terms: list[Term] = []
    plain_parts: list[str] = []
    last_end = 0
    for match in _QUOTED.finditer(text):
        plain_parts.append(text[last_end : match.start()])
        words = tuple(tokens(match.group(1)))
        if words:
            terms.append(Term(words))
        last_end = match.end()
    tail = text[last_end:]
    plain_parts.append(tail)
    plain_words = " ".join(plain_parts).replace('"', " ").split()
    ends_with_word = bool(tail.strip()) and not text[-1:].isspace()
    for index, word in enumerate(plain_words):
        words = tuple(tokens(word))
        if not words:
            continue
        explicit = word.endswith("*")
        implicit = ends_with_word and index == len(plain_words) - 1 and len(words[-1]) >= 2
        terms.append(Term(words, prefix=explicit or implicit))
    unique: list[Term] = []
    for term in terms:
        if term not in unique:
            unique.append(term)
    return unique[:MAX_TERMS]


def fts5_query(terms: list[Term]) -> str:
    """SQLite FTS5 MATCH text: each term a quoted phrase (the words hold no quote)."""
    return " AND ".join(
        '"' + " ".join(term.words) + '"' + ("*" if term.prefix else "") for term in terms
    )


def pg_tsquery(terms: list[Term]) -> str:
    """PostgreSQL to_tsquery('simple', ...) text: phrases with <->, prefixes with :*."""
    parts = []
    for term in terms:
        words = ["'" + w.replace("'", "''") + "'" for w in term.words]
        if term.prefix:
            words[-1] += ":*"
        parts.append("(" + " <-> ".join(words) + ")")
    return " & ".join(parts)


# PostgreSQL's index also holds, beside each message's vector, the first 2–6 characters of
# each of its words (`agent_chat_search_prefixes`, db/search_schema.py), so a typed prefix is
# one exact lexeme for GIN instead of the union of every word beginning so.
PREFIX_MIN, PREFIX_MAX = 2, 6
# The prefixes of a vector whose prefixes would not fit in a tsvector: this lexeme alone.
PREFIX_MISSING = "*"


def _plain_word(word: str) -> bool:
    """PostgreSQL's parser and 'simple' dictionary make this word one lexeme spelled as here:
    ASCII letters and digits, letters already in lower case, or one CJK character."""
    if len(word) == 1 and _CJK.fullmatch(word):
        return True
    return bool(word) and all(
        (c.isascii() and c.isalnum()) or (c.isalpha() and c == c.lower() and c != c.upper())
        for c in word
    )


def _lexeme(word: str) -> str:
    return "'" + word.replace("'", "''") + "'"


def pg_prefix_lookup(terms: list[Term]) -> tuple[str, str] | None:
    """What PostgreSQL's two-column index is asked for a query with a typed prefix: (the
    query's other plain words as to_tsquery text, "" if none; the prefixes as tsquery input),
    or None when no term ends in a prefix of 2+ plain characters (the query is then asked as
    it is). A superset of the query's matches: phrases become their words, a prefix longer than
    PREFIX_MAX is looked up by its first PREFIX_MAX characters, a row without prefixes
    (PREFIX_MISSING) is included; db/search.py tests the query itself on each row found."""
    prefixes, words = [], []
    for term in terms:
        *head, last = term.words
        if term.prefix and len(last) >= PREFIX_MIN and _plain_word(last):
            prefixes.append(_lexeme(last[:PREFIX_MAX]))
        elif not term.prefix:
            head.append(last)
        words += [w for w in head if _plain_word(w)]
    if not prefixes:
        return None
    unique = list(dict.fromkeys(words))
    lookup = "(" + " & ".join(dict.fromkeys(prefixes)) + f") | '{PREFIX_MISSING}'"
    return " & ".join(_lexeme(w) for w in unique), lookup


# ---- snippets ------------------------------------------------------------------------------


class Segment(TypedDict):
    text: str
    mark: bool


SNIPPET_CHARS = 180
SNIPPET_BEFORE = 50


def _exact_spans(text: str, terms: list[Term]) -> list[tuple[int, int]]:
    """Every place of each term: the text's tokens, each lowered, compared with the term's
    words. The definition of a match (tests/db/test_search_snippets.py holds _match_spans to it)."""
    found = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    words = [text[start:end].lower() for start, end in found]
    spans = []
    for term in terms:
        size, wanted, head = len(term.words), term.words[-1], list(term.words[:-1])
        for i in range(size - 1, len(words)):
            last = words[i]
            if not (last.startswith(wanted) if term.prefix else last == wanted):
                continue
            if size == 1 or words[i - size + 1 : i] == head:
                spans.append((found[i - size + 1][0], found[i][1]))
    return sorted(spans)


# A character of a non-CJK token (a letter or digit that is not CJK): a word's edges.
_WORD_CHAR = f"[^\\W_{CJK_RANGES}]"
_GAP = "[\\W_]*"  # between two tokens: what is not a token (CJK characters are tokens)
# Letters whose lower() is not the same letter by letter: İ becomes two characters, Σ
# depends on its neighbours (ς at a word's end). A text with one takes the exact way.
_CONTEXT_CASE = ("\u0130", "\u03a3")


@functools.lru_cache(maxsize=256)
def _term_pattern(term: Term) -> re.Pattern[str]:
    """`term` at a given place of a lowered text: each word whole (a typed prefix runs on to
    its word's end), the words next to each other."""
    parts = []
    for index, word in enumerate(term.words):
        if _CJK.fullmatch(word):
            parts.append(re.escape(word))
            continue
        part = f"(?<!{_WORD_CHAR}){re.escape(word)}"
        if term.prefix and index == len(term.words) - 1:
            part += f"{_WORD_CHAR}*"
        else:
            part += f"(?!{_WORD_CHAR})"
        parts.append(part)
    return re.compile(_GAP.join(parts))


def _match_spans(text: str, terms: list[Term]) -> list[tuple[int, int]]:
    """Every place of each term in `text` (start, end), as _exact_spans finds them, found
    with str.find in the lowered text and the term's pattern tried only there (the walk over
    every token cost 1.4 ms for an answer of 2,000 words, and a search shows 30 snippets)."""
    if any(letter in text for letter in _CONTEXT_CASE):
        return _exact_spans(text, terms)
    lowered = text.lower()
    spans = []
    for term in terms:
        pattern, first = _term_pattern(term), term.words[0]
        at = lowered.find(first)
        while at != -1:
            found = pattern.match(lowered, at)
            if found:
                spans.append((at, found.end()))
            at = lowered.find(first, at + 1)
    return sorted(spans)


def _segments(text: str, spans: list[tuple[int, int]], start: int, end: int) -> list[Segment]:
    out: list[Segment] = []
    cursor = start
    for span_start, span_end in spans:
        span_start, span_end = max(span_start, cursor), min(span_end, end)
        if span_end <= span_start:
            continue
        if span_start > cursor:
            out.append(Segment(text=text[cursor:span_start], mark=False))
        out.append(Segment(text=text[span_start:span_end], mark=True))
        cursor = span_end
    if cursor < end:
        out.append(Segment(text=text[cursor:end], mark=False))
    return out


def highlight(text: str, terms: list[Term]) -> list[Segment]:
    """The whole (short) text, e.g. a title, with the matched words marked."""
    return _segments(text, _match_spans(text, terms), 0, len(text))


def snippet(text: str, terms: list[Term]) -> list[Segment]:
    """About 180 characters around the first match, on one line, matches marked.

    Plain text segments, never HTML: the page renders `mark` segments in <mark> itself.
    """
    flat = " ".join(text[:INDEXED_CHARS].split())
    spans = _match_spans(flat, terms)
    first = spans[0][0] if spans else 0
    start = max(0, first - SNIPPET_BEFORE)
    if start > 0:  # begin on a word boundary
        space = flat.find(" ", start, first)
        start = space + 1 if space != -1 else start
    end = min(len(flat), start + SNIPPET_CHARS)
    if end < len(flat):
        space = flat.rfind(" ", max(start, end - 30), end)
        end = space if space > first else end
    segments = _segments(flat, spans, start, end)
    if start > 0:
        segments.insert(0, Segment(text="…", mark=False))
    if end < len(flat):
        segments.append(Segment(text="…", mark=False))
    return segments


FILE_MARK = "\U0001f4ce"  # 📎, before each file's name, as the message shows its files


def file_snippet(names: list[str], text: str, terms: list[Term]) -> list[Segment]:
    """The snippet of a message found by its files' names: the names that match (each one
    holds every term, as the index matched it; all of them if none does here), then the
    message's text, matches marked."""
    matched = [n for n in names if all(_match_spans(n, [term]) for term in terms)] or names
    line = " ".join(f"{FILE_MARK} {name}" for name in matched)
    return snippet(f"{line} — {text}" if text.strip() else line, terms)

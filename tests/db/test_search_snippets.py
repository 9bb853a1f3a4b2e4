"""The snippet's highlighter (db/search_text.py): the regex search finds exactly the places
the token-by-token definition finds (what it costs: benchmarks/search.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_chat.db.search_text import (
    _exact_spans,
    _match_spans,
    highlight,
    parse_query,
    snippet,
)

# Letters in both cases (with a few whose case rules are odd), digits, CJK, separators.
ALPHABET = "abcAB CÉéßİiıΣσς学习机器_-'\".,:*!\n1"
words = st.text(alphabet=ALPHABET, min_size=0, max_size=12)


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=80), query=words)
def test_the_regex_search_finds_what_the_token_walk_finds(text: str, query: str) -> None:
    terms = parse_query(query)
    assert _match_spans(text, terms) == _exact_spans(text, terms)


def test_phrases_prefixes_and_overlapping_places() -> None:
    terms = parse_query('"a a" b')
    assert _match_spans("a a a b", terms) == _exact_spans("a a a b", terms)
    assert len(_match_spans("a a a b", terms)) == 3  # two overlapping phrases and the word
    typed = parse_query("Pho")  # a prefix: the whole word is marked
    assert [s["text"] for s in highlight("PHOTOS, photo.", typed) if s["mark"]] == [
        "PHOTOS",
        "photo",
    ]
    assert _match_spans("机器学习", parse_query("器学")) == [(1, 3)]


def test_a_long_answer_gives_the_snippet_of_its_first_match() -> None:
    terms = parse_query("needle hay")
    long = ("lorem ipsum dolor sit amet, " * 3_000) + "some hay and a needle in it"
    parts = snippet(long, terms)
    assert [s["text"] for s in parts if s["mark"]] == ["hay", "needle"]
    assert parts[0]["text"] == "…" and len("".join(s["text"] for s in parts)) <= 182

"""Full-text search (db/search.py) on the migrated schema: the index, snippets, query syntax,
Chinese, hostile input, and the index staying current as conversations change."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from agent_chat.db.messages import active_branch, append_message, finish_message
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, MessageStatus
from agent_chat.db.search import open_hit, search
from agent_chat.db.sessions import (
    create_session,
    delete_session,
    rename_session,
    set_session_status,
)
from agent_chat.db.turns import mark_reset
from tests.support.users import default_owner

USER, ASSISTANT = MessageRole.USER, MessageRole.ASSISTANT


def _turn(
    session: Session, chat: ChatSession, question: str, answer: str, parent: int | None = None
) -> tuple[ChatMessage, ChatMessage]:
    if parent is None:
        branch = active_branch(session=session, chat_session_id=chat.id)
        parent = branch[-1].id if branch else None
    user = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=parent,
        role=USER,
        content=question,
        status=MessageStatus.SENT,
    )
    reply = _answer(session, chat, user, answer)
    return user, reply


def _answer(session: Session, chat: ChatSession, user: ChatMessage, text: str) -> ChatMessage:
    reply = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=user.id,
        role=ASSISTANT,
        content="",
        status=MessageStatus.RUNNING,
    )
    # The text arrives when the run ends (an UPDATE, as the app stores it).
    return finish_message(
        session=session, message_id=reply.id, content=text, status=MessageStatus.SUCCESS
    )


def _marked(segments: list[dict]) -> list[str]:
    return [s["text"] for s in segments if s["mark"]]


def _uuids(session: Session, query: str) -> list[str]:
    return [
        h.session_uuid
        for h in search(user_id=default_owner(session=session), session=session, query=query)
    ]


def test_words_in_an_answer_are_found_with_a_highlighted_snippet(
    session: Session, user: int
) -> None:
    chat = create_session(user_id=user, session=session, title="Garden notes")
    _turn(session, chat, "How do I keep slugs away?", "Copper tape and beer traps keep slugs off.")
    other = create_session(user_id=user, session=session, title="Other")
    _turn(session, other, "Tell me about tape measures", "They measure things.")
    hits = search(user_id=user, session=session, query="beer traps")
    assert [h.session_uuid for h in hits] == [chat.session_uuid]
    hit = hits[0]
    assert _marked(hit.snippet) == ["beer", "traps"]
    assert "".join(s["text"] for s in hit.snippet) == "Copper tape and beer traps keep slugs off."
    assert hit.role == "ASSISTANT" and hit.message_id is not None and not hit.archived
    assert [s["text"] for s in hit.title] == ["Garden notes"]


def test_titles_are_searched_and_marked(session: Session, user: int) -> None:
    chat = create_session(user_id=user, session=session, title="Quarterly budget review")
    _turn(session, chat, "numbers please", "here")
    hit = search(user_id=user, session=session, query="budget")[0]
    assert hit.session_uuid == chat.session_uuid and _marked(hit.title) == ["budget"]
    assert hit.message_id is None and [s["text"] for s in hit.snippet] == ["numbers please"]


def test_quoted_phrases_match_only_words_in_that_order(session: Session, user: int) -> None:
    a = create_session(user_id=user, session=session, title="a")
    _turn(session, a, "q", "the quick brown fox")
    b = create_session(user_id=user, session=session, title="b")
    _turn(session, b, "q", "brown and quick")
    assert _uuids(session, '"quick brown"') == [a.session_uuid]
    assert set(_uuids(session, "quick brown")) == {a.session_uuid, b.session_uuid}


def test_prefixes_explicit_and_while_typing(session: Session, user: int) -> None:
    chat = create_session(user_id=user, session=session, title="t")
    _turn(session, chat, "q", "Photosynthesis converts light")
    assert _uuids(session, "photo*") == [chat.session_uuid]
    assert _uuids(session, "photosynth") == [chat.session_uuid]  # the last word, while typing
    assert _uuids(session, "photosynth ") == []  # a finished word is a whole word
    assert _marked(search(user_id=user, session=session, query="conv")[0].snippet) == ["converts"]


def test_every_place_of_each_term_is_marked_phrases_whole() -> None:
    from agent_chat.db.search_text import highlight, parse_query

    terms = parse_query('"red apple" gre')  # a phrase, and a word being typed (a prefix)
    text = "Red apple, green; red  APPLE red grey apple"
    assert _marked(highlight(text, terms)) == ["Red apple", "green", "red  APPLE", "grey"]
    assert _marked(highlight("apple red gr", terms)) == []  # not in order; too short


def test_chinese_text_is_found_by_two_or_more_characters(session: Session, user: int) -> None:
    chat = create_session(user_id=user, session=session, title="学习计划")
    _turn(session, chat, "我想学习机器学习，从哪里开始？", "建议先学线性代数和概率论。")
    other = create_session(user_id=user, session=session, title="其他")
    _turn(session, other, "机器人是什么", "一种自动化设备")
    assert _uuids(session, "机器学习") == [chat.session_uuid]
    assert set(_uuids(session, "机器")) == {chat.session_uuid, other.session_uuid}
    hit = search(user_id=user, session=session, query="线性代数")[0]
    assert hit.session_uuid == chat.session_uuid and _marked(hit.snippet) == ["线性代数"]
    assert _uuids(session, "概率论 线性") == [chat.session_uuid]
    assert _marked(search(user_id=user, session=session, query="计划")[0].title) == ["计划"]


HOSTILE = [
    '"',
    '"unbalanced',
    'a "b',
    "AND",
    "OR NOT",
    "NOT AND OR",
    "*",
    "**",
    "a*b*",
    ":",
    "title:foo",
    "-",
    "-foo",
    "foo -bar",
    "(",
    "(foo",
    "foo)",
    "\\",
    "\\\\'",
    "'",
    "''",
    "%",
    "_",
    "NEAR(a b)",
    "a NEAR/2 b",
    "^foo",
    "foo:*",
    "!foo",
    "foo & bar | baz",
    "<->",
    "'; DROP TABLE chat_message; --",
    "1 OR 1=1",
    "\x00",
    "🙂",
    "   ",
    "x" * 5000,
    "a " * 300,
    "{col}",
    "+",
    "éà",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_return_results_or_nothing(session: Session, query: str, user: int) -> None:
    chat = create_session(user_id=user, session=session, title="foo bar")
    _turn(session, chat, "foo AND bar or NOT", "drop table, 1=1, a b title foo")
    hits = search(user_id=user, session=session, query=query)
    assert isinstance(hits, list)
    assert session.get(ChatSession, chat.id) is not None


def test_operators_are_plain_words(session: Session, user: int) -> None:
    chat = create_session(user_id=user, session=session, title="t")
    _turn(session, chat, "q", "this and that or not")
    assert _uuids(session, "AND OR NOT") == [chat.session_uuid]
    assert _uuids(session, "foo-bar") == []


def test_an_edited_question_is_found_by_its_new_and_old_words(session: Session, user: int) -> None:
    chat = create_session(user_id=user, session=session, title="t")
    first, _ = _turn(session, chat, "Tell me about otters", "Otters hold hands.")
    _turn(session, chat, "Tell me about beavers", "Beavers build dams.", parent=first.parent_id)
    assert _uuids(session, "beavers") == [chat.session_uuid]
    assert _uuids(session, "otters") == [chat.session_uuid]  # the older version stays findable


def test_a_regenerated_answer_and_a_changed_text_are_indexed(session: Session, user: int) -> None:
    chat = create_session(user_id=user, session=session, title="t")
    asked, answer = _turn(session, chat, "q", "first draft with walrus")
    second = _answer(session, chat, asked, "second draft with narwhal")
    assert _uuids(session, "narwhal") == [chat.session_uuid]
    finish_message(session=session, message_id=answer.id, content="now penguin", status="SUCCESS")
    assert _uuids(session, "walrus") == []
    assert _uuids(session, "penguin") == [chat.session_uuid]
    hit = search(user_id=user, session=session, query="penguin")[0]
    assert hit.message_id == answer.id and second.id != answer.id


def test_delete_rename_archive_and_reset_keep_the_index_current(
    session: Session, user: int
) -> None:
    chat = create_session(user_id=user, session=session, title="Old name")
    _turn(session, chat, "q", "unicorn facts")
    rename_session(
        user_id=user, session=session, session_uuid=chat.session_uuid, title="Brand new name"
    )
    assert _uuids(session, "old name") == []
    assert _uuids(session, "brand") == [chat.session_uuid]
    mark_reset(user_id=user, session=session, session_uuid=chat.session_uuid)
    assert _uuids(session, "unicorn") == [chat.session_uuid]  # reset keeps messages visible
    assert _uuids(session, "context reset") == []  # markers are not searched
    set_session_status(user_id=user, session=session, session_id=chat.id, status="ARCHIVED")
    assert [h.archived for h in search(user_id=user, session=session, query="unicorn")] == [True]
    delete_session(user_id=user, session=session, session_uuid=chat.session_uuid)
    assert _uuids(session, "unicorn") == [] and _uuids(session, "brand") == []
    again = create_session(user_id=user, session=session, title="fresh")
    _turn(session, again, "q", "unicorn again")
    assert _uuids(session, "unicorn") == [again.session_uuid]


def test_one_result_per_conversation_newest_first(session: Session, user: int) -> None:
    old = create_session(user_id=user, session=session, title="old")
    _turn(session, old, "kiwi one", "kiwi two")
    new = create_session(user_id=user, session=session, title="new")
    _turn(session, new, "kiwi three", "nothing")
    assert _uuids(session, "kiwi") == [new.session_uuid, old.session_uuid]
    assert _marked(search(user_id=user, session=session, query="kiwi")[1].snippet) == ["kiwi"]


def test_opening_a_hit_activates_its_branch(session: Session, user: int) -> None:
    chat = create_session(user_id=user, session=session, title="t")
    asked, hidden = _turn(session, chat, "q", "the secret word is mango")
    shown = _answer(session, chat, asked, "nothing to see")
    _turn(session, chat, "follow up", "more text")
    hit = search(user_id=user, session=session, query="mango")[0]
    assert hit.message_id == hidden.id
    opened = open_hit(user_id=user, session=session, message_id=hidden.id)
    branch = [m.id for m in active_branch(session=session, chat_session_id=chat.id)]
    assert branch == [asked.id, hidden.id]
    assert (opened.session_uuid, opened.from_end) == (chat.session_uuid, 1)
    assert shown.id not in branch


def test_a_long_answer_gives_a_short_snippet_around_the_match(session: Session, user: int) -> None:
    chat = create_session(user_id=user, session=session, title="t")
    text = "filler " * 500 + "the <b>needle</b> & <script>x</script> " + "tail " * 500
    _turn(session, chat, "q", text)
    parts = search(user_id=user, session=session, query="needle")[0].snippet
    joined = "".join(p["text"] for p in parts)
    assert len(joined) < 220 and joined.startswith("…") and joined.endswith("…")
    assert "<b>" in joined and _marked(parts) == ["needle"]  # text, shown as text by the page


def test_many_matches_list_the_newest_conversations(
    session: Session, monkeypatch: pytest.MonkeyPatch, user: int
) -> None:
    from agent_chat.db import search as search_module

    # Small batches: SQLite reads its matches in several batches, PostgreSQL takes its
    # "common words" path; both must give the newest conversations, each once.
    monkeypatch.setattr(search_module, "BATCH", 2)
    monkeypatch.setattr(search_module, "PG_ALL_MATCHES", 2)
    chats = []
    for i in range(6):
        chat = create_session(user_id=user, session=session, title=f"c{i}")
        _turn(session, chat, f"common word {i}", f"common answer {i}")
        chats.append(chat.session_uuid)
    hits = search(user_id=user, session=session, query="common", limit=3)
    assert [h.session_uuid for h in hits] == chats[::-1][:3]


def test_many_matches_of_several_people_list_each_ones_own(
    session: Session, monkeypatch: pytest.MonkeyPatch, user: int, other_user: int
) -> None:
    from agent_chat.db import search as search_module

    # PostgreSQL reads the first matches of anyone's conversations, then keeps the owner's:
    # with more than PG_ALL_MATCHES of them and another's among them, it asks again with the
    # owner's condition (few of one's own: all of them; many: the newest first).
    monkeypatch.setattr(search_module, "BATCH", 2)
    monkeypatch.setattr(search_module, "PG_ALL_MATCHES", 3)
    made: dict[int, list[str]] = {user: [], other_user: []}
    for i, owner in enumerate([other_user] * 3 + [user] + [other_user] * 4 + [user]):
        chat = create_session(user_id=owner, session=session, title=f"c{i}")
        _turn(session, chat, f"shared word {i}", f"shared answer {i}")
        made[owner].append(chat.session_uuid)
    for query in ("shared", "shared ans", "shared word"):
        mine = [h.session_uuid for h in search(user_id=user, session=session, query=query)]
        assert mine == made[user][::-1], query
        theirs = search(user_id=other_user, session=session, query=query, limit=5)
        assert [h.session_uuid for h in theirs] == made[other_user][::-1][:5], query
    assert search(user_id=user, session=session, query="word 2") == []  # another's only


def test_prefixes_of_every_length_match_exactly_the_words_beginning_so(
    session: Session, user: int
) -> None:
    # PostgreSQL looks a prefix of up to 6 characters up as one lexeme (`*cam`) and a longer
    # one by its first 6, then tests the query itself: both engines give the same results.
    chat = create_session(user_id=user, session=session, title="t")
    _turn(session, chat, "q", "Camera calibration needs a tripod; Größe café")
    other = create_session(user_id=user, session=session, title="u")
    _turn(session, other, "q", "a calm tripod, cabbage")
    both, one = {chat.session_uuid, other.session_uuid}, [chat.session_uuid]
    assert set(_uuids(session, "c*")) == both  # one character (explicit)
    assert set(_uuids(session, "tripod ca")) == both  # two characters, typed
    assert _uuids(session, "tripod cam") == one  # not "calm"
    assert _uuids(session, "tripod camer") == one
    assert _uuids(session, "tripod camera") == one  # a prefix that is a whole word
    assert _uuids(session, "tripod calibrati") == one  # longer than 6 characters
    assert _uuids(session, "tripod calibratix") == []  # its first 6 match, the rest not
    assert _uuids(session, "calm tri") == [other.session_uuid]
    assert _uuids(session, "TRIPOD CAB") == [other.session_uuid]
    assert _uuids(session, "gr* caf") == one  # two prefixes, one of them not ASCII
    assert _uuids(session, "größ") == one
    assert _uuids(session, "calibration-ne") == one  # a phrase whose last word is a prefix
    assert _uuids(session, "tripod-cam") == []
    assert _uuids(session, "zz*") == []


def test_long_texts_are_found_by_a_prefix(session: Session, user: int) -> None:
    import random

    # 12,000 different Hangul words and 9,000 ASCII ones: long texts, found by a prefix too
    # (an index that stored every word's prefixes would pass PostgreSQL's 1 MB vector limit).
    rng = random.Random(5)
    words = ["".join(chr(rng.randint(0xAC00, 0xD7A3)) for _ in range(7)) for _ in range(12_000)]
    chat = create_session(user_id=user, session=session, title="t")
    _turn(session, chat, "q", " ".join(words) + " zebra")
    other = create_session(user_id=user, session=session, title="u")
    _turn(session, other, "q", "zebu")
    assert _uuids(session, "zebr") == [chat.session_uuid]
    assert set(_uuids(session, "zeb")) == {chat.session_uuid, other.session_uuid}
    assert _uuids(session, f"zebra {words[5][:3]}") == [chat.session_uuid]
    ascii_words = ["".join(rng.choice("abcdefghij") for _ in range(10)) for _ in range(9_000)]
    third = create_session(user_id=user, session=session, title="v")
    _turn(session, third, "q", " ".join(ascii_words))
    assert _uuids(session, ascii_words[7][:4]) == [third.session_uuid]
    assert _uuids(session, ascii_words[7] + "x") == []

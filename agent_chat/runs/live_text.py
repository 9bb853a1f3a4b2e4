"""What a tab still has to receive of a run's growing texts (answer and thinking).

The page keeps each stream's text (assets/stream_text.jsx); a tab's follower sends it only
the new part, tagged with its offset, so a chunk is never applied twice or out of place.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_chat.protocol.reducer import RunView


@dataclass(frozen=True)
class Chunk:
    stream_id: str
    offset: int  # characters of the stream sent before this chunk
    text: str


class LiveText:
    """Per tab and run: the stream ids and how much of each text the page has."""

    def __init__(self, message_id: int) -> None:
        self.message_id = message_id
        self.answer_id = ""
        self.thinking_id = f"t{message_id}"
        self.sent_answer = 0
        self.sent_thinking = 0
        self.answer_text = ""  # what the page holds of the current answer stream

    def seed(self, view: RunView) -> tuple[str, str]:
        """Start (or restart after a reconnect): the page gets both texts whole."""
        self.sent_thinking = len(view.thinking)
        return self.seed_answer(view), view.thinking

    def seed_answer(self, view: RunView) -> str:
        """A new answer stream (after a segment moved to thinking): its text so far."""
        self.answer_id = self.answer_stream_id(view)
        self.sent_answer = len(view.answer)
        self.answer_text = view.answer
        return view.answer

    def answer_stream_id(self, view: RunView) -> str:
        # The answer restarts empty after each text segment that moved to the thinking area.
        return f"a{self.message_id}-{view.segment}"

    def needs_answer_seed(self, view: RunView) -> bool:
        return self.answer_stream_id(view) != self.answer_id

    def chunks(self, view: RunView) -> list[Chunk]:
        """The new text since the last call (`seed_answer` first when `needs_answer_seed`)."""
        out = []
        if len(view.answer) > self.sent_answer:
            out.append(Chunk(self.answer_id, self.sent_answer, view.answer[self.sent_answer :]))
            self.answer_text += view.answer[self.sent_answer :]
            self.sent_answer = len(view.answer)
        if len(view.thinking) > self.sent_thinking:
            out.append(
                Chunk(self.thinking_id, self.sent_thinking, view.thinking[self.sent_thinking :])
            )
            self.sent_thinking = len(view.thinking)
        return out

    def page_has_answer(self, answer: str) -> bool:
        """Whether the page's stream already shows `answer` (the stored final text), so the
        finished message can keep showing the stream instead of receiving the text again."""
        return bool(self.answer_id) and self.answer_text.rstrip() == answer.rstrip()

"""Why a run or a model probe failed, as one sentence a person understands.

hermes reports a failed turn in its result dict (``failed``/``completed``, ``error``,
``final_response``, sometimes ``failure_reason``), never by raising. Its texts are written for
its own CLI ("API call failed after 3 retries: HTTP 429: ..."), so the bridge turns them into
the sentences below and keeps hermes' own words in its log. The model settings' test button
(``agent_chat.runs.model_probe``) uses the same sentences, so a fault reads the same before a
run and in a failed answer. Plain Python: no hermes import here.
"""

from __future__ import annotations

import re
from typing import Any

MAX_DETAIL_CHARS = 200
# The continuation prompt hermes sends after a stream that broke off (vs. a length cut-off).
STREAM_CUT_MARKER = "cut off by a network error"

_HTTP_STATUS = re.compile(r"\bHTTP (\d{3})\b")
_ATTEMPTS = re.compile(r"after (\d+) retries")
_CONTINUATIONS = re.compile(r"after (\d+) continuation attempts")


def _times(attempts: int | None) -> str:
    return f" {attempts} times in a row" if attempts and attempts > 1 else ""


def _short(detail: str) -> str:
    line = " ".join(detail.split())
    return line if len(line) <= MAX_DETAIL_CHARS else line[: MAX_DETAIL_CHARS - 1] + "…"


def http_status_sentence(status: int, *, attempts: int | None = None, detail: str = "") -> str:
    """The model endpoint answered a chat request (or the models list) with an HTTP error."""
    said = f" It said: {_short(detail)}" if detail else ""
    if status in (401, 403):
        return f"The model endpoint refused the API key (HTTP {status})."
    if status == 404:
        return (
            "The model endpoint answered HTTP 404: check the base URL (it usually ends in /v1) "
            "and the model name."
        )
    if status == 429:
        tail = f"; it still refused after {attempts} attempts" if attempts and attempts > 1 else ""
        return f"The model endpoint is rate limiting requests (HTTP 429){tail}. Try again later."
    if status >= 500:
        return f"The model endpoint failed with a server error (HTTP {status}){_times(attempts)}.{said}"
    return f"The model endpoint rejected the request (HTTP {status}).{said}"


def unreachable_sentence(base_url: str) -> str:
    return (
        f"Could not reach the model endpoint at {base_url}: nothing answered there "
        "(is the server running and the URL right?)."
    )


def timeout_sentence(base_url: str, seconds: float | None = None) -> str:
    within = f" within {seconds:.0f} s" if seconds else " in time"
    return f"The model endpoint at {base_url} did not answer{within}."


def slow_first_token_sentence(seconds: float) -> str:
    return (
        f"The model endpoint accepted the request but sent nothing within {seconds:.0f} s "
        "(the model may be loading or overloaded)."
    )


def stream_cut_sentence(continuations: int | None = None) -> str:
    if continuations:
        return (
            "The model endpoint kept breaking off its answer mid-stream (the connection dropped "
            f"or the data was malformed), even after {continuations} attempts to continue."
        )
    return "The model endpoint closed the connection in the middle of its answer."


def malformed_sentence() -> str:
    return "The model endpoint sent a malformed chunk (not valid JSON) in its answer."


def idle_sentence(seconds: float, tool: str | None = None) -> str:
    """The inactivity watchdog stopped a run that had no event for ``seconds``."""
    span = duration_words(seconds)
    if tool:
        return f"The tool {tool} gave no result for {span}; the run was stopped."
    return f"No answer from the model for {span}; the run was stopped."


def duration_words(seconds: float) -> str:
    """600 -> '10 minutes', 60 -> '1 minute', 1 -> '1 second', 1.5 -> '1.5 seconds'."""
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{seconds:g} second{'s' if seconds != 1 else ''}"


def _continuation_was_a_cut(result: dict[str, Any]) -> bool:
    for message in reversed(result.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            return isinstance(content, str) and STREAM_CUT_MARKER in content
    return False


def readable_failure(result: dict[str, Any], base_url: str) -> str:
    """The sentence for a hermes result that did not complete."""
    error = str(result.get("error") or "").strip()
    final = str(result.get("final_response") or "").strip()
    both = f"{error}\n{final}"
    lowered = both.lower()
    attempts_match = _ATTEMPTS.search(final)
    attempts = int(attempts_match.group(1)) if attempts_match else None
    if status_match := _HTTP_STATUS.search(both):
        status = int(status_match.group(1))
        detail = _HTTP_STATUS.split(error or final, maxsplit=1)[-1].lstrip(":—- ").strip()
        return http_status_sentence(status, attempts=attempts, detail=detail)
    if continuation_match := _CONTINUATIONS.search(error):
        count = int(continuation_match.group(1))
        if _continuation_was_a_cut(result):
            return stream_cut_sentence(count)
        return (
            "The model's answer kept hitting its output token limit, even after "
            f"{count} attempts to continue."
        )
    if "connection error" in lowered or ("connect" in lowered and "refused" in lowered):
        return unreachable_sentence(base_url)
    if "unresponsive" in lowered or "no response received" in lowered:
        return (
            f"The model endpoint at {base_url} sent nothing for too long, even after "
            "reconnecting several times."
        )
    if "timed out" in lowered or "timeout" in lowered:
        return timeout_sentence(base_url)
    if "malformed" in lowered:
        return malformed_sentence()
    if "all output tokens on reasoning" in lowered:
        return "The model used its whole output token budget on reasoning and gave no answer."
    detail = error or final
    if detail:
        return f"The model call failed: {_short(detail)}"
    return "The agent stopped without an answer (no further detail from hermes)."


def abnormal_end_sentence(result: dict[str, Any]) -> str | None:
    """hermes ended the turn "completed" without a usable answer (its `turn_exit_reason`),
    filling `final_response` with a CLI notice ("⚠️ No reply: ... Try `continue`"): the
    sentence the answer fails with instead, or None for a real answer."""
    reason = str(result.get("turn_exit_reason") or "")
    attempts = int(result.get("api_calls") or 0)
    if reason == "empty_response_exhausted":
        times = f" {attempts} times" if attempts > 1 else ""
        return f"The model returned an empty answer{times}."
    if reason == "all_retries_exhausted_no_response":
        return "The model endpoint gave no answer before every retry was used up."
    if reason == "partial_stream_recovery":
        return "The model's answer broke off and could not be continued; what arrived is kept."
    if reason == "fallback_prior_turn_content":
        return "The model produced no new answer this time."
    if reason == "budget_exhausted":
        return "The agent used up its budget for this turn before a final answer."
    if reason.startswith("max_iterations_reached"):
        return "The agent reached its step limit before a final answer."
    if reason == "ollama_runtime_context_too_small":
        return "The local model's context window was too small to finish this answer."
    return None

"""hermes' approval path for dangerous commands, answered by a person in the page.

hermes asks through a per-thread callback when the context is interactive
(`tools.approval.prompt_dangerous_approval`); it keeps "allow for this session" per
session key and "always" in `command_allowlist` of `$HERMES_HOME/config.yaml`. The bridge
sets all three for a run's thread (hermes hands them to its tool worker threads), and the
callback blocks like a clarify question: no 60-300 s timeout, only the bridge's own cap.

Without this, a bridge run is "non-interactive" and hermes runs dangerous commands without
asking at all.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator

logger = logging.getLogger(__name__)

ONCE, SESSION, ALWAYS, DENY = "once", "session", "always", "deny"
CHOICES = (ONCE, SESSION, ALWAYS, DENY)

# (command, description, *, allow_permanent) -> one of CHOICES
ApprovalCallback = Callable[..., str]


@contextlib.contextmanager
def approvals_for(session_id: str, callback: ApprovalCallback) -> Iterator[None]:
    """Within the block, this thread's dangerous steps ask `callback`, keyed by session."""
    from tools.approval import (
        reset_current_session_key,
        reset_hermes_interactive_context,
        set_current_session_key,
        set_hermes_interactive_context,
    )
    from tools.terminal_tool import set_approval_callback

    key_token = set_current_session_key(session_id)
    interactive_token = set_hermes_interactive_context(True)
    set_approval_callback(callback)
    try:
        yield
    finally:
        set_approval_callback(None)
        reset_hermes_interactive_context(interactive_token)
        reset_current_session_key(key_token)


def always_allowed() -> list[str]:
    """The patterns allowed for every conversation ("Always allow"), sorted."""
    from tools.approval import load_permanent_allowlist

    return sorted(load_permanent_allowlist())


def revoke_always(pattern: str) -> bool:
    """Stop allowing `pattern` everywhere; False if it was not allowed."""
    from tools import approval

    patterns = approval.load_permanent_allowlist()
    if pattern not in patterns:
        return False
    patterns.discard(pattern)
    with approval._lock:  # hermes keeps the loaded set in memory too
        approval._permanent_approved.discard(pattern)
    approval.save_permanent_allowlist(patterns)
    logger.info("revoked the always-allow rule %r", pattern)
    return True


def forget_session(session_id: str) -> None:
    """Drop the conversation's "allow for this conversation" choices (reset, delete)."""
    from tools import approval

    clear = getattr(approval, "clear_session", None)
    if callable(clear):
        clear(session_id)

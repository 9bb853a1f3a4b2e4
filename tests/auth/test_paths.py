"""No open redirect, and which paths stay public (agent_chat/auth/paths.py)."""

from __future__ import annotations

import pytest

from agent_chat.auth import (
    is_public,
    safe_next,
)


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "",
        "https://evil.example/",
        "//evil.example/",
        "/\\evil.example",
        "\\\\evil.example",
        "/\t/evil.example",
        "/\n/evil.example",
        "javascript:alert(1)",
        "evil.example",
        "http:/evil.example",
        "/login",
        "/api/chat/sessions/x/export",
        "/_event",
        "/" + "a" * 3000,
    ],
)
def test_next_refuses_anything_but_a_relative_path_on_this_site(raw: str | None) -> None:
    assert safe_next(raw) == "/"


@pytest.mark.parametrize("raw", ["/", "/chat/abc", "/settings/models?tab=1#x", "/chat/%2F%2Fx"])
def test_next_keeps_relative_paths(raw: str) -> None:
    assert safe_next(raw) == raw


def test_public_paths_are_health_checks_and_static_files_only() -> None:
    for path in ("/ping", "/_health", "/favicon.ico", "/assets/app-123.js", "/styles.css"):
        assert is_public(path), path
    for path in ("/", "/chat/x", "/index.html", "/_event", "/_upload", "/api/x.js", "/api/login"):
        assert not is_public(path), path

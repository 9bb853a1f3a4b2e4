"""The bridge caps glibc's malloc arenas (bridge/malloc.py); the soak measures the effect."""

from __future__ import annotations

import platform

import pytest

from agent_chat.bridge.malloc import limit_arenas


def test_the_arenas_are_capped_on_glibc_unless_the_environment_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc only")
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_arenas() is True
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_arenas() is False

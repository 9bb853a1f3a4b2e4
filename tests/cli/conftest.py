"""The stack tests/api uses (tests/support/api.py), shared: one app start for both."""

from __future__ import annotations

from tests.support.api import api_stack, api_stack_and_token, api_token

__all__ = ["api_stack", "api_stack_and_token", "api_token"]

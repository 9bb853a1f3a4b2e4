"""The one module of store exceptions: callers catch `StoreError` or a subclass."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error raised by the store functions."""


class NotFound(StoreError):
    """The row the caller named does not exist."""


class InvalidTree(StoreError):
    """A message-tree operation would break the tree (e.g. a parent in another session)."""


class ValidationFailed(StoreError, ValueError):
    """Input rejected field by field; `field_errors` maps a field name to a readable message.

    Also a `ValueError`, so callers that validate plain input can catch either.
    """

    def __init__(self, field_errors: dict[str, str]) -> None:
        self.field_errors = dict(field_errors)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.field_errors.items()))


class Forbidden(StoreError):
    """The acting user may not do this (e.g. a member, or a disabled administrator, asking
    for what only an active administrator may do)."""


class LastAdministrator(StoreError):
    """The change would leave no active administrator (demoting or disabling the last one)."""

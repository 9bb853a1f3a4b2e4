"""The use cases' own refusals, beside the store's (`db/errors.py`: NotFound, Forbidden,
ValidationFailed …). Each message is written for the person: the page shows it as it is,
the API answers it with the status below (api/errors.py)."""

from __future__ import annotations


class ServiceError(Exception):
    """Base of the service layer's refusals."""


class Busy(ServiceError):
    """Refused while a run goes on in the conversation (the API's 409)."""

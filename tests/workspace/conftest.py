"""A workspaces root with two conversations' folders, and a file outside both
(built by `tests.support.workspaces`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.workspaces import Workspaces, two_workspaces


@pytest.fixture
def workspaces(tmp_path: Path) -> Workspaces:
    return two_workspaces(tmp_path)

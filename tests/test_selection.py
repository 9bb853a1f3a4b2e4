"""test.sh's split of the browser files between its two database runs (tests/conftest.py):
a renamed or removed file in BROWSER_ON_FIRST would silently move to the other run."""

from __future__ import annotations

from pathlib import Path

from tests.support.selection import BROWSER_ON_FIRST

E2E = Path(__file__).resolve().parent / "e2e"


def test_every_browser_file_named_for_the_first_run_exists() -> None:
    files = {p.name for p in E2E.glob("test_*.py")}
    assert files >= BROWSER_ON_FIRST, BROWSER_ON_FIRST - files
    # Both runs keep browser files: the app's database code is driven on both databases.
    assert 0 < len(BROWSER_ON_FIRST) < len(files)

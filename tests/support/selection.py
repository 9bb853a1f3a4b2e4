"""Which browser files `test.sh` runs on which database (read by tests/conftest.py and
checked by tests/test_selection.py)."""

from __future__ import annotations

# The browser files test.sh runs on its first database (SQLite) rather than its last
# (PostgreSQL); every_database files run on both. Chosen so that the two runs, which go at
# once, take about as long (`./test.sh --durations=0` of 2026-12-03: the SQLite run had 1387
# test-seconds and the PostgreSQL run 1464 before test_12 and test_13_http_api, 38 together,
# moved to the first; 2026-12-05: the PostgreSQL run 9:58, the SQLite run 9:16, so
# test_40 moved); a new file goes on the last until it is weighed. test_31 and test_32
# need PostgreSQL and Redis anyway.
BROWSER_ON_FIRST = {
    "test_01_first_visit.py",
    "test_02_walking_skeleton.py",
    "test_04_resume.py",
    "test_10_login.py",
    "test_11_untrusted_output.py",
    "test_12_bad_input.py",
    "test_13_http_api.py",
    "test_14_phone_and_keys.py",
    "test_16_notifications.py",
    "test_23_stream_split.py",
    "test_26_user_admin.py",
    "test_28_oidc.py",
    "test_29_embedded.py",
    "test_40_workspace_versions.py",
}

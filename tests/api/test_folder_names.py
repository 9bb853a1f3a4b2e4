"""A folder name taken in another spelling over HTTP: `POST /api/chat/folders`
twice with `Écrits` (or `écrits`, `e\u0301crits`, full-width letters) answers 422 with the
field and the store's message the page shows too, never 500, on SQLite as on PostgreSQL."""

from __future__ import annotations

from uuid import uuid4

import httpx
import pytest

from agent_chat.db.names import name_key

# On every database in ./test.sh, not only the last: the 500 was SQLite's (its lower()).
pytestmark = [pytest.mark.e2e, pytest.mark.every_database]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param("Écrits {n}", "Écrits {n}", id="same"),
        pytest.param("Écrits {n}", "écrits {n}", id="non-ascii-capital"),
        pytest.param("écrits {n}", "e\u0301crits {n}", id="combining-mark"),
        pytest.param("abc {n}", "ＡＢＣ {n}", id="full-width"),
    ],
)
def test_a_duplicate_folder_name_is_422_on_the_name(
    client: httpx.Client, first: str, second: str
) -> None:
    n = uuid4().hex[:8]  # the stack's database is shared by the tests
    first, name = first.format(n=n), second.format(n=n)
    made = client.post("/api/chat/folders", json={"name": first})
    assert made.status_code == 201, made.text
    other = client.post("/api/chat/folders", json={"name": f"Other {n}"}).json()["id"]
    created = client.post("/api/chat/folders", json={"name": name})
    renamed = client.patch(f"/api/chat/folders/{other}", json={"name": name})
    for refused in (created, renamed):
        assert refused.status_code == 422, refused.text
        message = f"A folder named “{name}” already exists."
        assert refused.json()["error"]["fields"] == {"name": message}
    listed = [f["name"] for f in client.get("/api/chat/folders").json()["folders"]]
    assert [x for x in listed if name_key(x) == name_key(name)] == [first]

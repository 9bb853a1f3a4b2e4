"""`POST /api/chat/attachments` and `GET /api/chat/attachments/{id}` on the test process's
real stack (login gate, API token, the database store): upload one or several files, the
download's headers, refusals (empty, too large, a program, not a form, an upload cut off
half-way: nothing kept), and two people who cannot read each other's files."""

from __future__ import annotations

import hashlib
import io
import os
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from PIL import Image
from sqlalchemy import func, select

from agent_chat.db.attachment_models import Attachment, AttachmentChunk
from agent_chat.db.engine import make_engine, open_session
from tests.support.api import api_client, member_with_token
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + os.urandom(64)
URL = "/api/chat/attachments"


@pytest.fixture
def client(api_stack: Stack, api_token: str) -> Iterator[httpx.Client]:
    with api_client(api_stack, api_token) as client:
        yield client


@pytest.fixture(scope="module")
def bob_token(api_stack: Stack) -> str:
    return member_with_token(api_stack, "bob-files", "bob's long password")[1]


def _stored(stack: Stack) -> tuple[int, int]:
    """(attachment rows, distinct chunk keys) in the stack's database."""
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            rows = session.execute(select(func.count()).select_from(Attachment)).scalar_one()
            keys = session.execute(
                select(func.count(func.distinct(AttachmentChunk.storage_key)))
            ).scalar_one()
            return int(rows), int(keys)
    finally:
        engine.dispose()


def _wait_for(condition, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_upload_several_and_download_with_safe_headers(client: httpx.Client) -> None:
    text = "Größe,日本\n1,2\n".encode() + os.urandom(4).hex().encode()
    page = b"<!doctype html><script>alert(1)</script>" + os.urandom(4).hex().encode()
    answer = client.post(
        URL,
        files=[
            ("files", ("photo.JPG", PNG, "image/jpeg")),
            ("files", ("données “1”.csv", text, "text/csv")),
            ("files", ("page.html", page, "text/html")),
        ],
    )
    assert answer.status_code == 201, answer.text
    png, csv, html = answer.json()["attachments"]
    assert (png["name"], png["mediaType"], png["size"]) == ("photo.JPG", "image/png", len(PNG))
    assert png["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert csv["mediaType"] == "text/plain"
    got = client.get(f"{URL}/{png['id']}")
    assert got.status_code == 200 and got.content == PNG
    assert got.headers["content-type"] == "image/png"
    assert got.headers["x-content-type-options"] == "nosniff"
    assert got.headers["content-disposition"] == 'attachment; filename="photo.JPG"'
    got = client.get(f"{URL}/{csv['id']}")
    assert got.content == text and got.headers["content-type"] == "text/plain; charset=utf-8"
    disposition = got.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="donnees 1.csv"; filename*=UTF-8')
    assert "donn%C3%A9es%20%E2%80%9C1%E2%80%9D.csv" in disposition
    got = client.get(f"{URL}/{html['id']}")  # never served as a page
    assert got.headers["content-type"] in ("text/plain; charset=utf-8", "application/octet-stream")
    assert got.headers["content-disposition"].startswith("attachment;")
    # The same file again: the same attachment; under another name, one of its own.
    again = client.post(URL, files={"files": (png["name"], PNG)})
    assert again.json()["attachments"][0]["id"] == png["id"]
    other = client.post(URL, files={"files": ("other-name.png", PNG)}).json()["attachments"][0]
    assert other["id"] != png["id"] and other["name"] == "other-name.png"


def test_refusals_keep_nothing(api_stack: Stack, client: httpx.Client) -> None:
    before = _stored(api_stack)
    empty = client.post(URL, files={"files": ("empty.txt", b"")})
    assert empty.status_code == 422 and "empty.txt" in empty.json()["error"]["message"]
    assert empty.json()["error"]["fields"]["file"]
    program = client.post(URL, files={"files": ("a.png", b"\x7fELF\x02\x01\x01" + bytes(300))})
    assert program.status_code == 422 and "program" in program.json()["error"]["message"]
    by_name = client.post(URL, files={"files": ("setup.exe", b"just text")})
    assert by_name.status_code == 422
    big = client.post(URL, files={"files": ("big.bin", os.urandom(20 * 1024 * 1024 + 1))})
    assert big.status_code == 413 and "20 MB" in big.json()["error"]["message"]
    not_a_form = client.post(URL, json={"files": ["x"]})
    assert not_a_form.status_code == 400
    no_file = client.post(URL, data={"other": "x"}, files={"x": ("", b"")})
    assert no_file.status_code in (400, 422)
    eleven = client.post(URL, files=[("files", (f"{i}.txt", b"%d" % i)) for i in range(11)])
    assert eleven.status_code == 422
    assert _stored(api_stack)[1] - before[1] <= 10  # only eleven's first ten, unused
    assert _stored(api_stack)[0] - before[0] == _stored(api_stack)[1] - before[1]


def test_an_upload_cut_off_half_way_stores_nothing(api_stack: Stack, api_token: str) -> None:
    before = _stored(api_stack)
    boundary = "cutcutcut"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="half.bin"'
        "\r\nContent-Type: application/octet-stream\r\n\r\n"
    ).encode()
    body_start = head + os.urandom(3 * 1024 * 1024)  # past the first chunk row
    parts = urlsplit(api_stack.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(
            (
                f"POST {URL} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                f"Authorization: Bearer {api_token}\r\n"
                f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                f"Content-Length: {len(body_start) + 10 * 1024 * 1024}\r\n\r\n"
            ).encode()
            + body_start
        )
        # Chunks are in the database while the upload streams …
        _wait_for(lambda: _stored(api_stack)[1] > before[1])
    # … and gone once the server notices the closed connection.
    _wait_for(lambda: _stored(api_stack) == before)
    assert _stored(api_stack) == before


def test_another_persons_file_is_404_like_a_missing_one(
    api_stack: Stack, client: httpx.Client, bob_token: str
) -> None:
    mine = client.post(URL, files={"files": ("secret.txt", os.urandom(16).hex().encode())})
    attachment_id = mine.json()["attachments"][0]["id"]
    with api_client(api_stack, bob_token) as bob:
        theirs = bob.get(f"{URL}/{attachment_id}")
        missing = bob.get(f"{URL}/{2**31 - 1}")
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["error"]["message"] == missing.json()["error"]["message"].replace(
        str(2**31 - 1), str(attachment_id)
    )
    assert client.get(f"{URL}/{attachment_id}").status_code == 200


def test_a_pictures_thumbnail_over_http(
    client: httpx.Client, api_stack: Stack, bob_token: str
) -> None:
    out = io.BytesIO()
    Image.new("RGB", (800, 400), (10, 120, 200)).save(out, "JPEG")
    photo = client.post(URL, files={"files": ("sky.jpg", out.getvalue())}).json()["attachments"][0]
    got = client.get(f"{URL}/{photo['id']}/thumbnail")
    assert got.status_code == 200 and got.headers["content-type"] == "image/webp"
    assert "immutable" in got.headers["cache-control"]
    assert got.headers["x-content-type-options"] == "nosniff"
    with Image.open(io.BytesIO(got.content)) as small:
        assert small.size == (320, 160)
    text = client.post(URL, files={"files": ("t.csv", b"a,b\n")}).json()["attachments"][0]
    refused = client.get(f"{URL}/{text['id']}/thumbnail")
    assert refused.status_code == 422 and "not a picture" in refused.json()["error"]["message"]
    assert refused.json()["error"]["code"] == "no_thumbnail"
    assert "not a picture" in refused.json()["error"]["fields"]["attachmentId"]
    with api_client(api_stack, bob_token) as bob:
        assert bob.get(f"{URL}/{photo['id']}/thumbnail").status_code == 404

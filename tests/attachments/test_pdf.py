"""A PDF attached to a message (services/attachment_parts.py, services/attachment_pdf.py):
its text inline under its name like a text file's, cut at the page or character limit with
the cut said; an encrypted, damaged or image-only PDF, or one whose reading outlasts the time
limit (its child process killed), is one line saying why, never a failed run. The PDFs are
written here by hand (a catalog, a page tree, Helvetica, one text line a page); pypdf only
encrypts them. One test goes the real run path: the first send, a regenerate and a later
turn's note."""

from __future__ import annotations

import io
import sys
from collections.abc import AsyncIterator
from typing import Any

import psutil
import pytest
from pypdf import PdfReader, PdfWriter

from agent_chat.db.attachment_models import Attachment
from agent_chat.services import attachment_parts, attachment_pdf, versions
from agent_chat.services import attachments as uploads
from agent_chat.services import runs as use
from agent_chat.services.attachment_kinds import PDF
from agent_chat.services.attachment_parts import TEXT_LIMIT
from tests.fakes.model_server import RunningFakeModel
from tests.support.runs import chat_messages, finished, new_chat


def make_pdf(pages: list[str]) -> bytes:
    """A valid PDF, one line of `pages[i]` on page i (plain letters: no escaping)."""
    kids = [4 + 2 * i for i in range(len(pages))]
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % k for k in kids), len(pages)),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for kid, text in zip(kids, pages, strict=True):
        stream = b"BT /F1 12 Tf 72 712 Td (%s) Tj ET" % text.encode("ascii")
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (kid + 1)
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def encrypted(data: bytes, *, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="the owner's")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


async def _upload(svc: Any, user: int, data: bytes, name: str) -> Attachment:
    async def one() -> AsyncIterator[bytes]:
        yield data

    row = await uploads.upload(svc, user_id=user, name=name, chunks=one())
    return await uploads.get_attachment(svc, user_id=user, attachment_id=row.id)


async def _sent(svc: Any, user: int, data: bytes, name: str) -> str:
    row = await _upload(svc, user, data, name)
    assert row.media_type == PDF
    parts = await attachment_parts.agent_message(
        svc, text="Read it", attachments=[row], sees_images=False
    )
    assert isinstance(parts, list) and len(parts) == 1
    return parts[0]["text"]


async def test_a_pdfs_text_inline_under_its_name(svc, user) -> None:
    data = make_pdf(["Hello PDF", "Second page here"])
    text = await _sent(svc, user, data, "report.pdf")
    assert text.startswith("Read it\n\n[attached file report.pdf (a PDF of 2 pages, ")
    assert "; its text)]\n```report.pdf\nHello PDF\n\nSecond page here\n```" in text
    # A PDF with an owner password only (no password to open it) is read.
    text = await _sent(svc, user, encrypted(data, user_password=""), "locked.pdf")
    assert "```locked.pdf\nHello PDF\n\nSecond page here\n```" in text


async def test_a_long_pdf_is_cut_by_pages_or_by_characters_and_says_so(svc, user) -> None:
    many = attachment_pdf.MAX_PAGES + 20
    text = await _sent(svc, user, make_pdf([f"Page {i}" for i in range(many)]), "many.pdf")
    assert f"(a PDF of {many} pages, " in text
    assert (
        f"; its text, cut: the first {attachment_pdf.MAX_PAGES} pages of {many} are shown)]" in text
    )
    assert f"\nPage {attachment_pdf.MAX_PAGES - 1}\n```" in text
    assert f"Page {attachment_pdf.MAX_PAGES}\n" not in text

    line = "lorem ipsum dolor sit amet " * 100  # 2,700 characters a page
    text = await _sent(svc, user, make_pdf([line] * 60), "long.pdf")
    shown = TEXT_LIMIT // (len(line) + 2) + 1  # the page the limit falls in
    cut = f"cut: its first {TEXT_LIMIT:,} characters are shown, which end on page {shown} of 60)]"
    assert cut in text
    body = text.split("```long.pdf\n", 1)[1]
    assert len(body) == TEXT_LIMIT + len("\n```")


async def test_encrypted_damaged_and_image_only_pdfs_are_a_line_each(svc, user) -> None:
    locked = encrypted(make_pdf(["Secret"]), user_password="open sesame")
    text = await _sent(svc, user, locked, "secret.pdf")
    assert "[file secret.pdf attached (a PDF, " in text
    assert text.endswith("): its text could not be read (encrypted)]")
    assert "Secret" not in text

    broken = b"%PDF-1.4\n" + bytes(range(256)) * 16
    text = await _sent(svc, user, broken, "broken.pdf")
    assert text.endswith(
        "[file broken.pdf attached (a PDF, 4.1 kB): its text could not be read (damaged)]"
    )

    text = await _sent(svc, user, make_pdf(["", "", ""]), "scan.pdf")
    assert "[file scan.pdf attached (a PDF of 3 pages, " in text
    assert text.endswith("): its text could not be read (no text: scanned pages?)]")


async def test_a_pdf_too_slow_to_read_is_a_line_and_its_reader_is_killed(
    svc, user, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The child stands for pypdf stuck on a hostile file: it never answers.
    monkeypatch.setattr(
        attachment_pdf, "CHILD", [sys.executable, "-c", "import time; time.sleep(60)"]
    )
    monkeypatch.setattr(attachment_pdf, "TIME_LIMIT", 1.0)
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    text = await _sent(svc, user, make_pdf(["Hello PDF"]), "slow.pdf")
    assert text.endswith("): its text could not be read (reading it took over 1 s)]")
    assert {p.pid for p in me.children(recursive=True)} - before == set()


async def test_a_child_that_dies_or_a_pdf_over_the_byte_limit_is_a_line(
    svc, user, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A child killed by its memory limit writes nothing: the same as a crash.
    monkeypatch.setattr(attachment_pdf, "CHILD", [sys.executable, "-c", "raise MemoryError"])
    text = await _sent(svc, user, make_pdf(["Hello PDF"]), "huge.pdf")
    assert text.endswith("): its text could not be read (damaged or too complex to read)]")
    monkeypatch.setattr(attachment_pdf, "MAX_BYTES", 100)
    monkeypatch.setattr(attachment_pdf, "TOO_LARGE", "over 100 bytes, not read")
    text = await _sent(svc, user, make_pdf(["Hello PDF"]), "big.pdf")
    assert text.endswith("): its text could not be read (over 100 bytes, not read)]")


def _last_user_turns(fake: RunningFakeModel) -> list[Any]:
    return [m["content"] for m in fake.requests()[-1]["messages"] if m["role"] == "user"]


async def test_through_a_run_a_regenerate_and_a_later_turn(backend, user, fake_model) -> None:
    svc = backend
    row = await _upload(svc, user, make_pdf(["Quarterly figures"]), "q3.pdf")
    chat = new_chat(svc.storage, user)
    question = "Sum up this PDF (run path)"
    started = await use.start_run(
        svc, user_id=user, session_uuid=chat, text=question, attachment_ids=[row.id]
    )
    await finished(svc.storage, started.assistant_message_id)
    sent = _last_user_turns(fake_model)[-1]
    assert "```q3.pdf\nQuarterly figures\n```" in sent[0]["text"]

    answer = chat_messages(svc.storage, chat)[1]
    again = await versions.regenerate(svc, user_id=user, message_id=answer.id)
    await finished(svc.storage, again.assistant_message_id)
    assert _last_user_turns(fake_model)[-1] == sent

    later = await use.start_run(svc, user_id=user, session_uuid=chat, text="And now?")
    await finished(svc.storage, later.assistant_message_id)
    earlier = _last_user_turns(fake_model)[-2]
    earlier = earlier if isinstance(earlier, str) else earlier[0]["text"]
    assert earlier.startswith(question) and "Quarterly" not in earlier
    assert "[attached earlier: q3.pdf (application/pdf, " in earlier

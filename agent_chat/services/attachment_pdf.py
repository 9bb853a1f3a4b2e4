"""A PDF's text, for the agent (services/attachment_parts.py): pypdf, pure Python, reading at
most `MAX_PAGES` pages and `max_chars` characters, in a child process that is killed after
`TIME_LIMIT` seconds and may use at most `MEMORY_LIMIT` bytes.

Why a child process and not a worker thread: pypdf cannot be interrupted (a Python thread
cannot be stopped), so a hostile PDF (a page tree that loops, a decompression bomb) would keep
a thread busy and its memory held for good; a process is killed and its memory given back, and
its own resource limits (address space, CPU time) bound it even if this process dies. It
starts in about 0.2 s (`python -I`, only pypdf imported), small beside the agent's run.

This file is also the child: run by path (`python -I attachment_pdf.py`), so it imports
nothing of the package; it reads the PDF's bytes on stdin and writes one JSON object.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import weakref
from dataclasses import dataclass

MAX_PAGES = 100  # pages whose text is read
MAX_BYTES = 32 * 1024 * 1024  # a larger PDF is not read at all (its bytes go through stdin)
TIME_LIMIT = 20.0  # seconds for the whole extraction, the child's start included
MEMORY_LIMIT = 1024 * 1024 * 1024  # the child's address space (Python and pypdf take ~40 MB)
TOO_LARGE = f"over {MAX_BYTES // 2**20} MB, not read"
CONCURRENT = 2  # extractions at once per app process: each may use MEMORY_LIMIT
# This file run by path, `-I`: no PYTHON* variables, no user site, not this folder on the path.
CHILD = [sys.executable, "-I", os.path.abspath(__file__)]


@dataclass(frozen=True)
class PdfText:
    """What was read: `pages` in the PDF (None when unknown), the text of the first
    `pages_read`, at most the asked characters (`cut`: more text was left out, by the page
    or the character limit), or `error`: why there is no text ("encrypted", "damaged", …)."""

    pages: int | None = None
    pages_read: int = 0
    text: str = ""
    cut: bool = False
    error: str | None = None


_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _slot() -> asyncio.Semaphore:
    # One per event loop: a semaphore belongs to the loop it first waits on.
    loop = asyncio.get_running_loop()
    if loop not in _slots:
        _slots[loop] = asyncio.Semaphore(CONCURRENT)
    return _slots[loop]


async def extract(data: bytes, *, max_chars: int, time_limit: float | None = None) -> PdfText:
    """The text of the PDF `data` (never raises for a bad PDF: `PdfText.error` says why)."""
    if len(data) > MAX_BYTES:
        return PdfText(error=TOO_LARGE)
    limit = TIME_LIMIT if time_limit is None else time_limit
    async with _slot():
        try:
            async with asyncio.timeout(limit):
                return await _in_child(data, max_chars)
        except TimeoutError:  # _in_child was cancelled and killed its child
            return PdfText(error=f"reading it took over {limit:g} s")
        except OSError:  # no process could be started (a limit on processes, memory)
            return PdfText(error="its reader could not start")


async def _in_child(data: bytes, max_chars: int) -> PdfText:
    proc = await asyncio.create_subprocess_exec(
        *CHILD,
        str(max_chars),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,  # pypdf's warnings on a broken file: unbounded
    )
    try:
        out, _ = await proc.communicate(data)
    finally:
        if proc.returncode is None:  # cancelled (the time limit) or failed: not left running
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    try:
        found = json.loads(out)
    except ValueError:  # killed by its limits (memory, CPU) or crashed
        return PdfText(error="damaged or too complex to read")
    return PdfText(**found)


def _limit_child() -> None:
    try:
        import resource
    except ImportError:  # not on Unix: the parent's time limit still holds
        return
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    cpu = int(TIME_LIMIT) + 5  # outlives a parent that died before killing it
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))


def read_pdf(data: bytes, max_chars: int) -> dict[str, object]:
    """The child's work (plain, so a test may call it): `PdfText`'s fields."""
    import io
    import logging

    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError

    logging.disable(logging.WARNING)  # pypdf logs every repair of a broken file
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):  # an owner password only: readable
            pages = None
            with contextlib.suppress(Exception):
                pages = len(reader.pages)
            return {"pages": pages, "error": "encrypted"}
        pages = len(reader.pages)
    except (FileNotDecryptedError, DependencyError):
        return {"error": "encrypted"}
    except Exception:  # pypdf raises many kinds on a broken file
        return {"error": "damaged"}
    texts: list[str] = []
    chars = read = 0
    try:
        for page in reader.pages[:MAX_PAGES]:
            text = page.extract_text() or ""
            read += 1
            if text.strip():
                texts.append(text)
                chars += len(text) + 2
            if chars > max_chars:
                break
    except Exception:  # a broken page: the ones read so far are kept
        if not texts:
            return {"pages": pages, "error": "damaged"}
    whole = "\n\n".join(texts)
    if not whole.strip():
        return {"pages": pages, "pages_read": read, "error": "no text: scanned pages?"}
    cut = len(whole) > max_chars or read < pages
    return {"pages": pages, "pages_read": read, "text": whole[:max_chars], "cut": cut}


if __name__ == "__main__":
    _limit_child()
    sys.stdout.write(json.dumps(read_pdf(sys.stdin.buffer.read(), int(sys.argv[1]))))

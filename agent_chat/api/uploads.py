"""A multipart/form-data body read as it arrives (python-multipart's push parser, which
Starlette's own form parsing uses), so a file goes to its store while it streams: nothing
spooled to memory or a temporary file, and a file past the size limit is refused at that
byte. `Starlette.Request.form()` would first write every file to a temporary file.

`MultipartReader.parts()` yields each part's (field name, file name) and, for a file the
caller wants, `data()` yields its bytes until the part ends; a body that ends before the part
does is `ApiError(400)` (an upload cut off half-way), and so is one that is not multipart.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator

from fastapi import Request
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect

from agent_chat.api.errors import ApiError

MAX_HEADER_BYTES = 4096
CUT_OFF = "The upload was cut off before the file ended; nothing was kept."


def _bad(message: str = "The body is not a valid multipart/form-data form.") -> ApiError:
    return ApiError(400, message)


class MultipartReader:
    def __init__(self, request: Request) -> None:
        content_type, params = parse_options_header(request.headers.get("content-type"))
        boundary = params.get(b"boundary")
        if content_type != b"multipart/form-data" or not boundary or len(boundary) > 200:
            raise _bad("Send the files as a multipart/form-data form.")
        self._stream = request.stream().__aiter__()
        self._events: deque[tuple[str, object]] = deque()
        self._ended = False
        self._field = bytearray()
        self._value = bytearray()
        self._headers: dict[bytes, bytes] = {}
        try:
            self._parser = MultipartParser(
                boundary,
                {
                    "on_part_begin": self._begin,
                    "on_header_field": self._header_field,
                    "on_header_value": self._header_value,
                    "on_header_end": self._header_end,
                    "on_headers_finished": self._headers_finished,
                    "on_part_data": self._data,
                    "on_part_end": self._end,
                },
            )
        except (FormParserError, ValueError) as exc:
            raise _bad() from exc

    # --- the parser's callbacks: each queues an event --------------------------------------

    def _begin(self) -> None:
        self._headers = {}

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]
        if len(self._field) > MAX_HEADER_BYTES:
            raise _bad()

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]
        if len(self._value) > MAX_HEADER_BYTES:
            raise _bad()

    def _header_end(self) -> None:
        self._headers[bytes(self._field).lower()] = bytes(self._value)
        self._field.clear()
        self._value.clear()

    def _headers_finished(self) -> None:
        _, options = parse_options_header(self._headers.get(b"content-disposition"))
        name = options.get(b"name", b"").decode("utf-8", "replace")
        filename = options.get(b"filename")
        decoded = None if filename is None else filename.decode("utf-8", "replace")
        self._events.append(("part", (name, decoded)))

    def _data(self, data: bytes, start: int, end: int) -> None:
        self._events.append(("data", data[start:end]))

    def _end(self) -> None:
        self._events.append(("end", None))

    # --- reading ------------------------------------------------------------------------------

    async def _next(self) -> tuple[str, object] | None:
        while not self._events:
            if self._ended:
                return None
            try:
                chunk = await anext(self._stream)
            except ClientDisconnect as exc:  # the store deletes what it had; nobody to answer
                raise _bad(CUT_OFF) from exc
            except StopAsyncIteration:
                self._ended = True
                try:
                    self._parser.finalize()
                except FormParserError as exc:
                    raise _bad() from exc
                continue
            try:
                self._parser.write(chunk)
            except FormParserError as exc:
                raise _bad() from exc
        return self._events.popleft()

    async def parts(self) -> AsyncIterator[tuple[str, str | None]]:
        """Each part's field name and file name (None for a plain field). A part whose data
        the caller does not read is skipped."""
        while (event := await self._next()) is not None:
            if event[0] == "part":
                name, filename = event[1]  # type: ignore[misc]
                yield name, filename

    async def data(self) -> AsyncIterator[bytes]:
        """The current part's bytes, until it ends."""
        while (event := await self._next()) is not None:
            kind, value = event
            if kind == "end":
                return
            if kind == "data" and value:
                yield value  # type: ignore[misc]
        raise _bad(CUT_OFF)

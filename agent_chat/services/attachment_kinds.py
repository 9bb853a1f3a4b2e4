"""What an uploaded file is: its media type sniffed from its first bytes (`filetype`, a
dependency-free library of magic numbers, never the client's Content-Type or the name's
extension), its name made safe to store and to send back, and the kinds refused.

Refused (`REFUSED_TYPES`, `REFUSED_EXTENSIONS`): programs and installers, which a download
could run: ELF, Windows PE (exe, dll), Mach-O, WebAssembly, deb and rpm packages by their
content, and Windows' executable names (.exe .dll .msi .scr .com .bat .cmd .vbs .ps1 …)
whatever their content. Everything else is kept (a PDF as `PDF`: the agent gets its text);
what is not a known binary format is `text/plain` when its start is UTF-8 without NUL bytes,
else `application/octet-stream`.
"""

from __future__ import annotations

import codecs
import unicodedata

import filetype

SNIFF_BYTES = 8192  # what filetype reads (its `_NUM_SIGNATURE_BYTES`)
MAX_NAME_CHARS = 255
TEXT = "text/plain"
BINARY = "application/octet-stream"
PDF = "application/pdf"  # what filetype names a file starting with `%PDF` (its text is read)

REFUSED_TYPES = {
    "application/x-executable": "a Linux program",
    "application/x-msdownload": "a Windows program",
    "application/x-mach-binary": "a macOS program",
    "application/wasm": "a WebAssembly program",
    "application/x-deb": "a software package",
    "application/x-rpm": "a software package",
}
REFUSED_EXTENSIONS = frozenset(
    [
        ".exe",
        ".dll",
        ".msi",
        ".msp",
        ".scr",
        ".com",
        ".pif",
        ".cpl",
        ".bat",
        ".cmd",
        ".vbs",
        ".vbe",
        ".jse",
        ".wsf",
        ".wsh",
        ".ps1",
        ".psm1",
        ".hta",
        ".lnk",
        ".reg",
        ".jar",
        ".app",
        ".apk",
    ]
)
_MACH_O = (b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe")

# Types a browser would render or run when shown inline: served as plain bytes instead.
_NEVER_INLINE = frozenset(
    {"text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml"}
)


def sniff(head: bytes) -> str:
    """The media type of a file that begins with `head` (up to SNIFF_BYTES of it)."""
    if head[:4] in _MACH_O:
        return "application/x-mach-binary"
    kind = filetype.guess(head)
    if kind is not None:
        return kind.mime
    if b"\x00" not in head:
        try:  # a multi-byte character cut at the end of the head is still text
            codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        except UnicodeDecodeError:
            return BINARY
        return TEXT
    return BINARY


def refusal(media_type: str, name: str) -> str | None:
    """Why such a file is refused, or None when it is kept."""
    what = REFUSED_TYPES.get(media_type)
    if what:
        return f"“{name}” is {what}; programs and installers cannot be attached."
    dot = name.rfind(".")
    if dot >= 0 and name[dot:].lower() in REFUSED_EXTENSIONS:
        return f"“{name}” has a program's name ({name[dot:]}); programs cannot be attached."
    return None


def clean_name(raw: str | None) -> str:
    """The file's own name: no folders (a browser may send a path), no control or format
    characters, NFC, at most MAX_NAME_CHARS (the extension kept); "file" if nothing is left."""
    name = (raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = unicodedata.normalize("NFC", name)
    name = "".join(c for c in name if unicodedata.category(c)[0] != "C").strip().strip(".")
    if len(name) > MAX_NAME_CHARS:
        dot = name.rfind(".")
        ext = name[dot:] if dot > 0 and len(name) - dot <= 16 else ""
        name = name[: MAX_NAME_CHARS - len(ext)].rstrip() + ext
    return name or "file"


def served_type(media_type: str) -> str:
    """The Content-Type a download goes out with: the sniffed type, text as UTF-8, and never
    one a browser renders as a page or a script (HTML, SVG, XML)."""
    if media_type in _NEVER_INLINE or not media_type.isascii() or "/" not in media_type:
        return BINARY
    if media_type == TEXT:
        return "text/plain; charset=utf-8"
    return media_type

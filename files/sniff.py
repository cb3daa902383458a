"""A file's type, from its first bytes: never from the name or the type the client sent.

``filetype`` knows the binary formats by their magic numbers (images, PDF, archives, office
documents, audio, video). What it does not know is text when it is valid UTF-8 without
control bytes, else ``application/octet-stream``. An HTML page is text/plain here: it is
never served as HTML (downloads are attachments, with ``nosniff`` and a sandboxing CSP).
"""

from __future__ import annotations

import filetype

HEAD_BYTES = 8192  # filetype reads at most the first 8 KiB
FALLBACK = "application/octet-stream"
CONTROL = set(range(0x20)) - {0x09, 0x0A, 0x0D, 0x0C}


def sniff(head: bytes) -> str:
    if not head:
        return FALLBACK
    kind = filetype.guess(head)
    if kind is not None:
        return kind.mime
    return "text/plain" if _is_text(head) else FALLBACK


def _is_text(head: bytes) -> bool:
    try:
        # A multi-byte character may be cut at the end of the head: ignore that tail only.
        text = head.decode("utf-8") if len(head) < HEAD_BYTES else _decode_cut(head)
    except UnicodeDecodeError:
        return False
    return not any(ord(char) in CONTROL for char in text)


def _decode_cut(head: bytes) -> str:
    for cut in range(4):
        try:
            return head[: len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
    raise UnicodeDecodeError("utf-8", head, 0, len(head), "not text")


def accepted(content_type: str, types: list[str]) -> bool:
    """``types`` holds MIME types (``application/pdf``) and families (``image/*``)."""
    family = content_type.split("/", 1)[0] + "/*"
    return content_type in types or family in types

"""How much a zip archive inflates to, measured before another reader opens it.

Inspect's reader inflates each member of an `.eval` log whole, trusting nothing but the
compressed bytes: a 1 MB archive of zeros inflates to a gibibyte (and twice that in
memory once decoded). So the archive is checked first, against a limit on its inflated
size: the sizes its directory declares (cheap, refuses an honest bomb unread), then the
bytes each member actually inflates to, counted by inflating it in chunks without
keeping them (the declared sizes can lie; Inspect does not check them).
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from whowhen.errors import WhowhenError, preview

MAX_INFLATED = 512 << 20
"""Largest total an archive may inflate to (bytes). Inspect logs of real evaluations are
tens of megabytes inflated; reading one holds it in memory about twice over."""
CHUNK = 1 << 20
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
ZSTD = 93  # the zip method number Inspect writes zstandard members with


def check_inflated_size(path: Path, limit: int = MAX_INFLATED) -> int:
    """The total size the archive at `path` inflates to; a WhowhenError naming the file if
    it passes `limit` (by its declared sizes or by what its members actually inflate
    to), or if it is not a zip archive a reader could open."""
    source = str(path)
    try:
        with zipfile.ZipFile(path) as archive, open(path, "rb") as raw:
            members = archive.infolist()
            declared = sum(m.file_size for m in members)
            if declared > limit:
                raise WhowhenError(_past(limit, f"its members declare {declared >> 20} MiB"),
                                   path=source)  # fmt: skip
            total = 0
            for member in members:
                total += _inflate(raw, member, limit - total)
                if total > limit:
                    lie = f"member {preview(member.filename)} declares {member.file_size} B"
                    raise WhowhenError(_past(limit, lie), path=source)
            return total
    except (zipfile.BadZipFile, zlib.error, struct.error, EOFError, ValueError) as exc:
        problem = preview(str(exc).splitlines()[0] if str(exc) else "", quote=False)
        error = f"not a readable Inspect log ({type(exc).__name__}: {problem})"
        raise WhowhenError(error, path=source) from None
    except OSError as exc:
        raise WhowhenError(f"cannot read ({exc.strerror or exc})", path=source) from None


def _past(limit: int, why: str) -> str:
    return f"inflates past the {limit >> 20} MiB limit for an Inspect log ({why}): not read"


def _compressed(raw: BinaryIO, member: zipfile.ZipInfo) -> Iterator[bytes]:
    """The member's compressed bytes in chunks, found as Inspect finds them: after the
    local header, `compress_size` bytes from the central directory."""
    raw.seek(member.header_offset)
    header = raw.read(_LOCAL_HEADER.size)
    *_, name_len, extra_len = _LOCAL_HEADER.unpack(header)
    raw.seek(member.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
    left = member.compress_size
    while left > 0:
        chunk = raw.read(min(CHUNK, left))
        if not chunk:
            raise EOFError(f"member {member.filename!r} is cut short")
        left -= len(chunk)
        yield chunk


def _inflate(raw: BinaryIO, member: zipfile.ZipInfo, budget: int) -> int:
    """Bytes the member inflates to, counted chunk by chunk; stops once past `budget`."""
    if member.compress_type == zipfile.ZIP_STORED:
        return member.compress_size
    if member.compress_type == ZSTD:
        return _inflate_zstd(raw, member, budget)
    if member.compress_type != zipfile.ZIP_DEFLATED:
        return 0  # a method Inspect cannot read either: its reader says so
    inflater = zlib.decompressobj(-15)
    total = 0
    for chunk in _compressed(raw, member):
        data = chunk
        while data and not inflater.eof:
            total += len(inflater.decompress(data, CHUNK))
            if total > budget:
                return total
            data = inflater.unconsumed_tail
        if inflater.eof:
            break
    return total + len(inflater.flush())


class _Chunks:
    """A member's compressed bytes as a file-like `read(n)` (what zstandard reads from)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks, self._buffer = chunks, b""

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._buffer) < size:
            chunk = next(self._chunks, b"")
            if not chunk:
                break
            self._buffer += chunk
        out = self._buffer if size < 0 else self._buffer[:size]
        self._buffer = self._buffer[len(out) :]
        return out


def _inflate_zstd(raw: BinaryIO, member: zipfile.ZipInfo, budget: int) -> int:
    try:
        # deferred: zstandard comes with inspect_ai, needed only for its zstd members
        import zstandard
    except ImportError:
        return 0  # Inspect cannot read it either
    reader = zstandard.ZstdDecompressor().stream_reader(_Chunks(_compressed(raw, member)))
    total = 0
    while chunk := reader.read(CHUNK):  # at most CHUNK inflated bytes at a time
        total += len(chunk)
        if total > budget:
            return total
    return total

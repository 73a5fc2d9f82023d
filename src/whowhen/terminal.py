"""What the command line prints is inert in a terminal: trajectories, names and file names
come from data someone else wrote, and a terminal obeys the control characters in what
it is sent (`ESC ] 0 ;` retitles the window, `ESC [ 2 J` clears it, `ESC ] 52` writes
the clipboard, a carriage return overprints a line). Every control character but newline
and tab is printed as its escape (`\\x1b`), as are the bidirectional overrides that make
text read in another order than it runs."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def inert(text: str) -> str:
    """`text` with every control character a terminal acts on written as its escape;
    newlines and tabs kept, so ordinary text reads as it was written."""
    return _CONTROL.sub(_escape, text)


class InertStream:
    """A text stream that writes what it is given through `inert` (everything else, such
    as `flush` and `fileno`, is the wrapped stream's)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(inert(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def inert_output() -> Iterator[None]:
    """stdout and stderr through `InertStream` while the block runs (a command, its error
    lines, argparse's messages quoting the arguments)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = InertStream(sys.stdout), InertStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved

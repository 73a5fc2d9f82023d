"""Small file helpers: atomic writes for everything that is not a Parquet table, and the
one JSON reader whose every failure names the file and record."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()
"""mkstemp creates 0600 files; results should get the usual permissions for new files."""


@contextmanager
def atomic_path(path: str | Path) -> Iterator[str]:
    """Yield a temp path in the target folder; rename over `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path: str | Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)
    return Path(path)


def write_json(path: str | Path, data: Any) -> Path:
    return write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def parse_json(data: bytes | str, **where: str) -> Any:
    """json.loads where every failure is a WhowhenError naming `where` (path, record): bad
    JSON, bytes that are not UTF-8, nesting too deep for the decoder, an integer over
    Python's 4300-digit limit."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = f"line {exc.lineno}: " if "\n" in exc.doc.strip() else ""
        raise WhowhenError(f"bad JSON ({line}{exc.msg})", **where) from None
    except UnicodeDecodeError as exc:
        raise WhowhenError(f"not UTF-8 text (byte {exc.start})", **where) from None
    except RecursionError:
        raise WhowhenError("bad JSON (nested too deeply)", **where) from None
    except ValueError as exc:  # json raises a plain ValueError for an over-long integer
        raise WhowhenError(f"bad JSON ({str(exc).split(':')[0]})", **where) from None

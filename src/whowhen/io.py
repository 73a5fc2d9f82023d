"""Small file helpers: atomic writes for everything that is not a Parquet table, and the
JSON and YAML readers whose every failure names the file and record."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from whowhen.errors import WhowhenError, preview


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


def parse_yaml(data: bytes | str, **where: str) -> Any:
    """yaml.safe_load where every failure is one WhowhenError line naming `where` (and, for
    a syntax error, the line and column): bad YAML, bytes that are not UTF-8, nesting too
    deep, a scalar PyYAML's constructors reject with a plain ValueError & co."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return yaml.safe_load(text)
    except UnicodeDecodeError as exc:
        raise WhowhenError(f"not UTF-8 text (byte {exc.start})", **where) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = preview(exc.problem or exc.context or type(exc).__name__, quote=False)
        raise WhowhenError(f"not valid YAML ({at}{problem})", **where) from None
    except RecursionError:
        raise WhowhenError("not valid YAML (nested too deeply)", **where) from None
    except (yaml.YAMLError, ValueError, TypeError, AttributeError) as exc:
        # e.g. a 13th month (`2001-13-01`), `!!int 'z'`, an integer over 4300 digits
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise WhowhenError(f"not valid YAML ({preview(first, quote=False)})", **where) from None

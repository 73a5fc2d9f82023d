"""Small file helpers: atomic writes for everything that is not a Parquet table, file names
made from ids, and the JSON and YAML readers whose every failure names the file and
record. The readers are bounded: JSON nesting, YAML file size and the values YAML aliases
expand to, so a hostile file costs one error line, not the stack or the memory."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
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


_SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")


def safe_file_name(key: str, suffix: str = "") -> str:
    """A file name for `key` (a run id, a split) that stays inside its folder: the key
    itself when it is a plain name, else a slug of it and 12 hex digits of its hash (a
    run id `../../x` or `a/b` must neither climb out nor meet another id's file)."""
    if _SAFE_NAME.fullmatch(key):
        return f"{key}{suffix}"
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", key).strip("_")[:60] or "id"
    return f"{slug}-{hashlib.sha256(key.encode()).hexdigest()[:12]}{suffix}"


def inside(folder: str | Path, name: str) -> Path:
    """`folder / name`, or a WhowhenError if that path would not be inside `folder`."""
    path = Path(folder) / name
    if Path(name).is_absolute() or not path.resolve().is_relative_to(Path(folder).resolve()):
        raise WhowhenError(f"file name {preview(name)} leaves the output folder", path=str(folder))
    return path


MAX_JSON_DEPTH = 200
"""Deepest nesting of arrays and objects a JSON input may have. Real records nest a few
levels (an OTLP attribute's array values a dozen); the code that walks values (attribute
readers, canonical JSON, repr) recurses once per level, so a bound here keeps every
later step inside the stack."""


class TooDeep(ValueError):
    """JSON nested past MAX_JSON_DEPTH."""


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `value` nests lists and dicts deeper than `limit` levels (walked without
    recursion, containers only)."""
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        for item in node.values() if isinstance(node, dict) else node:
            if isinstance(item, dict | list):
                stack.append((item, depth + 1))
    return False


def load_json(data: bytes | str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """json.loads bounded in depth: TooDeep (a ValueError, never a RecursionError) for
    nesting past `max_depth`, a UnicodeDecodeError for bytes that are not UTF-8."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(f"nested too deeply: over {max_depth} levels") from None
    if too_deep(value, max_depth):
        raise TooDeep(f"nested too deeply: over {max_depth} levels")
    return value


def not_utf8(exc: UnicodeDecodeError) -> str:
    """The one way a reader says its bytes are not UTF-8: where the first bad byte is."""
    return f"not UTF-8 text (byte {exc.start})"


def parse_json(data: bytes | str, **where: str) -> Any:
    """json.loads where every failure is a WhowhenError naming `where` (path, record): bad
    JSON, bytes that are not UTF-8, nesting past MAX_JSON_DEPTH, an integer over Python's
    4300-digit limit."""
    try:
        return load_json(data)
    except json.JSONDecodeError as exc:
        line = f"line {exc.lineno}: " if "\n" in exc.doc.strip() else ""
        raise WhowhenError(f"bad JSON ({line}{exc.msg})", **where) from None
    except UnicodeDecodeError as exc:
        raise WhowhenError(not_utf8(exc), **where) from None
    except TooDeep as exc:
        raise WhowhenError(f"bad JSON ({exc})", **where) from None
    except ValueError as exc:  # json raises a plain ValueError for an over-long integer
        raise WhowhenError(f"bad JSON ({str(exc).split(':')[0]})", **where) from None


MAX_YAML_BYTES = 8 << 20
"""Largest YAML file read (configs, profiles, mappings and taxonomies are kilobytes)."""
MAX_YAML_VALUES = 100_000
"""Most values (scalars, lists, mappings) a YAML document may stand for once its aliases
are expanded, and the deepest nesting: a few hundred bytes of anchors can stand for a
billion values, which every reader of the result (validation, merging, printing) walks."""
MAX_YAML_DEPTH = 100


class TooLarge(WhowhenError):
    """Input past a reader's bounds (size, YAML alias expansion, nesting): refused unread,
    whatever else is wrong with it."""


class _Refused(ValueError):
    """A YAML document past the bounds, found while composing it."""


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts what a document's aliases expand to before any object is
    built, and refuses an alias to a node that holds it (a value that holds itself)."""

    def compose_document(self) -> yaml.Node:
        node = super().compose_document()
        _check_nodes(node)
        return node


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_nodes(root: yaml.Node) -> None:
    """Raise _Refused if the node graph expands past MAX_YAML_VALUES values or holds a
    cycle. Each shared node is sized once (its size memoised), so the check is linear in
    the text however many times the aliases multiply."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()  # nodes whose children are being sized: the current path
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        key = id(node)
        if closing:
            open_.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            if sizes[key] > MAX_YAML_VALUES:
                raise _Refused(f"its aliases expand past {MAX_YAML_VALUES} values (an alias bomb?)")
            continue
        if key in sizes:
            continue
        if key in open_:
            raise _Refused("an alias refers to a value that holds it (a recursive alias)")
        open_.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))


def check_values(value: Any, **where: str) -> None:
    """A WhowhenError naming `where` if a loaded value (a config as another loader built
    it, its aliases shared objects) stands for more than MAX_YAML_VALUES values or nests
    deeper than MAX_YAML_DEPTH: checked before anything walks it."""
    count, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_YAML_VALUES:
            raise TooLarge(
                f"holds over {MAX_YAML_VALUES} values (YAML aliases that expand?)", **where
            )
        if depth > MAX_YAML_DEPTH:
            raise TooLarge(f"nested deeper than {MAX_YAML_DEPTH} levels", **where)
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for pair in node.items() for v in pair)
        elif isinstance(node, list | tuple):
            stack.extend((v, depth + 1) for v in node)


def parse_yaml(data: bytes | str, **where: str) -> Any:
    """yaml.safe_load, bounded (aliases expanding past MAX_YAML_VALUES values, recursive
    aliases, nesting past MAX_YAML_DEPTH), where every failure is one WhowhenError line
    naming `where` (and, for a syntax error, the line and column): bad YAML, bytes that
    are not UTF-8, a scalar PyYAML's constructors reject with a plain ValueError & co."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = yaml.load(text, Loader=_BoundedLoader)  # a SafeLoader: plain data only
    except UnicodeDecodeError as exc:
        raise WhowhenError(not_utf8(exc), **where) from None
    except _Refused as exc:
        raise TooLarge(f"refused: {exc}", **where) from None
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
    check_values(value, **where)
    return value


def read_yaml(path: str | Path, what: str = "file") -> Any:
    """The YAML file at `path`, parsed by `parse_yaml`; a file over MAX_YAML_BYTES is
    refused unread. A missing or unreadable file is a WhowhenError naming it (`what`:
    how the message calls it)."""
    source = str(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_YAML_BYTES + 1)
    except FileNotFoundError:
        raise WhowhenError(f"{what} not found", path=source) from None
    except OSError as exc:  # e.g. a folder
        raise WhowhenError(f"cannot read ({exc.strerror or exc})", path=source) from None
    if len(data) > MAX_YAML_BYTES:
        limit = MAX_YAML_BYTES >> 20
        raise TooLarge(f"over {limit} MiB: too large for a YAML file, not read", path=source)
    return parse_yaml(data, path=source)


CSV_CELL_LIMIT = 64 << 20
"""Largest CSV cell read: a review sheet's trajectory cell holds a whole run, past the
csv module's 128 KiB default."""
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""How a spreadsheet cell that it would run as a formula starts (OWASP's list)."""


def sheet_cell(value: Any) -> Any:
    """A value as a CSV cell a spreadsheet shows as text, never runs: one starting like a
    formula gets a leading `'` (so does one starting with `'`, so `sheet_value` can undo
    it exactly)."""
    if isinstance(value, str) and value.startswith((*FORMULA_START, "'")):
        return f"'{value}"
    return value


def sheet_value(cell: str) -> str:
    """A cell's value as written before `sheet_cell` (a reviewer's `'-planner`, typed as
    text, is `-planner`)."""
    if cell.startswith("'") and cell[1:].startswith((*FORMULA_START, "'")):
        return cell[1:]
    return cell


def csv_table(data: bytes, source: str) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of a CSV file (a spreadsheet's byte-order mark dropped); every
    failure is a WhowhenError naming the file, and the line for what the csv module
    cannot read."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise WhowhenError(not_utf8(exc), path=source) from None
    csv.field_size_limit(max(csv.field_size_limit(), CSV_CELL_LIMIT))
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        return list(reader.fieldnames or ()), list(reader)
    except csv.Error as exc:
        raise WhowhenError(
            f"not readable as CSV ({preview(str(exc), quote=False)})",
            path=source,
            record=f"line {reader.line_num}",
        ) from None

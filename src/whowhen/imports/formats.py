"""Import formats by name: the one list the imports stage, the config schema and the
`whowhen import` command read, so adding a format is one reader module plus its
registration (`@FORMATS.register("name", ...)` beside the reader), or, from outside the
package, a module named by an entry point in the group `whowhen.import_formats`.

A reader is `(path, options, root) -> ImportResult`: `options` is the `imports:` entry as
the schema fills it (`name`, `format`, `path`, `layout`, `fields`, `subset`, ...), the
command line's flags turned into the same keys; `root` is the folder the entry's other
files (`outcomes`) are relative to, None for the command line's own paths (taken as given).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whowhen.imports.common import ImportResult
from whowhen.plugins import Registry

Reader = Callable[[Path, dict[str, Any], Path | None], ImportResult]


@dataclass(frozen=True)
class ImportFormat:
    """One import format. `options` are the `imports:` keys its reader reads besides
    `path` (the command line offers their flags for this format only); `metavar` and
    `path_help` word its path argument."""

    name: str
    read: Reader
    description: str
    options: tuple[str, ...] = ()
    metavar: str = "PATH"
    path_help: str | None = None


FORMATS: Registry[ImportFormat] = Registry(
    "import format",
    "whowhen.import_formats",
    "imports.format",
    builtins=(
        "whowhen.imports.who_and_when",
        "whowhen.imports.generic",
        "whowhen.imports.otel",
        "whowhen.imports.inspect_log",
        "whowhen.imports.gateway",
    ),
    entry=ImportFormat,
)


def entry_file(root: Path | None, name: str) -> Path | str:
    """A file an `imports:` entry names besides its path: relative to `root` (the config's
    folder), or as given on the command line (`root` None), so messages quote it as typed."""
    return name if root is None else root / name

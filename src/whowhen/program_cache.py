"""The outputs of sandboxed programs that ran to an end, kept on disk between the jobs of a
build (`sandbox.program_cache`).

Why: a warm start re-runs its recorded prefix's programs, a replay its run's, the
counterfactual oracle and the feedback loop theirs, each in a process of its own; every
run costs a sandbox start (about 40 ms of namespaces and cgroups, most of it not on a
CPU, and two jobs' sandboxes wait on each other in the kernel). The programs the tools
run import only the standard library (`python -I -S`, no network), so what one that
ended prints is taken as a function of its code and data: it runs once per build, and a
warm start gets the recorded prefix's outputs exactly. A program stopped by a limit
(time, memory, output) is never kept: it runs again each time.

Entries are JSON files named by a hash of the code, the data files, the limits and the
interpreter; written atomically (jobs run side by side), read back only in their shape
and size.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from whowhen.sandbox import Limits

_state: dict[str, Path | None] = {"dir": None}
MAX_ENTRY_BYTES = 1 << 20
"""An entry larger than this is not a program output the sandbox lets out: ignored."""

Ran = tuple[str, str, str]
"""(status, stdout, last line of stderr)."""


def use(directory: str | Path | None) -> None:
    """Keep outputs under `directory` (None: keep none on disk)."""
    _state["dir"] = Path(directory) if directory else None


def key(code: str, files: Mapping[str, str], limits: Limits) -> str:
    digest = hashlib.sha256()
    for part in (code, json.dumps(sorted(files.items())), repr(limits), sys.version):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def _path(k: str) -> Path | None:
    root = _state["dir"]
    return root / k[:2] / f"{k}.json" if root is not None else None


def get(k: str) -> Ran | None:
    """The kept output of program `k`, or None (none kept, or an entry not of its shape)."""
    path = _path(k)
    try:
        if path is None or path.stat().st_size > MAX_ENTRY_BYTES:
            return None
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)
    return (value[0], value[1], value[2]) if ok and value[0] in ("ok", "error") else None


def put(k: str, ran: Ran) -> None:
    """Keep `ran` (a program that ended: ok or error) for later jobs; best effort."""
    path = _path(k)
    if path is None or ran[0] not in ("ok", "error"):
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(list(ran), fh)
        os.replace(tmp, path)
    except OSError:
        return

"""One virtual environment per framework that cannot share the core install.

A framework whose pins conflict with the core stack (autogen-agentchat pins protobuf 5,
the core's OpenTelemetry stack brings a newer one) never enters the core venv: its run is
a child process (`frameworks.child`) that talks to the gateway over HTTP, so it can live
in a venv of its own. That venv is built on first use from a lock file under
`envs/frameworks/<name>.txt` (every package pinned, installed with `--no-deps`, so two
machines get the same set) with the interpreter's own `venv` and pip, and cached under
`.cache/whowhen/envs/<name>-<hash of the lock>/`: a changed lock is a new venv, and a
half-built one (a killed build) is never used, as it has no `.complete` marker.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

from whowhen.errors import InfraError

LOCKS = Path(__file__).resolve().parents[3] / "envs" / "frameworks"
"""The lock files, one per framework environment (in the repository's `envs/`)."""
CACHE = Path(".cache/whowhen/envs")
"""Where the venvs are built (relative to the working directory, as the other caches)."""
BUILD_TIMEOUT_S = 900
_DONE = ".complete"


def lock_file(name: str) -> Path:
    path = LOCKS / f"{name}.txt"
    if not path.is_file():
        raise InfraError(f"framework environment {name!r}: no lock file {path}")
    return path


def env_dir(name: str, cache: Path | None = None) -> Path:
    """Where framework environment `name` lives for its current lock file."""
    digest = hashlib.sha256(lock_file(name).read_bytes()).hexdigest()[:12]
    return (cache or _cache()).absolute() / f"{name}-{digest}"


def _cache() -> Path:
    return Path(os.environ.get("WHOWHEN_ENVS", str(CACHE)))


def pinned(name: str, dist: str) -> str:
    """The version of `dist` that environment `name`'s lock file pins ('?' if none)."""
    for line in lock_file(name).read_text().splitlines():
        pkg, _, version = line.partition("==")
        if pkg.strip().lower().replace("_", "-") == dist.lower():
            return version.strip()
    return "?"


def state(name: str, cache: Path | None = None) -> str:
    """`ready`, `not built` or `no lock file` (for `whowhen frameworks list`)."""
    try:
        where = env_dir(name, cache)
    except InfraError:
        return "no lock file"
    return "ready" if (where / _DONE).exists() else "not built"


def python(name: str, cache: Path | None = None) -> Path:
    """The interpreter of framework environment `name`, built first if needed (one build
    at a time per environment, across processes: a file lock)."""
    where = env_dir(name, cache)
    exe = where / "bin" / "python"
    if (where / _DONE).exists():
        return exe
    where.parent.mkdir(parents=True, exist_ok=True)
    with open(where.parent / f".{where.name}.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if not (where / _DONE).exists():
            _build(name, where)
    return exe


def _build(name: str, where: Path) -> None:
    shutil.rmtree(where, ignore_errors=True)  # a build killed half-way
    print(f"whowhen: building the {name} environment in {where}", file=sys.stderr, flush=True)
    venv.EnvBuilder(with_pip=True, symlinks=True).create(where)
    cmd = [str(where / "bin" / "python"), "-m", "pip", "install", "-q",
           "--disable-pip-version-check", "--no-deps", "-r", str(lock_file(name))]  # fmt: skip
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise InfraError(f"framework environment {name!r}: pip ran past {exc.timeout} s") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise InfraError(
            f"framework environment {name!r} could not be built from {lock_file(name)}: "
            + " | ".join(tail)
        )
    (where / _DONE).write_text(lock_file(name).read_text())

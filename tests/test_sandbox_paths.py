"""The sandbox works wherever the project lives: cloned or installed under /tmp, under a
path with spaces, in a read-only location, or into the interpreter itself (no venv).

Every file the sandbox binds from the host keeps its host path inside, and the private
/tmp must not hide one that lives under the host's /tmp.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import whowhen
from whowhen.sandbox import Limits, run_program
from whowhen.sandbox.bwrap import _hidden, bwrap_binary
from whowhen.sandbox.worker import Worker

MARK = "bound-file-seen-inside-7f3a"
SRC = str(Path(whowhen.__file__).resolve().parents[1])
SITE = next(p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p))

ANSWER = """
import json, sys
sys.path.insert(0, sys.argv[1])
import probe_pkg
for line in sys.stdin:
    print(json.dumps({"value": probe_pkg.VALUE}), flush=True)
"""
"""A worker as the SQL worker is: its site dir as an argument, its package bound."""


@pytest.fixture(params=["whowhen-paths-", "whowhen paths with spaces-"])
def in_tmp(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A fresh folder in the host's /tmp itself (as a clone there would be)."""
    with tempfile.TemporaryDirectory(dir="/tmp", prefix=request.param) as folder:
        yield Path(folder)


def _package(site: Path) -> Path:
    """A tiny pure-Python package that reads a data file next to it."""
    package = site / "probe_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from pathlib import Path\nVALUE = (Path(__file__).parent / 'data.txt').read_text()\n"
    )
    (package / "data.txt").write_text(MARK)
    return package


def test_a_package_bound_from_under_tmp_is_seen_by_a_worker(in_tmp: Path) -> None:
    """The table_qa SQL worker's way: a site dir under /tmp, its package bound read-only
    (with `--tmpfs /tmp` after the bind, the package vanished: 'did not start')."""
    site = in_tmp / "venv" / "lib" / "site-packages"
    package = _package(site)
    script = in_tmp / "answer.py"
    script.write_text(ANSWER)
    worker = Worker(str(script), [str(site)], Limits(wall_s=10), (str(package),))
    try:
        assert worker.ask({"q": 1}, 10.0) == {"value": MARK}
    finally:
        worker.close()


def test_a_package_of_the_interpreter_itself_can_be_bound() -> None:
    """A project installed into the base interpreter (no venv): its site-packages is
    hidden inside, and a package bound back into it must appear there."""
    hidden = [Path(p) for p in _hidden()]
    packages = [d for h in hidden for d in sorted(h.iterdir()) if (d / "__init__.py").is_file()]
    if not packages:
        pytest.skip("the interpreter's own site-packages holds no package")
    init = packages[0] / "__init__.py"
    code = f"print(len(open({str(init)!r}, 'rb').read()))"
    res = run_program({"main.py": code}, ["main.py"], Limits(), extra_ro=(str(packages[0]),))
    assert res.ok, res.stderr
    assert res.stdout.strip() == str(init.stat().st_size)


def _copied_venv(root: Path) -> Path:
    """A venv whose interpreter is a copy under `root` (not a link to the base one)."""
    venv = root / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--copies", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    if subprocess.run([str(python), "-c", "pass"], capture_output=True).returncode != 0:
        pytest.skip("a copied interpreter does not start here (a relative library path)")
    return python


PROBE = """
import json, os, sys
from whowhen.sandbox import Limits, run_program
from whowhen.sandbox.bwrap import interpreter
site, package = sys.argv[1], sys.argv[2]
code = "import sys; sys.path.insert(0, sys.argv[1]); import probe_pkg; print(probe_pkg.VALUE)"
res = run_program({"main.py": code}, ["main.py", site], Limits(), extra_ro=(package,))
print(json.dumps([interpreter(), res.status, res.stdout.strip(), res.stderr[-500:]]))
"""


@pytest.mark.parametrize("read_only", [False, True])
def test_a_venv_and_its_interpreter_under_tmp(in_tmp: Path, read_only: bool) -> None:
    """The whole project under /tmp: the interpreter itself, the package it binds and the
    program's own folder (TMPDIR) all below /tmp; with `read_only`, the venv and the
    package sit on a read-only mount (a read-only checkout)."""
    python = _copied_venv(in_tmp)
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    package = _package(site)
    work = in_tmp / "work dir"
    work.mkdir()
    argv = [str(python), "-c", textwrap.dedent(PROBE), str(site), str(package)]
    if read_only:
        bwrap = bwrap_binary()
        assert bwrap is not None
        ro = str(in_tmp / "venv")
        wrapper = [bwrap, "--dev-bind", "/", "/", "--ro-bind", ro, ro, "--"]
        if subprocess.run([*wrapper, "/bin/true"], capture_output=True).returncode != 0:
            pytest.skip("no outer mount namespace here to make the venv read-only")
        touch = [*wrapper, "/bin/sh", "-c", f"touch '{ro}/x'"]
        assert subprocess.run(touch, capture_output=True).returncode != 0  # really read-only
        argv = [*wrapper, *argv]
    env = {**os.environ, "PYTHONPATH": f"{SRC}:{SITE}", "TMPDIR": str(work)}
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=work)
    assert proc.returncode == 0, proc.stderr[-2000:]
    inside, status, stdout, stderr = json.loads(proc.stdout.strip().splitlines()[-1])
    assert inside.startswith(str(in_tmp))  # the interpreter that ran is the copy in /tmp
    assert (status, stdout) == ("ok", MARK), stderr


def test_the_sql_worker_with_duckdb_from_under_tmp(in_tmp: Path) -> None:
    """table_qa's SQL as a clone under /tmp runs it: duckdb found in a site dir there."""
    import duckdb

    real = Path(duckdb.__file__).parent.parent
    site = in_tmp / "site-packages"
    site.mkdir()
    names = ["duckdb", *(p.name for p in real.glob("_duckdb*.so")), *(
        p.name for p in real.glob("duckdb-*.dist-info"))]  # fmt: skip
    for name in names:
        source, target = real / name, site / name
        if source.is_dir():
            shutil.copytree(source, target, copy_function=_link_or_copy)
        else:
            _link_or_copy(str(source), str(target))
    code = (
        "from whowhen.benchmarks.table_qa.env import _duckdb_files, run_sql\n"
        "from whowhen.benchmarks.table_qa.tasks import make_table\n"
        "print(_duckdb_files()[0])\n"
        "print(run_sql(make_table(1), 'SELECT COUNT(*) AS n FROM sales'))\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{site}:{SRC}"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found, *answer = proc.stdout.strip().splitlines()
    assert found == str(site)
    assert answer[0] == "n" and answer[1].isdigit(), answer


def _link_or_copy(source: str, target: str) -> str:
    """A hard link where the file system allows one (the library is 66 MB), else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
    return target

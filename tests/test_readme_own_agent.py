"""The README's "Attribute your own agent" walkthrough runs as written, offline: every
command of its block, against the test server, in a fresh folder."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from whowhen.standin.server import TestServer

from .conftest import ROOT


def walkthrough() -> list[str]:
    """The command lines of the README section's bash block (comments dropped)."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Attribute your own agent", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    lines = [line.split("  #", 1)[0].rstrip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


@pytest.mark.slow  # end to end: the README's commands, one program run after another
def test_the_readme_walkthrough_runs_offline(tmp_path: Path) -> None:
    lines = walkthrough()
    server_line, *commands = lines
    assert server_line.startswith("python -m whowhen.standin.server --port 8765 &")
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples/plan_solve.py", tmp_path / "examples")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    with TestServer() as srv:
        script = "set -e\n" + "\n".join(commands).replace("127.0.0.1:8765", srv.url[7:-3])
        proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert "run-2: 3 calls" in out and "failure (exit status 1)" in out
    assert "success (exit status 0); calls: 2 replayed, 1 injected, 0 live" in out
    assert "run-2: decisive step 5 (solver)" in out
    assert pl.read_csv(tmp_path / "rec/labels.csv")["run_id"].to_list() == ["run-2"]
    assert (tmp_path / "pages").is_dir()

"""What every Snakemake process and page job loads before it works. Snakemake reads the rule
files at each start (a run, a dry run, each DVC stage, each job on a cluster), and the viewer
and notebook jobs draw no figure: none of them may load the plotting libraries (seaborn,
SciPy, matplotlib), a second or two of start-up each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import TINY
from .workdir import env, make_project

PLOTTING = ("seaborn", "scipy", "matplotlib")

LOAD = """
import json, sys
from snakemake.api import DAGSettings, OutputSettings, ResourceSettings, SnakemakeApi
from snakemake.settings.enums import Quietness

with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
    workflow = api.workflow(resource_settings=ResourceSettings(cores=1), snakefile="Snakefile")
    workflow.dag(DAGSettings())
rules = [m for m in sys.argv[1:] if m in sys.modules]
import ast
for script in ("viewer", "render_notebook"):  # what the job's script imports
    path = f"workflow/scripts/{script}.py"
    body = ast.parse(open(path).read()).body
    imports = [node for node in body if isinstance(node, (ast.Import, ast.ImportFrom))]
    exec(compile(ast.Module(imports, type_ignores=[]), path, "exec"))
jobs = [m for m in sys.argv[1:] if m in sys.modules]
print(json.dumps({"rules": rules, "jobs": jobs}))
"""


def test_the_rules_and_the_page_jobs_load_no_plotting_library(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", TINY)
    proc = subprocess.run(
        [sys.executable, "-c", LOAD, *PLOTTING],
        cwd=project,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = json.loads(proc.stdout.splitlines()[-1])
    assert loaded == {"rules": [], "jobs": []}

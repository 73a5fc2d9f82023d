"""A distribution from outside whowhen that adds one attributor, one import format and one
system, each one module plus one entry point, as `pip install` would lay it out: the
package and a `.dist-info` folder with `entry_points.txt`, on a folder put on PYTHONPATH.

Tests install it with `install(folder)` and run whowhen in a child process whose
PYTHONPATH starts with that folder (`plugin_env`)."""

from __future__ import annotations

import os
from pathlib import Path

ATTRIBUTOR = "longest_step"
FORMAT = "tsv_steps"
SYSTEM = "echo_react"

ATTRIBUTOR_MODULE = '''
"""The agent step with the longest text is blamed (ties: the earliest)."""

import json

import polars as pl

from whowhen.attribution.baselines import agent_steps, prediction_row
from whowhen.attribution.kinds import ATTRIBUTORS
from whowhen.schema import PREDICTIONS, to_arrow


@ATTRIBUTORS.register("longest_step", protocol="heuristic", family="plugin")
def make(ctx):
    def run(runs, steps):
        candidates = agent_steps(steps).with_columns(n=pl.col("content").str.len_chars())
        rows = []
        for run_id in sorted(runs["run_id"]):
            frame = candidates.filter(pl.col("run_id") == run_id)
            if frame.is_empty():
                rows.append(prediction_row(run_id, "longest_step"))
                continue
            best = frame.sort(["n", "step"], descending=[True, False]).row(0, named=True)
            answer = {"agent": best["actor"], "step": best["step"]}
            rows.append(prediction_row(run_id, "longest_step", parse_ok=True,
                                       raw_output=json.dumps(answer), **answer))
        return pl.from_arrow(to_arrow(rows, PREDICTIONS))

    return run
'''

FORMAT_MODULE = '''
"""A tab-separated file of steps: run_id, step, agent, text, and `*` in a fifth column on
the step that decided the run."""

from whowhen.errors import WhowhenError
from whowhen.imports.common import ImportResult, base_run, label_row, step_row
from whowhen.imports.formats import FORMATS, ImportFormat


def read(path, options, root):
    result = ImportResult()
    runs = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        cells = line.split("\\t")
        if len(cells) not in (4, 5) or not cells[1].isdigit():
            result.errors.append(f"{path}: line {number}: expected 4 or 5 tab-separated cells")
            continue
        runs.setdefault(cells[0], []).append(cells)
    for run_id, rows in runs.items():
        steps = [step_row(run_id, int(r[1]), r[2], r[3]) for r in rows]
        gold = [r for r in rows if len(r) == 5 and r[4] == "*"]
        label = label_row(run_id, gold[0][2], int(gold[0][1]), None) if gold else None
        run = base_run(run_id, "tsv", run_id, "team", "multi", n_steps=len(steps))
        result.add(run, steps, label, str(path), run_id)
    return result


FORMATS.add("tsv_steps", ImportFormat("tsv_steps", read, "tab-separated steps, gold marked *"))
'''

SYSTEM_MODULE = '''
"""echo_react: a scripted system that plays react, with arithmetic's reference policy."""

from whowhen.registry import SYSTEM_KINDS, SYSTEMS, SystemKind


class EchoReact(SYSTEMS["react"]["arithmetic"]):
    name = "echo_react"


SYSTEM_KINDS.add(
    "echo_react", SystemKind("echo_react", "react", "script", policies={"arithmetic": EchoReact})
)
'''

ENTRY_POINTS = """\
[whowhen.attributors]
longest_step = ext_plugins.longest_step

[whowhen.import_formats]
tsv_steps = ext_plugins.tsv_steps

[whowhen.systems]
echo_react = ext_plugins.echo_react
"""

TSV = (
    "r1\t0\tplanner\tplan: add the numbers\n"
    "r1\t1\tcoder\tI will multiply them instead, which is a much longer sentence\t*\n"
    "r1\t2\tplanner\tdone\n"
    "r2\t0\tplanner\tplan\n"
    "r2\t1\tcoder\tok\t*\n"
    "r2\t2\tplanner\tthe final answer is wrong, and this is the longest text of the run\n"
    "broken line\n"
)


def install(site: Path) -> Path:
    """Write the package and its metadata into `site`; the folder to put on PYTHONPATH."""
    package = site / "ext_plugins"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "longest_step.py").write_text(ATTRIBUTOR_MODULE)
    (package / "tsv_steps.py").write_text(FORMAT_MODULE)
    (package / "echo_react.py").write_text(SYSTEM_MODULE)
    info = site / "ext_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ext-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


def plugin_env(site: Path) -> dict[str, str]:
    """The environment of a child process that sees the plug-ins."""
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}

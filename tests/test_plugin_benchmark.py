"""Adding a benchmark is adding one package: a tiny benchmark, written to a temporary folder
and installed only as an entry point, runs through rollouts, injection and continuation
without a single edit to whowhen."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from .conftest import ROOT

PACKAGE = '''
"""letters: how many letters does a word have? One tool, `count_letters(word)`."""

import random
import re
from dataclasses import dataclass

from whowhen.agents.scripted import ScriptedReact
from whowhen.benchmarks.base import AnswerEnv, Benchmark
from whowhen.runtime import Action
from whowhen.tools import FINAL_ANSWER_TOOL

WORDS = ("banana", "cherry", "apple", "kiwi", "melon", "grape", "lemon", "mango")
COUNT_TOOL = {
    "name": "count_letters",
    "description": "Count the letters of a word.",
    "parameters": {
        "type": "object",
        "required": ["word"],
        "properties": {"word": {"type": "string"}},
    },
}


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    answer: str


def make_tasks(cfg, seed):
    rng = random.Random(seed)
    words = [rng.choice(WORDS) for _ in range(cfg["n_tasks"])]
    return [
        Task(f"letters-{i}", f"How many letters does the word '{w}' have?", str(len(w)))
        for i, w in enumerate(words)
    ]


class Env(AnswerEnv):
    benchmark, modality, category = "letters", "text", "other"

    def reset(self):
        self._start()
        return f"Answer with final_answer. Question: {self.task.question}"

    def tools(self):
        return {"count_letters": lambda args: str(len(str(args.get("word", "")))) }

    @staticmethod
    def score(answer, gold):
        return (answer or "").strip() == gold


class React(ScriptedReact):
    def act(self, history):
        counted = [s for s in history if s.kind == "observation"]
        if not counted:
            word = re.search(r"'(\\w+)'", history[0].content)[1]
            return Action("assistant", f"I count the letters of {word}.", "count_letters",
                          {"word": word})
        n = counted[-1].content
        return Action("assistant", f"The word has {n} letters.", "final_answer", {"answer": n})


def dropped_letter(action, rng):
    """action.wrong_tool_argument: the word sent to the tool misses a letter."""
    if action.tool != "count_letters":
        return None
    word = action.tool_args["word"]
    i = rng.randrange(len(word))
    return Action(action.actor, action.content, action.tool, {"word": word[:i] + word[i + 1:]})


SPEC = Benchmark(
    "letters",
    "text",
    "other",
    make_tasks,
    Env,
    (COUNT_TOOL, FINAL_ANSWER_TOOL),
    {"react": React},
    {"action.wrong_tool_argument": dropped_letter},
    {"react": {"assistant": "You count letters with count_letters, then answer."}},
)
'''

DRIVER = """
import json
import yaml
from whowhen.config import validate_config
from whowhen.errors import WhowhenError
from whowhen.continuation import continue_injections
from whowhen.injection.plan import plan_injections
from whowhen.registry import BENCHMARKS, has_policy, role_prompt
from whowhen.rollouts import run_rollouts
from whowhen.taxonomy import load_taxonomy

assert "letters" in BENCHMARKS and has_policy("react", "letters")
config = yaml.safe_load(open(CONFIG))
config["benchmarks"] = {"letters": {"n_tasks": 6}}
validate_config(config)  # its config section is checked with its own schema
config["benchmarks"]["letters"]["colour"] = "red"
try:
    validate_config(config)
    raise SystemExit("an unknown key passed")
except WhowhenError as exc:
    assert exc.field == "benchmarks.letters.colour", exc.field
cfg = {"n_tasks": 6}
runs, steps, _ = run_rollouts("letters", "react", cfg, 3, 0.0, 20)
taxonomy = load_taxonomy(TAXONOMY)
injections = plan_injections(runs, steps, taxonomy, 7, 2)
parts = continue_injections(injections, runs, steps, cfg, 3, 20)
status = parts["continuations"]["status"].value_counts().sort("status")
print(json.dumps({
    "runs": runs.height,
    "solved": int(runs["success"].sum()),
    "modes": sorted(set(injections["mode"])),
    "status": dict(zip(status["status"], status["count"])),
    "labels": parts["labels"].height,
    "exact": bool(parts["continuations"]["prefix_exact"].all()),
    "prompt": role_prompt("react", "letters"),
}))
"""


def _install(site: Path) -> None:
    """A package plus the metadata pip would write: an entry point in `whowhen.benchmarks`."""
    (site / "letters_bench").mkdir(parents=True)
    (site / "letters_bench" / "__init__.py").write_text(PACKAGE)
    info = site / "letters_bench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: letters-bench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[whowhen.benchmarks]\nletters = letters_bench\n")


def test_a_new_benchmark_package_runs_through_the_pipeline(tmp_path: Path) -> None:
    import json

    site = tmp_path / "site"
    _install(site)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    script = (
        f"TAXONOMY = {str(ROOT / 'config' / 'taxonomy.yaml')!r}\n"
        f"CONFIG = {str(ROOT / 'config' / 'config.yaml')!r}\n" + textwrap.dedent(DRIVER)
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["runs"] == out["solved"] == 6  # the reference policy solves every task
    assert "action.wrong_tool_argument" in out["modes"]
    assert out["status"].get("flipped", 0) > 0 and out["labels"] == out["status"]["flipped"]
    assert out["exact"]  # every warm start replayed its recorded prefix exactly
    assert out["prompt"].startswith("You count letters")


def test_without_the_entry_point_the_benchmark_is_unknown(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from whowhen.registry import get_benchmark; get_benchmark('letters')",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode != 0 and "unknown benchmark 'letters'" in proc.stderr

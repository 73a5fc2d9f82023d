"""The ledger orchestrator's coder on the web shop: on some tasks, before an opened item is
configured, the Orchestrator has the Assistant write a script that checks the WebSurfer's
report against the request (price under the budget, every wanted option offered) and
has the ComputerTerminal run it; the ledger then goes by what the script printed, not by
the report. A script that fails (a misspelt name, on some tasks) is sent back to be fixed.

So a wrong check in the script (a logic bug) or a failed run the ledger passes over (an
ignored tool error) decides what the team does next, as in recorded Magentic-One runs
where the ComputerTerminal's output steers the plan.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from whowhen.agents.ledger import CODER, ORCHESTRATOR, TERMINAL, instruction_to, script_in
from whowhen.agents.phrasing import Form, choose, task_chance
from whowhen.benchmarks.web_shop.belief import Spec
from whowhen.benchmarks.web_shop.pages import Item
from whowhen.runtime import Action, Step
from whowhen.tools import code_output

ASK_SCRIPT = (
    "Please write a Python script that checks whether the open item fits the request: its "
    "price under the budget and every wanted option offered."
)
RUN = "Please run the Python script the Assistant wrote."
FIX = Form("shop.ledger.fix", ("The script failed ({error}). Please fix it.",))
FITS, MISFITS = "fits", "does not fit"
CODE_P = 0.4
"""How often the Orchestrator has opened items checked by a script (a per-task draw)."""
TYPO_P = 0.3
"""How often, on those tasks, the Assistant's first script misspells a name."""
_WRITTEN = (
    "Here is a script that checks the open item against the request:",
    "This script compares the item's price and options with what was asked for:",
)
_FIXED = "Fixed: the result variable is `fits`. The corrected script:"


def uses_code(history: Sequence[Step]) -> bool:
    return task_chance(history, "shop.ledger.code", CODE_P)


def check_script(item: Item, spec: Spec, any_option: bool = False, typo: bool = False) -> str:
    """The script that checks `item` (as reported) against `spec` (`any_option`: the logic
    bug that passes an item offering one of the wanted values; `typo`: a misspelt name)."""
    offers = {name: list(values) for name, values in item.options}
    wanted = dict(spec.want)
    test = "any" if any_option else "all"
    return (
        f"price = {item.cents / 100:.2f}\nbudget = {spec.cap}\n"
        f"offers = {json.dumps(offers)}\nwanted = {json.dumps(wanted)}\n"
        f"fits = price < budget and {test}(\n"
        "    value in offers.get(name, []) for name, value in wanted.items()\n)\n"
        f'print("{FITS}" if {"fit" if typo else "fits"} else "{MISFITS}")'
    )


def script_message(history: Sequence[Step], code: str, fixed: bool) -> str:
    head = _FIXED if fixed else choose(history, "shop.ledger.script", _WRITTEN)
    return f"{head}\n```python\n{code}\n```"


def write_script(history: Sequence[Step], item: Item, spec: Spec) -> Action:
    """The Assistant's turn: a script for the reported item (misspelt on some tasks the
    first time; the fix is always right)."""
    fixing = FIX.fields(instruction_to(history, CODER)) is not None
    earlier = any(script_in(s) is not None for s in history)
    typo = not fixing and not earlier and task_chance(history, "shop.ledger.typo", TYPO_P)
    code = check_script(item, spec, typo=typo)
    return Action(CODER, script_message(history, code, fixing))


def verdict(history: Sequence[Step], since: int) -> tuple[str, str]:
    """Where the script check of the item opened at `since` stands: ('ask', ''), ('run',
    ''), ('error', the error line) or ('done', what the script printed)."""
    written = [s for s in history[since:] if script_in(s) is not None]
    if not written:
        return "ask", ""
    runs = [
        s for s in history[written[-1].step :] if s.actor == ORCHESTRATOR and s.tool == TERMINAL
    ]
    if not runs:
        return "run", ""
    after = history[runs[-1].step + 1] if runs[-1].step + 1 < len(history) else None
    out = code_output(after.content) if after is not None else ""
    if out in (FITS, MISFITS):
        return "done", out
    return "error", out.splitlines()[-1] if out else "no output"

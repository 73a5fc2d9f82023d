"""The wordings of every step the HumanEval reference policies write: the code-as-action
agent's plan, notes and submissions, and the pipeline's messages between coder, tester and
reviewer. Each is a tuple of phrasings that `say` draws from for the step being decided;
they live apart from the policies so that the policies read as decisions, and so that the
operators rebuild a step with the same wording family as the reference step.
"""

from __future__ import annotations

# --- code as action: phrasings -------------------------------------------------------------

PLAN = (
    "Task: complete {entry}({params}). The docstring gives {count}, and the crux will be "
    "a line like `{line}`. My plan: draft the body around it, run it on the examples, then "
    "try a few inputs of my own before I finish.",
    "{entry} takes {params}, and its heart is `{line}`. I'll start by reading what the "
    "examples expect, write a first version, and check it on the {count} and on some edge "
    "cases.",
    "Let me think about {entry} first: it takes {params}, and the key step is `{line}`. "
    "The docstring shows {count}. I will write the function around that line, check it "
    "against those, then look at cases the docstring skips.",
)
SURVEY = (
    "Before writing {entry} around `{line}`, I'll print the docstring examples and the type "
    "of each expected value.",
    "First I want to see the {count} side by side, with the types {entry} must return, to "
    "be sure `{line}` fits them; listing them.",
    "Listing the examples and their expected types, so I know what `{line}` in {entry} has "
    "to produce.",
)
SURVEY_NOTE = (
    "So {entry} returns {types} values, which `{line}` has to lead to; the longest example "
    "call is {call}. Nothing unusual in the expected outputs; I can write the body now.",
    "The expected values are all {types}. That fixes the return type, and `{line}` stays "
    "the core; the example {call} is the one to watch, since it has the largest input.",
    "{count}, all expecting {types}, so `{line}` is still the plan. I'll keep {call} in "
    "mind: it is the biggest case and the most likely to expose a mistake.",
)
DRAFT = (
    "Here is my first version of {entry}; I'll run it on the {count}.",
    "I'll write {entry} now and check it straight away against the {count}.",
    "First draft of {entry}, run together with the {count} so I see at once what breaks.",
)
DRAFT_BARE = (
    "I'll write {entry} and run it once to make sure it loads; the docstring has no examples "
    "to check.",
    "First version of {entry}. There are no docstring examples, so this run only shows that "
    "the code executes.",
    "Writing {entry} and running the program; with no examples given, I'll test it on inputs "
    "of my own afterwards.",
)
PASS_NOTE = (
    "All {n} examples pass with `{line}`. That covers the cases the docstring shows; I "
    "still want to see how {entry} handles {next_round}.",
    "{n}/{n} passed on this run, so `{line}` holds up. The examples are fairly typical "
    "inputs, though, so next I'll try {next_round}.",
    "Good: every example gives the expected value with `{line}`. Before I finish I'll try "
    "{next_round}, which the docstring never shows.",
)
PASS_NOTE_LAST = (
    "All {n} examples pass with `{line}`, and I have already tried my own inputs; {entry} "
    "looks done.",
    "{n}/{n} passed. That was the last open point, so {entry} is finished, `{line}` and all.",
    "Every example passes now with `{line}`. Nothing is left to check for {entry}.",
)
BARE_NOTE = (
    "The program runs without errors with `{line}`. With no examples to compare against, "
    "the real check is {next_round}.",
    "It loads and runs cleanly, `{line}` included. Next: {next_round}, to see whether "
    "{entry} behaves sensibly.",
    "No errors from `{line}`. Since the docstring gives no examples, I'll judge {entry} on "
    "{next_round}.",
)
FAIL_NOTE = (
    "Only {passed}/{n} passed, though `{line}` looks right. {call} {got} where the "
    "docstring expects {want}; {reason}. I'll look at that call on its own.",
    "Still wrong even with `{line}` in place: {call} should give {want}, but it {got_bare} "
    "({passed}/{n} passed). {Reason}. Let me print that case in detail.",
    "The run fails {failed} of {n} examples, so something besides `{line}` is off; the "
    "first is {call}, which {got_bare} instead of {want}. {Reason}; I'll inspect it before "
    "changing anything.",
)
INSPECT = (
    "Printing {call} next to the expected value, with the types of both.",
    "Let me evaluate {call} alone and compare it with {want}.",
    "I'll run just {call} on the current draft to see exactly what comes back.",
)
FIX = (
    "That confirms it: {detail}. I'll rewrite that part of {entry} and rerun the {count}.",
    "So the draft is wrong on {call}: {detail}. Fixing the logic in {entry} and running the "
    "examples again.",
    "Now I see where it goes wrong ({detail}). Here is a corrected {entry}, checked against "
    "the {count} again.",
)
PROBE = (
    "Now {words}: {calls}.",
    "Let me try {words} that the docstring does not cover: {calls}.",
    "Next I'll run {entry} on {words} to see whether anything raises: {calls}.",
)
PROBE_NOTE = (
    "{tried_words} ran cleanly with `{line}`, e.g. {sample}. Those values are what I would "
    "expect. {left}",
    "Nothing raised, and `{line}` copes: {sample}; that looks right for such an input. {left}",
    "No errors on {words}, so `{line}` handles them; for example {sample}. {left}",
)
PROBE_NOTE_RAISED = (
    "No change needed: I keep `{line}` as it is. {bad}, but the prompt never passes such an "
    "input, so I will not special-case it. {left}",
    "I'll leave it alone: `{line}` is fine. One case fails loudly ({bad}), but the docstring "
    "does not define that input. {left}",
    "{raised} of {tried} raised; no change to `{line}` is needed, since that input ({bad}) "
    "lies outside what the prompt promises. {left}",
)
LEFT = ("That leaves {next_round}.", "Next come {next_round}.", "One more round: {next_round}.")
DONE = (
    "That was my last round of inputs.",
    "I have no more cases to try.",
    "That is enough edge cases.",
)
RECHECK = (
    "One last run of the {count} on the final version of {entry}.",
    "Before finishing, I'll rerun the {count} once more on exactly this code.",
    "To be safe, rerunning the examples on the current {entry}.",
)
SUBMIT_RECHECKED = (
    "Still {n}/{n}. I submit {entry}.",
    "The rerun confirms all {n} examples; submitting {entry}.",
    "Everything passes again, so I submit this version of {entry}.",
)
SUBMIT = (
    "{entry} passes the examples and behaves sensibly on my own inputs; I submit it.",
    "Done: submitting {entry}.",
    "I'm confident in {entry} now; submitting it.",
)
SUBMIT_EARLY = (
    "{entry} is straightforward, so I submit my version without running it.",
    "I'll write {entry} and submit it directly; it is short enough to get right without a run.",
    "Submitting {entry} as written; the logic is simple enough.",
)


# --- pipeline: coder -> tester -> reviewer: phrasings --------------------------------------

CODER_PLAN = (
    "To tester: I'm taking {entry}({params}); the core will be `{line}`. I'll write it from "
    "the docstring and hand you a draft; the docstring has {count}.",
    "To tester: Starting on {entry}. It takes {params} and hinges on `{line}`; I'll save a "
    "draft shortly and ask you to run the {count}.",
    "To tester: Plan for {entry}: implement it from the docstring around `{line}`, try one "
    "call myself, then hand the draft to you for the {count}.",
)
TESTER_PLAN = (
    "To coder: Noted: `{line}` is the line I'll watch. Besides the {count}, I will try "
    "{calls} once the draft is in.",
    "To coder: OK, so the draft hinges on `{line}`. I'll run the {count} first and then a "
    "few inputs of my own, e.g. {calls}.",
    "To coder: Ready when you are. With `{line}` in mind, my extra cases for {entry}: {calls}.",
)
TESTER_PLAN_BARE = (
    "To coder: Noted, the core is `{line}`; I'll run the {count} as soon as the draft is saved.",
    "To coder: OK, send the draft of {entry} with `{line}` over when it is saved and I'll "
    "run the {count}.",
    "To coder: Ready. I'll check the draft of {entry} and its `{line}` against the {count}.",
)
WRITE = (
    "Writing {entry} from its docstring and saving the draft.",
    "Here is my draft of {entry}; saving it with write_code.",
    "I'll save a first version of {entry}.",
)
SELFCHECK = (
    "Quick check before the hand-off: I'll run {call} myself.",
    "Let me try {call} on the draft before the tester sees it.",
    "Running {call} once to make sure the draft loads and gives the right value.",
)
SELF_FIX = (
    "My own run of {call} gives {got}, not {want}: {reason}. Fixing {entry} and saving the "
    "draft again before the hand-off.",
    "{call} should be {want} but the draft gives {got}; {reason}. I'll correct {entry} and "
    "save it.",
    "Not right yet: {call} gives {got} instead of {want}. Saving a corrected draft of {entry}.",
)
HANDOFF = (
    "To tester: The draft of {entry} is saved ({lines} lines, built around `{line}`). "
    "{seen}Please run the docstring examples.",
    "To tester: {entry} is ready for testing; its core is `{line}`. {seen}Over to you for "
    "the examples.",
    "To tester: Draft saved, with `{line}` as the key line. {seen}Can you run the {count} "
    "against the draft of {entry}?",
)
HANDOFF_FIXED = (
    "To tester: I fixed {entry} and saved a new draft ({lines} lines, with `{line}`). "
    "{seen}Please run the examples again.",
    "To tester: New draft of {entry} saved; with `{line}` it should now get {call} right. "
    "{seen}Please rerun the examples.",
    "To tester: The revised {entry} is in, keeping `{line}`. {seen}Rerun the {count}, please.",
)
SEEN = ("I tried {call} myself: {out}. ", "On my side {call} gives {out}. ", "{call} -> {out}. ")
TESTER_RUN = (
    "Running the docstring examples against the draft of {entry}.",
    "I'll run the {count} on the saved draft of {entry}.",
    "Let me see how the draft of {entry} does on the docstring examples.",
)
TESTER_RERUN = (
    "Rerunning the docstring examples on the new draft of {entry}.",
    "The coder saved a new draft of {entry}; running the examples again.",
    "Second look at {entry}: running the {count} on the new draft.",
)
TESTER_RECHECK = (
    "As the reviewer asked, running the docstring examples once more on the saved draft of "
    "{entry}.",
    "Rerunning the {count} on the saved draft of {entry} for the reviewer.",
    "Running the examples again on the draft of {entry}, to confirm the count.",
)
TESTER_PROBE = (
    "The examples pass; now {words} for {entry}: {calls}.",
    "Next, inputs the docstring does not cover ({words}): {calls}.",
    "Trying {words} on the draft of {entry}: {calls}.",
)
PASS_REPORT = (
    "To reviewer: The draft of {entry} passes the visible examples with `{line}` "
    "({n}/{n} passed).{edges}",
    "To reviewer: All {n} docstring examples pass on the draft of {entry}, whose core is "
    "`{line}` ({n}/{n} passed).{edges}",
    "To reviewer: {entry} looks good on the examples: {n}/{n} passed, so `{line}` holds.{edges}",
)
CLEAN_REPORT = (
    "To reviewer: The draft of {entry} runs cleanly with `{line}`; the prompt has no "
    "docstring examples to check.{edges}",
    "To reviewer: No docstring examples for {entry}, and the draft with `{line}` loads and "
    "runs without errors.{edges}",
    "To reviewer: The draft of {entry} runs without errors, `{line}` included (there are "
    "no examples to compare with).{edges}",
)
EDGES = (
    " I also tried {k} inputs of my own; none raised, e.g. {sample}.",
    " My own {k} inputs ran cleanly too ({sample}).",
    " Extra cases: {k} tried, all fine, e.g. {sample}.",
)
EDGES_RAISED = (
    " I also tried {k} inputs of my own: {bad}, an input the prompt never asks for; the rest "
    "look fine.",
    " Of my {k} extra inputs, one raises ({bad}); the docstring does not cover that input.",
    " Extra cases: {k} tried; {bad}, outside what the prompt specifies.",
)
CONFIRM = (
    "To reviewer: Rerun done: still {n}/{n} passed on the draft of {entry} with `{line}`.",
    "To reviewer: Confirmed, the saved draft of {entry} with `{line}` passes all {n} "
    "examples again ({n}/{n} passed).",
    "To reviewer: Same result on the rerun: {n}/{n} passed for {entry} and its `{line}`.",
)
FAIL_REPORT = (
    "To reviewer: The draft of {entry} with `{line}` fails the visible examples "
    "({passed}/{n} passed):\n{details}",
    "To reviewer: {entry} with `{line}` fails {failed} of {n} examples ({passed}/{n} "
    "passed):\n{details}",
    "To reviewer: Not passing yet: the draft of {entry} with `{line}` fails ({passed}/{n} "
    "passed):\n{details}",
)
ASK_RECHECK = (
    "To tester: Thanks. Before I approve `{line}`, please rerun the examples on the saved "
    "draft of {entry} once more; I want the count from the exact code I'll approve.",
    "To tester: Can you run the examples against the saved draft of {entry}, the one with "
    "`{line}`, one more time? I'd like to be sure the report matches the final draft.",
    "To tester: Please confirm with a fresh run of the examples on the saved draft of "
    "{entry} before I sign off on `{line}`.",
)
QUESTION_RAISED = (
    "To coder: About `{line}`: the tester saw that {bad}. Is that acceptable for {entry}?",
    "To coder: One question on `{line}`: {bad} in the tester's extra cases. Do we need to "
    "handle that?",
    "To coder: Before I approve `{line}`: {bad}. Intended?",
)
QUESTION_CODE = (
    "To coder: The draft of {entry} is {lines} lines and {feature}, with `{line}` at its "
    "core. Is that deliberate?",
    "To coder: Reading {entry}: the key line is `{line}`, and it {feature}. Any reason for "
    "that choice?",
    "To coder: Quick question on `{line}` in {entry}: I see it {feature}. Is that what the "
    "docstring needs?",
)
ANSWER_RAISED = (
    "To reviewer: Yes, `{line}` stays. The prompt never passes such an input, and guarding "
    "it would change nothing the docstring asks for.",
    "To reviewer: That input is outside the specification in the docstring, so I left "
    "`{line}` unguarded on purpose.",
    "To reviewer: It's acceptable: `{line}` covers the inputs the docstring describes, and "
    "it only promises results for those.",
)
ANSWER_CODE = (
    "To reviewer: Yes, deliberate: `{line}` follows the docstring directly, and the "
    "tester's runs cover it.",
    "To reviewer: It keeps {entry} short, and `{line}` matches what the examples ask for; "
    "I'd keep it.",
    "To reviewer: That is intended. `{line}` is the simplest form that fits the docstring, "
    "and all examples pass with it.",
)
APPROVE = (
    "The tester reports that the draft of {entry} passes; I approve and submit it.",
    "{entry} passes the tester's checks and the code reads cleanly; approved, I submit the draft.",
    "Looks good to me: the tests pass. I submit the draft of {entry}.",
)
REJECT = (
    "To coder: The tester reports that the draft of {entry} with `{line}` fails the visible "
    "examples ({passed}/{n} passed). Please fix it and save a new draft.\n{details}",
    "To coder: Not yet: {passed}/{n} passed with `{line}`. {call} {got} but should give "
    "{want}; {reason}. Please fix {entry}.",
    "To coder: The draft of {entry} with `{line}` fails {failed} of {n} examples "
    "({passed}/{n} passed). The first one is {call}: expected {want}, it {got}. Please "
    "take another look.",
)
CODER_INSPECT = (
    "Let me reproduce {call} on my draft and compare with {want}.",
    "Running {call} on my draft to see what goes wrong.",
    "I'll print {call} next to the expected value before changing {entry}.",
)
CODER_FIX = (
    "I see it: {detail}. Saving a fixed draft of {entry}.",
    "The value confirms the reviewer's note ({detail}); rewriting {entry} and saving the draft.",
    "Fixing {entry}: {detail}, so the logic was off there. Saving the new draft.",
)

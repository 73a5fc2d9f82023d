"""The single source of truth for every table the pipeline reads or writes.

Each table is an Arrow schema plus two small rule sets (non-null columns and
allowed values). `write_table` validates then writes atomically; `read_table`
validates what it reads, so a malformed or foreign Parquet file fails with one
line naming the file and the column instead of a KeyError three stages later.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from whowhen.errors import WhowhenError
from whowhen.io import atomic_path

MODALITIES = ("text", "image", "video")
TOPOLOGIES = ("single", "multi")
ORIGINS = ("rollout", "injected", "rerollout", "imported", "feedback")
STEP_KINDS = ("action", "observation", "message")
STATUSES = ("flipped", "recovered", "invalid")
LABEL_SOURCES = ("injection", "counterfactual", "imported", "human")
SPLITS = ("train", "dev", "test")
TIMING_COLUMNS = ("latency_s",)
"""Wall-clock fields: the only values that may differ between two runs of one config.
Every table keeps them in columns of these names; derived outputs leave them out, except
`results/analysis/timing.csv`, which is named as such (tests/test_resume.py)."""
FEEDBACK_ACTOR = "feedback"
"""Who speaks the feedback message that opens a rerun (whowhen.feedback): outside the
agent system, never executed by the environment, never a decisive step."""
NON_AGENT_ACTORS = ("user", "system", FEEDBACK_ACTOR)
"""Actors whose messages are inputs, not agent decisions (never a decisive step)."""


def role_detail(actor: str, role: str | None) -> str | None:
    """'thought' of role 'Orchestrator (thought)' spoken by Orchestrator: the detail an
    imported role adds to its actor. Chat roles (assistant, tool, user; what built runs
    carry) and a role equal to the actor add none."""
    if not role or not role.startswith(f"{actor} (") or not role.endswith(")"):
        return None
    return role[len(actor) + 2 : -1].strip() or None


def step_label(step: dict[str, Any]) -> str:
    """`actor (kind)`, as `show` and LLM prompts print a step; a role's detail replaces a
    message's kind ('Orchestrator (-> WebSurfer)') so the addressee or thought is not
    lost. Steps without detail (every built step) print exactly as before."""
    detail = role_detail(step["actor"], step.get("role"))
    if detail is None:
        return f"{step['actor']} ({step['kind']})"
    shown = detail if step["kind"] == "message" else f"{step['kind']}, {detail}"
    return f"{step['actor']} ({shown})"


@dataclass(frozen=True)
class TableSpec:
    """An Arrow schema with the checks that Arrow types alone cannot express."""

    name: str
    schema: pa.Schema
    required: tuple[str, ...] = ()
    allowed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    key: tuple[str, ...] = ()


_STR, _INT, _F64, _BOOL = pa.string(), pa.int64(), pa.float64(), pa.bool_()

RUNS = TableSpec(
    "runs",
    pa.schema(
        [
            ("run_id", _STR),
            ("benchmark", _STR),
            ("subset", _STR),
            ("task_id", _STR),
            ("question", _STR),
            ("modality", _STR),
            ("category", _STR),
            ("system", _STR),
            ("topology", _STR),
            ("policy", _STR),
            ("seed", _INT),
            ("origin", _STR),
            ("parent_run_id", _STR),
            ("success", _BOOL),
            ("score", _F64),
            ("final_answer", _STR),
            ("gold_answer", _STR),
            ("n_steps", _INT),
            ("end_reason", _STR),
            ("tokens_in", _INT),
            ("tokens_out", _INT),
            ("cost_usd", _F64),
            ("meta", _STR),
        ]
    ),
    required=(
        "run_id",
        "benchmark",
        "task_id",
        "modality",
        "system",
        "topology",
        "policy",
        "seed",
        "origin",
        "success",
        "n_steps",
    ),
    allowed={"modality": MODALITIES, "topology": TOPOLOGIES, "origin": ORIGINS},
    key=("run_id",),
)

STEPS = TableSpec(
    "steps",
    pa.schema(
        [
            ("run_id", _STR),
            ("step", _INT),
            ("actor", _STR),
            ("role", _STR),
            ("kind", _STR),
            ("content", _STR),
            ("tool", _STR),
            ("tool_args", _STR),
            ("media", pa.list_(_STR)),
            ("tokens_in", _INT),
            ("tokens_out", _INT),
            ("cost_usd", _F64),
            ("latency_s", _F64),
        ]
    ),
    required=("run_id", "step", "actor", "kind", "content"),
    allowed={"kind": STEP_KINDS},
    key=("run_id", "step"),
)

LABELS = TableSpec(
    "labels",
    pa.schema(
        [
            ("run_id", _STR),
            ("decisive_agent", _STR),
            ("decisive_step", _INT),
            ("mode", _STR),
            ("category", _STR),
            ("original_action", _STR),
            ("replacement_action", _STR),
            ("reason", _STR),
            ("source", _STR),
            ("split", _STR),
        ]
    ),
    required=("run_id", "decisive_agent", "decisive_step", "source"),
    allowed={"source": LABEL_SOURCES, "split": SPLITS},
    key=("run_id",),
)

INJECTIONS = TableSpec(
    "injections",
    pa.schema(
        [
            ("injection_id", _STR),
            ("parent_run_id", _STR),
            ("benchmark", _STR),
            ("system", _STR),
            ("step", _INT),
            ("agent", _STR),
            ("action_type", _STR),
            ("position", _STR),
            ("mode", _STR),
            ("category", _STR),
            ("original_action", _STR),
            ("replacement_action", _STR),
        ]
    ),
    required=("injection_id", "parent_run_id", "step", "agent", "mode", "replacement_action"),
    key=("injection_id",),
)

SLIPS = TableSpec(
    "slips",
    pa.schema(
        [
            ("run_id", _STR),
            ("benchmark", _STR),
            ("system", _STR),
            ("step", _INT),
            ("agent", _STR),
            ("mode", _STR),
            ("original_action", _STR),
            ("slipped_action", _STR),
        ]
    ),
    required=("run_id", "step", "agent", "mode", "slipped_action"),
    key=("run_id", "step"),
)
"""The slip model's log, kept out of band: the rollout never shows which step slipped. A run
with slips may still succeed (a recovery) and a failure's decisive step is not always its
first slip, so this is evidence for mining, not a label."""

EXCHANGES = TableSpec(
    "exchanges",
    pa.schema(
        [
            ("run_id", _STR),
            ("index", _INT),  # call order within the run
            ("agent", _STR),
            ("source", _STR),
            ("request", _STR),  # the normalised request body, canonical JSON
            ("message", _STR),  # the assistant message that answered it, canonical JSON
            ("steps", pa.list_(_INT)),  # the run's steps this answer became
            ("tokens_in", _INT),
            ("tokens_out", _INT),
            ("cost_usd", _F64),
        ]
    ),
    required=("run_id", "index", "agent", "source", "request", "message"),
    allowed={"source": ("live", "replayed", "injected")},
    key=("run_id", "index"),
)
"""Every model call of a framework system's run, through the gateway (`whowhen.gateway`):
what a warm start replays and checks call by call. Empty for the other systems."""


PROBE_OUTCOMES = ("flipped", "still_failed", "fidelity_error", "infra_error", "error")
PROBES = TableSpec(
    "probes",
    pa.schema(
        [
            ("run_id", _STR),
            ("step", _INT),
            ("agent", _STR),
            ("outcome", _STR),
            ("recorded_action", _STR),
            ("corrected_action", _STR),
            ("n_steps", _INT),
            ("replayed_steps", _INT),
            ("tokens_in", _INT),
            ("tokens_out", _INT),
            ("cost_usd", _F64),
            ("end_reason", _STR),
        ]
    ),
    required=("run_id", "step", "agent", "outcome", "corrected_action"),
    allowed={"outcome": PROBE_OUTCOMES},
    key=("run_id", "step"),
)
"""One counterfactual probe: action `step` of a failed run replaced by the reference
policy's action for the same visible history, warm-started and run to the end. Cost:
the continuation's length, the prefix steps re-executed and any model spend."""

REPLAY_STATUSES = (
    "decisive",
    "no_single_decisive_step",
    "fidelity_error",
    "infra_error",
    "skipped",
)
DECISIVE = TableSpec(
    "decisive",
    pa.schema(
        [
            ("run_id", _STR),
            ("benchmark", _STR),
            ("system", _STR),
            ("modality", _STR),
            ("status", _STR),
            ("reason", _STR),
            ("decisive_step", _INT),
            ("decisive_agent", _STR),
            ("action_type", _STR),
            ("n_probes", _INT),
            ("erroneous_action", _STR),
            ("corrected_action", _STR),
            ("mode", _STR),
            ("category", _STR),
            ("description", _STR),
        ]
    ),
    required=("run_id", "benchmark", "system", "status", "n_probes"),
    allowed={"status": REPLAY_STATUSES},
    key=("run_id",),
)
"""Per natural failure: the decisive step found by counterfactual replay (or why none),
the erroneous and corrected actions, the offline classifier's mode and a description."""

CONTINUATIONS = TableSpec(
    "continuations",
    pa.schema(
        [
            ("run_id", _STR),
            ("injection_id", _STR),
            ("parent_run_id", _STR),
            ("benchmark", _STR),
            ("system", _STR),
            ("mode", _STR),
            ("status", _STR),
            ("reason", _STR),
            ("prefix_len", _INT),
            ("prefix_checked", _INT),
            ("prefix_matched", _INT),
            ("prefix_exact", _BOOL),
            ("first_mismatch_step", _INT),
            ("rerollout_prefix_exact", _BOOL),
            ("rerollout_status", _STR),
            ("rerollout_label_wrong", _BOOL),
            ("earlier_error_step", _INT),
            # model-played systems: control continuations (original action at the
            # injected step, fresh seeds) run and succeeded; null for scripted systems
            ("controls_run", _INT),
            ("controls_ok", _INT),
            ("controls_passed", _BOOL),  # enough succeeded: the label holds
            # framework systems: the warm start's model calls answered from the recording
            # and asked live (the injected call is neither); null for the other systems
            ("calls_replayed", _INT),
            ("calls_live", _INT),
        ]
    ),
    required=("run_id", "injection_id", "status", "prefix_exact"),
    allowed={"status": STATUSES},
    key=("run_id",),
)

FEEDBACK_SOURCES_FIXED = ("none", "self_critique", "oracle")
"""Feedback sources that are not attributors: plain retry, the system's own critique and the
gold (counterfactual replay of the failed attempt); every other source is an attributor."""
FEEDBACK = TableSpec(
    "feedback",
    pa.schema(
        [
            ("run_id", _STR),
            ("benchmark", _STR),
            ("system", _STR),
            ("modality", _STR),
            ("task_id", _STR),
            ("source", _STR),
            ("round", _INT),
            ("parent_run_id", _STR),
            ("seed", _INT),
            ("success", _BOOL),
            ("score", _F64),
            ("n_steps", _INT),
            ("end_reason", _STR),
            ("slips", _INT),
            ("rechecks", _INT),
            ("fb_agent", _STR),
            ("fb_step", _INT),
            ("fb_mode", _STR),
            ("fb_reason", _STR),
            ("fb_ok", _BOOL),
            ("message", _STR),
            ("gold_status", _STR),
            ("gold_agent", _STR),
            ("gold_step", _INT),
            ("agent_correct", _BOOL),
            ("step_correct", _BOOL),
            ("fb_tokens_in", _INT),
            ("fb_tokens_out", _INT),
            ("fb_cost_usd", _F64),
            ("tokens_in", _INT),
            ("tokens_out", _INT),
            ("cost_usd", _F64),
        ]
    ),
    required=(
        "run_id",
        "benchmark",
        "system",
        "task_id",
        "source",
        "round",
        "parent_run_id",
        "success",
        "fb_ok",
    ),
    allowed={"gold_status": REPLAY_STATUSES},
    key=("run_id",),
)
"""One rerun of an originally failed task (round >= 1) with one feedback source: the
feedback it was given about its parent (the failed attempt before it: the rollout in round
1), that parent's gold decisive step where replay finds one, whether the feedback named it
(`agent_correct`, `step_correct`: null without gold or without feedback), and how the
rerun ended. Steps are numbered without the feedback messages (as the attributors saw the
parent). `slips` counts the rerun's slips, `rechecks` the slips a re-check prevented. A
solved task is not rerun, so round r has the tasks still failing after round r - 1."""

PREDICTIONS = TableSpec(
    "predictions",
    pa.schema(
        [
            ("run_id", _STR),
            ("attributor", _STR),
            ("agent", _STR),
            ("step", _INT),
            ("mode", _STR),
            ("reason", _STR),
            ("raw_output", _STR),
            ("parse_ok", _BOOL),
            ("calls", _INT),
            ("tokens_in", _INT),
            ("tokens_out", _INT),
            ("cost_usd", _F64),
            ("latency_s", _F64),
        ]
    ),
    required=("run_id", "attributor", "parse_ok"),
    key=("run_id", "attributor"),
)

LIFTS = TableSpec(
    "lifts",
    pa.schema(
        [
            ("group", _STR),
            ("feature", _STR),
            ("gold_mean", _F64),
            ("other_mean", _F64),
            ("n_runs", _INT),
        ]
    ),
    required=("group", "feature"),
    key=("group", "feature"),
)
"""Each tracer-lite feature's mean at the gold step and at the other agent steps, per group
of the runs it learned from (the built train split; each imported dataset's subset)."""

OVERVIEW = TableSpec(
    "overview",
    pa.schema(
        [
            ("benchmark", _STR),
            ("system", _STR),
            ("modality", _STR),
            ("category", _STR),
            ("n_runs", _INT),
            ("n_failed", _INT),
            ("failure_rate", _F64),
            ("n_slips", _INT),
            ("n_slipped_runs", _INT),
            ("n_recovered", _INT),
        ]
    ),
    required=("benchmark", "system", "n_runs", "n_failed"),
    key=("benchmark", "system"),
)

MODE_OVERVIEW = TableSpec(
    "mode_overview",
    pa.schema(
        [
            ("benchmark", _STR),
            ("system", _STR),
            ("mode", _STR),
            ("count", _INT),
            ("share", _F64),
            ("source", _STR),
        ]
    ),
    required=("benchmark", "system", "mode", "count"),
    key=("benchmark", "system", "mode"),
)

REPLAY_CHECK = TableSpec(
    "replay_check",
    pa.schema(
        [
            ("benchmark", _STR),
            ("system", _STR),
            ("n_failed", _INT),
            ("n_decisive", _INT),
            ("n_no_single", _INT),
            ("n_fidelity_error", _INT),
            ("n_one_slip", _INT),
            ("n_one_slip_found", _INT),
            ("one_slip_found_rate", _F64),
            ("probes", _INT),
        ]
    ),
    required=("benchmark", "system", "n_failed"),
    key=("benchmark", "system"),
)
"""Replay against the slip log, per pair and `all`: of the failures with exactly one logged
slip, how often the decisive step found is that slip's step."""

AGREEMENT = TableSpec(
    "agreement",
    pa.schema([("category", _STR), ("n", _INT), ("agree", _INT), ("rate", _F64)]),
    required=("category", "n", "agree"),
    key=("category",),
)
"""The offline mode classifier against the slip log's mode, per taxonomy category (`all`
too), over decisive steps where a slip was logged."""

CANDIDATES = TableSpec(
    "candidates",
    pa.schema(
        [
            ("candidate", _STR),
            ("size", _INT),
            ("terms", _STR),
            ("example", _STR),
            ("pairs", _STR),
            ("run_ids", pa.list_(_STR)),
        ]
    ),
    required=("candidate", "size"),
    key=("candidate",),
)
"""Candidate new modes: clusters of error descriptions that no taxonomy mode fits."""

TABLES: dict[str, TableSpec] = {
    t.name: t
    for t in (
        RUNS,
        STEPS,
        LABELS,
        INJECTIONS,
        SLIPS,
        PROBES,
        DECISIVE,
        CONTINUATIONS,
        PREDICTIONS,
        OVERVIEW,
    )
}


def stable_id(*parts: Any) -> str:
    """A 16-hex-digit id from canonical JSON of the inputs: same inputs, same id, every run."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def canonical_json(value: Any) -> str | None:
    """JSON with sorted keys, so tool arguments compare and hash byte-for-byte."""
    return None if value is None else json.dumps(value, sort_keys=True, separators=(",", ":"))


def validate(table: pa.Table, spec: TableSpec, source: str = "<memory>") -> pa.Table:
    """Check columns, types, nulls, allowed values and key uniqueness; return the table cast
    to the canonical schema (column order included)."""
    missing = [n for n in spec.schema.names if n not in table.column_names]
    if missing:
        raise WhowhenError(
            f"{spec.name} table lacks column(s) {', '.join(missing)}", path=source, field=missing[0]
        )
    extra = [n for n in table.column_names if n not in spec.schema.names]
    if extra:
        raise WhowhenError(
            f"{spec.name} table has unknown column(s) {', '.join(extra)}",
            path=source,
            field=extra[0],
        )
    table = table.select(spec.schema.names)
    try:
        table = table.cast(spec.schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        bad = next(
            (f.name for f in spec.schema if not _castable(table.column(f.name), f.type)),
            spec.schema.names[0],
        )
        raise WhowhenError(
            f"{spec.name} column has type {table.schema.field(bad).type}, "
            f"expected {spec.schema.field(bad).type} ({exc})".replace("\n", " "),
            path=source,
            field=bad,
        ) from None
    for name in spec.required:
        col = table.column(name)
        if col.null_count:
            row = col.to_pylist().index(None)
            raise WhowhenError(
                f"{spec.name}: required value is null",
                path=source,
                record=_record(table, spec, row),
                field=name,
            )
    for name, allowed in spec.allowed.items():
        for row, value in enumerate(table.column(name).to_pylist()):
            if value is not None and value not in allowed:
                raise WhowhenError(
                    f"{value!r} is not one of {', '.join(allowed)}",
                    path=source,
                    record=_record(table, spec, row),
                    field=name,
                )
    if spec.key and table.num_rows:
        keys = pl.from_arrow(table.select(list(spec.key)))
        dup = keys.filter(keys.is_duplicated())
        if dup.height:
            raise WhowhenError(
                f"{spec.name}: duplicate key {dup.row(0)}", path=source, field=",".join(spec.key)
            )
    return table


def _castable(column: pa.ChunkedArray, target: pa.DataType) -> bool:
    try:
        column.cast(target)
        return True
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return False


def _record(table: pa.Table, spec: TableSpec, row: int) -> str:
    if spec.key and all(k in table.column_names for k in spec.key):
        return "/".join(str(table.column(k)[row].as_py()) for k in spec.key)
    return f"#{row}"


def _empty_arrow(spec: TableSpec) -> pa.Table:
    # from_batches, not Schema.empty_table, which goes through pa.array and so imports pandas
    return pa.Table.from_batches([], schema=spec.schema)


def _int(value: Any) -> bool:
    return type(value) is int and -(2**63) <= value < 2**63


_PLAIN: dict[pa.DataType, Any] = {
    pa.string(): lambda v: type(v) is str,
    pa.int64(): _int,
    pa.float64(): lambda v: type(v) is float or _int(v),
    pa.bool_(): lambda v: type(v) is bool,
    pa.list_(pa.string()): lambda v: type(v) is list and all(type(x) is str for x in v),
    pa.list_(pa.int64()): lambda v: type(v) is list and all(_int(x) for x in v),
}


def _plain(rows: list[dict[str, Any]], spec: TableSpec) -> bool:
    """Whether every value already has its column's exact Python type (or is None)."""
    checks = [(f.name, _PLAIN.get(f.type)) for f in spec.schema]
    if any(check is None for _, check in checks):
        return False
    return all(
        (value := row.get(name)) is None or check(value) for row in rows for name, check in checks
    )


def _from_rows(rows: list[dict[str, Any]], spec: TableSpec) -> pa.Table:
    """Rows to Arrow. pyarrow's own conversion (`pa.array`) imports pandas, a quarter
    second in every Snakemake job, so rows whose values already have their columns' exact
    types go through Polars; any other row set takes pyarrow's path, whose coercions and
    errors are the contract (Polars coerces more leniently)."""
    if not rows:
        return _empty_arrow(spec)
    if _plain(rows, spec):
        try:
            schema = pl.from_arrow(_empty_arrow(spec)).schema
            return pl.from_dicts(rows, schema=schema).to_arrow().cast(spec.schema)
        except Exception:  # an unencodable string, say: pyarrow's path names it
            pass
    return pa.Table.from_pylist(rows, schema=spec.schema)


def to_arrow(data: pl.DataFrame | pa.Table | list[dict[str, Any]], spec: TableSpec) -> pa.Table:
    """Build a validated Arrow table from Polars, Arrow or a list of row dicts."""
    if isinstance(data, list):
        table = _from_rows(data, spec)
    elif isinstance(data, pl.DataFrame):
        table = data.to_arrow()
    else:
        table = data
    return validate(table, spec)


def write_table(
    data: pl.DataFrame | pa.Table | list[dict[str, Any]],
    spec: TableSpec,
    path: str | Path,
) -> Path:
    """Validate, sort by key and write Parquet atomically (temp file in the same folder,
    then rename), so a killed job never leaves a half-written file behind."""
    path = Path(path)
    table = to_arrow(data, spec)
    if spec.key and table.num_rows:
        table = table.sort_by([(k, "ascending") for k in spec.key])
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return path


def read_table(path: str | Path, spec: TableSpec) -> pl.DataFrame:
    """Read and validate one Parquet file; errors name the file and the column."""
    path = Path(path)
    if not path.exists():
        raise WhowhenError(f"missing input file (expected a {spec.name} table)", path=str(path))
    try:  # one file: ParquetFile, not read_table, whose dataset layer imports pandas
        with pq.ParquetFile(path) as parquet:
            table = parquet.read()
    except (pa.ArrowInvalid, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise WhowhenError(f"not a readable Parquet file ({first})", path=str(path)) from None
    return pl.from_arrow(validate(table, spec, source=str(path)))


def read_tables(paths: list[str] | list[Path], spec: TableSpec) -> pl.DataFrame:
    """Read several files of one table kind and concatenate them (empty-safe)."""
    frames = [read_table(p, spec) for p in paths]
    if not frames:
        return pl.from_arrow(_empty_arrow(spec))
    return pl.concat(frames, how="vertical")


def empty(spec: TableSpec) -> pl.DataFrame:
    return pl.from_arrow(_empty_arrow(spec))

"""Execute a parameterised report notebook and render it to one offline, reproducible HTML file.

Why not papermill + `jupyter nbconvert --execute`: the pipeline needs (a) byte-identical HTML
for identical inputs, so Snakemake/DVC see no change when nothing changed; (b) a one-line
`WhowhenError` naming the notebook and the cell when a cell fails, not a traceback dump;
(c) a kernel that is this interpreter, even in a venv whose kernel specs are not registered
(or where a user-level `python3` spec points at another Python); and (d) HTML that reads
offline: no require.js, MathJax or mermaid fetched from a CDN, images inlined.
"""

from __future__ import annotations

import ast
import json
import keyword
import math
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import nbformat
import zmq
from jinja2 import DictLoader
from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from nbconvert import HTMLExporter
from traitlets import default

from whowhen.errors import WhowhenError
from whowhen.io import atomic_path

PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"
_INJECTED_ID = "injected-parameters"
"""A fixed cell id: nbformat would draw a random one, and cell ids are written into the HTML."""

_OFFLINE_TEMPLATE = "whowhen_offline.html.j2"
_OFFLINE_TEMPLATES = {
    # nbconvert's lab template without its CDN <script> tags (require.js, MathJax, mermaid,
    # widgets). Tables (HTML) and figures (inlined PNG) need no JavaScript; the cost is that
    # LaTeX in markdown shows as source and mermaid diagrams as text.
    _OFFLINE_TEMPLATE: "{%- extends 'index.html.j2' -%}\n"
    "{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}\n"
    "{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}\n"
    "{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}\n"
    "{% block jupyter_widgets %}{% endblock jupyter_widgets %}\n"
}

_KERNEL_TMP = re.compile(r"[^\s'\"]*[\\/]ipykernel_\d+[\\/]")
"""ipykernel files a cell's code as `<tmp>/ipykernel_<pid>/<hash>.py`; warnings print it."""


class _ThisInterpreterSpecs(KernelSpecManager):
    """Resolve `python3` to ipykernel's own spec for `sys.executable`, never a registered one.

    Why: a venv may have no kernel spec installed, and `jupyter kernelspec list` may show a
    user-level `python3` that runs another Python, without whowhen's dependencies.
    """

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        if kernel_name == NATIVE_KERNEL_NAME:
            # deferred: ipykernel (with IPython) is heavy and only this kernel's spec needs it
            from ipykernel.kernelspec import RESOURCES, get_kernel_dict

            return self.kernel_spec_class(resource_dir=RESOURCES, **get_kernel_dict())
        return super().get_kernel_spec(kernel_name)


class _ThisInterpreterKernel(AsyncKernelManager):
    """nbclient's kernel manager with our specs, and CurveZMQ where both ends support it.

    Why encryption: without it ipykernel>=7.4 logs a plain-TCP warning on every run.
    """

    @default("kernel_spec_manager")
    def _default_kernel_spec_manager(self) -> KernelSpecManager:
        return _ThisInterpreterSpecs(data_dir=self.data_dir)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if "transport_encryption" in self.trait_names() and zmq.has("curve"):
            self.transport_encryption = "auto"


def _literal(value: Any, where: str) -> Any:
    """`value` in a form whose repr() is a Python literal with one spelling for every run."""
    if isinstance(value, Path):
        return value.as_posix()
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise WhowhenError(f"parameter {where} is {value!r}, which has no Python literal")
        return value
    if isinstance(value, list | tuple):
        items = [_literal(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {
            _literal(k, f"{where} key"): _literal(v, f"{where}[{k!r}]") for k, v in value.items()
        }
    # Sets are refused too: their repr order follows string hashing, which differs per run.
    raise WhowhenError(
        f"parameter {where} is a {type(value).__name__}; use str, Path, int, float, bool, None "
        "or a list, tuple or dict of those"
    )


def _assigned_names(source: str) -> set[str] | None:
    """Names the parameters cell assigns; None when it does not parse (the kernel will say)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        else:
            continue
        names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def inject_parameters(nb: nbformat.NotebookNode, parameters: dict[str, Any], name: str) -> int:
    """Insert a papermill-style `injected-parameters` cell into `nb`; return its index.

    It goes right after the first code cell tagged `parameters` (at the top when there is
    none); an injected cell left by an earlier run is dropped first. A name that the
    parameters cell does not assign is refused: a typo would otherwise silently render the
    notebook's defaults (the full run's paths) instead of the values given.
    """
    nb.cells = [c for c in nb.cells if INJECTED_TAG not in c.get("metadata", {}).get("tags", [])]
    at, defaults = 0, None
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and PARAMETERS_TAG in cell.metadata.get("tags", []):
            at, defaults = i + 1, _assigned_names(cell.source)
            break
    lines = ["# Parameters" if parameters else "# Parameters: none given; the defaults apply"]
    for key, value in parameters.items():
        if not (isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key)):
            raise WhowhenError(f"parameter name {key!r} is not a Python identifier", path=name)
        if defaults is not None and key not in defaults:
            raise WhowhenError(
                f"parameter {key!r} is not set in the notebook's parameters cell "
                f"(it sets: {', '.join(sorted(defaults)) or 'nothing'})",
                path=name,
            )
        try:
            lines.append(f"{key} = {_literal(value, key)!r}")
        except WhowhenError as exc:
            raise WhowhenError(str(exc), path=name) from None
    cell = nbformat.v4.new_code_cell("\n".join(lines))
    cell.id = _INJECTED_ID
    cell.metadata["tags"] = [INJECTED_TAG]
    nb.cells.insert(at, cell)
    return at


def read_notebook(source: Path) -> nbformat.NotebookNode:
    """Read `source` as nbformat v4 with no outputs, timings or random cell ids."""
    try:
        text = source.read_text(encoding="utf-8")
        raw = json.loads(text)
        with warnings.catch_warnings():  # MissingIDFieldWarning: fixed below
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4)
    except (OSError, ValueError) as exc:  # missing file, bad JSON, not a notebook
        raise WhowhenError(f"cannot read the notebook: {exc}", path=str(source)) from None
    raw_cells = (raw.get("cells") or []) if isinstance(raw, dict) else []
    if not all(isinstance(c, dict) and "id" in c for c in raw_cells):
        # nbformat < 4.5 has no ids and the upgrade draws random ones: make them positional.
        for i, cell in enumerate(nb.cells):
            cell.id = f"cell-{i}"
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    for key in ("widgets", "papermill"):
        nb.metadata.pop(key, None)
    return nb


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


KERNEL_START_S = 300
"""How long a kernel may take to start: on a loaded machine (a build beside the tests)
one took more than the client's default minute, which failed a notebook that was fine."""


def execute_notebook(
    nb: nbformat.NotebookNode, name: str, injected_at: int, timeout: int, cwd: Path
) -> None:
    """Run every cell of `nb` in place, in a fresh kernel; a failure is one WhowhenError line.

    The cell index in the message is the position in the source notebook (0-based, markdown
    cells included), i.e. with the injected parameters cell at `injected_at` not counted.
    """
    current: dict[str, int] = {}

    def on_cell_start(cell: nbformat.NotebookNode, cell_index: int) -> None:
        current["index"] = cell_index

    client = NotebookClient(
        nb,
        kernel_name=NATIVE_KERNEL_NAME,
        kernel_manager_class=_ThisInterpreterKernel,
        timeout=timeout,
        startup_timeout=KERNEL_START_S,
        record_timing=False,  # no per-cell timestamps in the metadata
        allow_errors=False,
        shutdown_kernel="immediate",  # outputs are in; a timed-out cell must not linger
        on_cell_start=on_cell_start,
        resources={"metadata": {"path": str(cwd)}},
    )
    # A fixed hash seed, so a notebook that iterates over a set of strings prints one order.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    try:
        client.execute(cwd=str(cwd), env=env)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
        index = current.get("index")
        if index is None:
            raise WhowhenError(f"the kernel failed: {_one_line(exc)}", path=name) from None
        if isinstance(exc, CellExecutionError):
            what = f"{exc.ename}: {_one_line(exc.evalue)}"
        elif isinstance(exc, CellTimeoutError):
            what = f"still running after the {timeout} s timeout"
        else:
            what = "the kernel died (out of memory, or a crash in native code?)"
        # The author's index: without the injected cell, which sits at `injected_at`.
        where = f"cell {index - (index > injected_at)}"
        if index == injected_at:
            where = "the injected parameters cell"
        first = next((ln.strip() for ln in nb.cells[index].source.splitlines() if ln.strip()), "")
        raise WhowhenError(
            f"{where} failed ({what}); the cell starts {_one_line(first, 80)!r}", path=name
        ) from None
    except Exception as exc:  # start-up: no ipykernel, no free ports, the kernel died early
        raise WhowhenError(
            f"could not run a {sys.executable} kernel: {type(exc).__name__}: {_one_line(exc)}",
            path=name,
        ) from None


def _scrub_outputs(nb: nbformat.NotebookNode) -> None:
    """Replace the per-process kernel temp folder in text outputs by a fixed `<cell>/`."""
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                out["text"] = _KERNEL_TMP.sub("<cell>/", out["text"])
            elif out.get("output_type") == "error":
                out["traceback"] = [_KERNEL_TMP.sub("<cell>/", ln) for ln in out["traceback"]]
            for mime, data in out.get("data", {}).items():
                if mime.startswith("text/") and isinstance(data, str):
                    out["data"][mime] = _KERNEL_TMP.sub("<cell>/", data)


def to_html(nb: nbformat.NotebookNode, title: str, path: Path) -> str:
    """nbconvert's lab HTML without CDN scripts; `path`: where markdown images are found."""
    exporter = HTMLExporter(
        template_name="lab",
        extra_loaders=[DictLoader(_OFFLINE_TEMPLATES)],
        embed_images=True,  # markdown ![..](file.png) too; outputs are data: URIs already
    )
    exporter.template_file = _OFFLINE_TEMPLATE
    resources = {"metadata": {"name": title, "path": str(path)}}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return body


def render_notebook(
    source: Path,
    html_out: Path,
    parameters: dict[str, Any],
    executed_out: Path | None = None,
    timeout: int = 300,
    cwd: Path | None = None,
) -> Path:
    """Execute `source` with `parameters` injected and write its HTML to `html_out`.

    Same inputs, same bytes: no timing metadata, fixed cell ids, no kernel ids or temp
    paths. `cwd` (default: the current directory) is the kernel's working directory, against
    which relative paths in the notebook resolve. `timeout`: seconds per cell. `executed_out`,
    if given, receives the executed .ipynb. Writes are atomic. A failing cell raises
    WhowhenError("<source>: cell <i> failed (<Error>: <message>); ..."), with <i> the 0-based
    position in the source notebook, markdown cells included.
    """
    source, html_out = Path(source), Path(html_out)
    nb = read_notebook(source)
    injected_at = inject_parameters(nb, parameters, str(source))
    execute_notebook(nb, str(source), injected_at, timeout, Path(cwd or Path.cwd()))
    _scrub_outputs(nb)
    html = to_html(nb, source.stem, source.parent)
    if executed_out is not None:
        with atomic_path(executed_out) as tmp:
            nbformat.write(nb, tmp)
    with atomic_path(html_out) as tmp:
        Path(tmp).write_text(html, encoding="utf-8")
    return html_out

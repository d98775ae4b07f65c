"""Output: the output folder checked before anything is measured, atomic writes, and the self-contained
HTML report (inline CSS, figures as base64 PNG).

Draws only through :mod:`ampere.report.figures` (matplotlib inside its functions); no torch.
Chapter: *The reference check* (book/reference-check.ipynb).
"""

from __future__ import annotations

import html
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import check
from .arguments import mapping_list
from .arguments import path as _path
from .comparison import FLAG_THRESHOLD, model_rows, recorded_rows, summary_rows
from .extract import _gpu_id
from .figures import _png_base64, comparison_figure, model_figure, recorded_figure

#: GPU used for the model-only report when the machine has no catalogued GPU.
MODEL_FALLBACK_GPU = "A100-SXM4-80GB"


#: the files one report writes, as one set (:func:`write_report_set`)
REPORT_FILES: tuple[str, ...] = ("report.json", "report.html", "report.txt")


def check_output_folder(out: str | os.PathLike[str]) -> Path:
    """Create ``out`` if needed and prove it (and the folder above it, where the next set is staged) is
    writable; refuse a folder holding files a report did not write (the set replaces the whole folder).

    Raises ``ValueError`` naming the folder and the reason, before anything is measured.
    """
    folder = Path(_path("out", out))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for where in (folder, folder.resolve().parent):
            fd, probe_path = tempfile.mkstemp(prefix=".ampere-report-", suffix=".tmp", dir=where)
            os.close(fd)
            os.unlink(probe_path)
    except OSError as exc:
        raise ValueError(f"output folder {str(folder)!r} cannot be written: {exc.strerror or exc}") from None
    foreign = sorted(p.name for p in folder.iterdir() if p.name not in REPORT_FILES)
    if foreign:
        shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
        raise ValueError(f"output folder {str(folder)!r} holds files a report did not write ({shown}): the report "
                         "replaces the whole folder, so give it a new or empty one")
    return folder


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` atomically (``ampere.results.write_atomic``): never a half-written report."""
    from ..results import write_atomic

    return write_atomic(_path("path", path), check.string("text", text, allow_empty=True))


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where unavailable."""
    if sys.platform != "linux":
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def write_report_set(folder: str | os.PathLike[str], files: dict[str, str]) -> dict[str, Path]:
    """Write a report's files as one set: a reader of ``folder`` finds the old set or the new one, never a mix.

    The files are written and fsynced in a staging folder next to ``folder``, which then takes its place:
    in one atomic exchange on Linux (the old set is removed after), else by two renames (for an instant
    there is no folder, never a mixed one). An interruption before the swap leaves the old set and removes
    the staging folder. Chapter: *The reference check*, "Running it".
    """
    folder = Path(_path("folder", folder))
    files = check.mapping("files", files, allow_empty=False)
    for name, text in files.items():
        check.string(f"files[{name!r}]", text, allow_empty=True)
    unknown = sorted(set(files) - set(REPORT_FILES))
    if unknown:
        raise ValueError(f"files {unknown} are not report files; allowed: {', '.join(REPORT_FILES)}")
    stage = Path(tempfile.mkdtemp(prefix=f".{folder.name}.new-", dir=folder.resolve().parent))
    try:
        for name, text in files.items():
            with open(stage / name, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(stage, 0o777 & ~_umask())
        if not folder.exists():
            os.rename(stage, folder)
        elif _exchange(stage, folder):
            shutil.rmtree(stage, ignore_errors=True)  # the old set, now at the staging path
        else:
            old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=folder.resolve().parent))
            os.rmdir(old)
            os.rename(folder, old)
            os.rename(stage, folder)
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return {name: folder / name for name in files}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.88em}th,td{border:1px solid #ddd;padding:3px 7px;
text-align:left;vertical-align:top}th{background:#f3f3f3}tr.flag td{background:#fde2e1}
.ok{color:#2e7d32}.bad{color:#c62828;font-weight:600}.muted{color:#666;font-size:.9em}
.box{border-left:4px solid #76b900;background:#f7fbef;padding:.5em 1em}.warn{border-left-color:#c62828;
background:#fdf1f0}img{max-width:100%}
"""


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None,
           row_class: Callable[[dict[str, Any]], str] | None = None) -> str:
    if not rows:
        return "<p class='muted'>(none)</p>"
    columns = list(columns or rows[0].keys())
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = []
    for r in rows:
        cls = row_class(r) if row_class else ""
        cells = "".join(f"<td>{html.escape('' if r.get(c) is None else str(r.get(c)))}</td>" for c in columns)
        body.append(f"<tr class='{cls}'>{cells}</tr>" if cls else f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_html(result: dict[str, Any], comparisons: Sequence[dict[str, Any]], plan_rows: Sequence[dict[str, Any]],
                recorded: Sequence[dict[str, Any]], config_rows: Sequence[dict[str, Any]] = (),
                images: bool = True, checks: Sequence[dict[str, Any]] = (),
                ranked: Sequence[dict[str, Any]] = ()) -> str:
    """The self-contained HTML report (inline CSS, figures as base64 PNG): findings ranked by expected
    throughput loss, the configuration checks, then the measured figures against model and references.
    ``result`` is the report's result (schema ``ampere-result/1``), the others the rows :func:`run` computes."""
    from .arguments import result as _result
    from .config_checks import check_rows

    result = _result("result", result)
    comparisons = mapping_list("comparisons", comparisons, ("flag", "reference", "label", "warnings"))
    plan_rows = mapping_list("plan_rows", plan_rows, ("probe", "title", "status", "reason"))
    recorded = mapping_list("recorded", recorded, ("key", "gpu", "value", "label"))
    config_rows = mapping_list("config_rows", config_rows)
    images = check.boolean("images", images)
    checks = mapping_list("checks", checks, ("name", "status"))
    ranked = mapping_list("ranked", ranked, ("rank", "check"))
    dev = result["device"]
    esc = html.escape
    gpu = _gpu_id(dev)
    is_gpu = dev.get("backend") == "cuda"
    spec_name = dev.get("spec_name") if is_gpu else None
    flagged = [c for c in comparisons if c["flag"]]
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>ampere report: {esc(gpu)}</title><style>{_CSS}</style></head><body>",
             f"<h1>Reference check of {esc(dev.get('name', '?'))}</h1>",
             f"<p class='muted'>python -m ampere report, {esc(result['created_utc'])}; "
             + ", ".join(f"{k} {esc(str(result['versions'].get(k) or '-'))}" for k in ("ampere", "torch", "cuda",
                                                                                     "driver"))
             + f"; {esc(str(result['parameters'].get('elapsed_s', '?')))} s.</p>"]
    if not is_gpu:
        parts.append("<div class='box'><b>Nothing to measure on this machine</b> (no CUDA GPU). This is the "
                     f"model-only report: the model of {esc(MODEL_FALLBACK_GPU)} and the results recorded on "
                     "real GPUs. Run <code>python -m ampere report</code> on a GPU to measure.</div>")
    elif not comparisons:
        parts.append("<div class='box warn'>No figure was measured (see the probes below).</div>")
    else:
        with_ref = [c for c in comparisons if c["reference"] is not None]
        cls = "box warn" if flagged else "box"
        verdict = (f"<b>{len(flagged)} of {len(with_ref)} figures</b> with a recorded reference fall more than "
                   f"{FLAG_THRESHOLD:.0%} below it" if with_ref else
                   "<b>No recorded reference for this GPU yet</b>: the figures are compared with the model only. "
                   "Contribute this report.json to make it the reference (see the Reference check chapter)")
        parts.append(f"<div class='{cls}'>{verdict}. {len(comparisons)} figures measured.</div>")
    if checks:
        parts.append("<h2>Findings, ranked by expected loss of training throughput</h2>")
        parts.append(_table(ranked) if ranked else "<p class='ok'>No configuration check failed or warned.</p>")
        parts.append("<h2>Configuration checks</h2><p class='muted'>Each check: what was read, the verdict and "
                     "why; the chapter <i>The reference check</i> explains every setting.</p>")
        parts.append(_table(check_rows(checks, wide=True), row_class=lambda r: "flag" if r["status"] == "fail"
                            else ""))
    parts.append("<h2>Device</h2>")
    dev_rows = [{"field": k, "value": dev.get(k)} for k in (
        "name", "spec_name", "compute_capability", "gpu_count", "memory_bytes", "sm_count", "l2_bytes",
        "sm_clock_max_hz", "power_limit_w", "ecc_enabled", "pcie_link", "mig_enabled", "mig_instance",
        "driver_version", "torch_version",
        "cuda_version", "cudnn_version", "nccl_version", "cpu_name", "cpu_count")]
    parts.append(_table(dev_rows))
    parts.append("<h2>Probes</h2>" + _table(plan_rows, ["probe", "title", "status", "reason"]))
    if comparisons:
        parts.append("<h2>Measured, against the model and the recorded reference</h2>")
        parts.append(f"<p class='muted'>% of model: measured / datasheet peak (or model bound) of "
                     f"{esc(str(spec_name or 'no catalogued GPU'))}. Reference: median of the values recorded on "
                     f"the same GPU; flagged when more than {FLAG_THRESHOLD:.0%} below it.</p>")
        srows = summary_rows(comparisons)
        parts.append(_table(srows, row_class=lambda r: "flag" if r["status"].startswith("FLAG") else ""))
        if images:
            parts.append(f"<img alt='% of model per figure' src='data:image/png;base64,"
                         f"{_png_base64(comparison_figure(comparisons, f'Measured on {gpu}'))}'>")
        noisy = [c for c in comparisons if c["warnings"]]
        if noisy:
            parts.append("<h3>Measurement warnings</h3><ul>" + "".join(
                f"<li>{esc(c['label'])}: {esc('; '.join(c['warnings']))}</li>" for c in noisy) + "</ul>")
    if config_rows:
        parts.append("<h2>Configuration differences with the reference</h2><p class='muted'>Power limits, "
                     "clocks, MIG, driver and library versions explain most gaps between identical GPUs.</p>")
        parts.append(_table(config_rows))
    parts.append(f"<h2>Model of {esc(spec_name or MODEL_FALLBACK_GPU)}</h2>")
    parts.append(_table(model_rows(spec_name or MODEL_FALLBACK_GPU), ["figure", "model", "source"]))
    if images and not comparisons:
        gpus = ["A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "RTX-A6000", "RTX-A2000-12GB"]
        parts.append("<img alt='model of catalogue GPUs' src='data:image/png;base64,"
                     f"{_png_base64(model_figure(gpus))}'>")
    parts.append("<h2>Recorded results (all GPUs)</h2>")
    if recorded:
        parts.append(_table(recorded_rows(recorded)))
        if images and any(r.get("model") for r in recorded):
            parts.append(f"<img alt='recorded figures as % of their model' src='data:image/png;base64,"
                         f"{_png_base64(recorded_figure(recorded))}'>")
    else:
        parts.append("<p class='muted'>No GPU results are recorded in this version of the package yet.</p>")
    if result["notes"]:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in result["notes"]) + "</ul>")
    parts.append("<p class='muted'>Written by the companion package of <i>Ampere by Experiment</i>; the "
                 "chapter <i>The reference check</i> explains every number.</p></body></html>\n")
    return "".join(parts)

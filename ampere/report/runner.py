"""The run: probe the device, measure what is supported within the time budget, compare, and write
``report.json`` and ``report.html`` (:func:`run`); the ``python -m ampere report`` command (:func:`main`).

Imports torch only through the chapter modules the probes call. Chapter: *The reference check*
(book/reference-check.ipynb).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, TextIO

from .comparison import FLAG_THRESHOLD, compare, config_differences, summary_rows
from .extract import _gpu_id, load_references, recorded_figures
from .output import MODEL_FALLBACK_GPU, check_output_folder, render_html, write_text_atomic
from .probes import PROBES, ProbeContext, plan, probe_names, select_probes
from .progress import Progress
from .references import published_figures

#: Default time budget of the whole run on a GPU (the issue asks for at most 3 minutes).
TIME_BUDGET_S = 170.0


@dataclass
class ReportOutcome:
    """What :func:`run` returns: the result written to report.json, the comparisons and the paths."""

    result: dict[str, Any]
    comparisons: list[dict[str, Any]]
    plan: list[dict[str, Any]]
    json_path: Path
    html_path: Path
    record_path: Path | None = None  # the copy saved for contribution (``record=``)


def mig_scale(figures: list[dict[str, Any]], info: Any) -> tuple[list[dict[str, Any]], str | None]:
    """Inside a MIG instance, scale each figure's model to the slice (``ampere.mig_geometry.instance_peaks``).

    Compute figures (matmul) scale with the slice's SMs, memory figures (DRAM, L2 plateaus) with its
    memory slices; ratios (speedups, the knee) do not change. Returns (figures, note or None).
    """
    spec = info.spec
    if not getattr(info, "mig_instance", None) or spec is None:
        return figures, None
    try:
        from .. import mig_geometry

        peaks = mig_geometry.instance_peaks(spec, info.mig_instance)
    except (ImportError, AttributeError, ValueError) as exc:
        return figures, (f"inside MIG instance {info.mig_instance}: the model is the full GPU's "
                         f"({type(exc).__name__}: {exc})")
    compute = peaks.sms / spec.sm_count
    memory = peaks.hbm_bytes_per_s / spec.hbm_bytes_per_s
    out = []
    for f in figures:
        f = dict(f)
        if f.get("model") is not None and f["probe"] in ("matmul", "hbm-copy", "l2-sweep") and f.get("unit") != "x L2":
            f["model"] *= compute if f["probe"] == "matmul" else memory
            f["model_label"] = f"{f.get('model_label')} x MIG {info.mig_instance} share"
        out.append(f)
    return out, (f"inside MIG instance {info.mig_instance}: models scaled to {peaks['sms']} of {spec.sm_count} SMs "
                 f"and {memory:.3g} of the memory bandwidth")


def _release_gpu_memory() -> None:
    """Return cached blocks to the driver between probes (the all-reduce runs in other processes)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            if torch.cuda.is_available():
                torch.cuda.empty_cache()


def _measurement_ok(fig: dict[str, Any]) -> bool:
    m = fig.get("measurement")
    return m is None or (isinstance(m, dict) and bool(m.get("samples_s")))


def run(out: str | os.PathLike[str], only: Sequence[str] | None = None, skip: Sequence[str] | None = None,
        quick: bool = False, time_budget_s: float = TIME_BUDGET_S, info: Any = None,
        references: Sequence[dict[str, Any]] | None = None, stream: TextIO | None = None,
        images: bool = True, record: str | os.PathLike[str] | None = None) -> ReportOutcome:
    """Probe, measure what is supported, compare, and write ``report.json`` and ``report.html`` in ``out``.

    ``references`` defaults to the results bundled in ``ampere/data``; the published measurements of the
    same GPU (:func:`published_figures`) are references too. ``info`` defaults to
    ``ampere.device.probe()``. ``record``: a folder (e.g. ``ampere/data``) where the JSON is also saved
    under its recorded-result name (``report-<gpu>-<date>.json``), for contributing it. Raises
    ``ValueError`` for an unwritable folder or unknown probe names before measuring anything. A probe that
    fails is reported as failed; the others still run.
    """
    from .. import device as _device
    from .. import results

    if not isinstance(time_budget_s, (int, float)) or not time_budget_s > 0:
        raise ValueError(f"time_budget_s={time_budget_s!r} must be a positive number of seconds")
    chosen = select_probes(only, skip)
    folder = check_output_folder(out)
    record_folder = check_output_folder(record) if record is not None else None
    t0 = time.monotonic()
    info = info or _device.probe()
    references = load_references() if references is None else list(references)
    plan_rows = plan(info, chosen)
    runnable = [p for p, r in zip(chosen, plan_rows) if r["status"] == "run"]
    progress = Progress(len(runnable) + 1, stream=stream)
    figures: list[dict[str, Any]] = []
    notes: list[str] = []
    if not info.is_gpu:
        notes.append(f"Nothing to measure on this machine ({info.label()}): model-only report.")
    for probe, row in zip(chosen, plan_rows):
        if row["status"] != "run":
            continue
        elapsed = time.monotonic() - t0
        if elapsed + probe.estimate_s(quick) > time_budget_s:
            row.update(status="skipped", reason=f"time budget: {elapsed:.0f} s used of {time_budget_s:.0f} s")
            progress.update(f"{probe.name}: skipped (time budget)", advance=1)
            continue
        ctx = ProbeContext(info, quick, lambda text, name=probe.name: progress.update(f"{name}: {text}"),
                           deadline=t0 + time_budget_s)
        progress.update(f"{probe.name}: starting")
        started = time.monotonic()
        try:
            figs = [f for f in probe.run(ctx) if _measurement_ok(f)]
        except Exception as exc:  # one broken probe must not lose the others' figures
            row.update(status="failed", reason=f"{type(exc).__name__}: {exc}"[:300])
            notes.append(f"{probe.name} failed: {type(exc).__name__}: {exc}"[:300])
            figs = []
        else:
            row.update(status="measured", reason=f"{len(figs)} figures in {time.monotonic() - started:.0f} s")
        notes.extend(ctx.notes)
        figures.extend(figs)
        _release_gpu_memory()
        progress.update(f"{probe.name}: {row['status']}", advance=1)
    figures, mig_note = mig_scale(figures, info)
    if mig_note:
        notes.append(mig_note)
    device_dict = info.to_dict()
    gpu = _gpu_id(device_dict) if info.is_gpu else None
    rec_figs = recorded_figures(references)
    ref_figs = rec_figs + (published_figures([gpu]) if gpu else [])
    comparisons = compare(figures, gpu, ref_figs) if gpu else []
    config_rows = config_differences(device_dict, references) if gpu else []
    records = []
    for fig, comp in zip(figures, comparisons):
        rec = {k: fig.get(k) for k in ("probe", "key", "label", "value", "unit", "model", "model_label",
                                        "higher_is_better", "flaggable")}
        rec.update({k: comp[k] for k in ("pct_of_model", "reference", "reference_n", "pct_of_reference", "flag",
                                         "status")})
        if fig.get("measurement"):
            rec["measurement"] = fig["measurement"]
        records.append(rec)
    parameters = {"quick": quick, "only": list(only or []), "skip": list(skip or []),
                  "time_budget_s": time_budget_s, "flag_threshold": FLAG_THRESHOLD,
                  "probes": {r["probe"]: {"status": r["status"], "reason": r["reason"]} for r in plan_rows},
                  "references": len(references), "elapsed_s": round(time.monotonic() - t0, 1)}
    result = results.make_result("report", info, parameters, records, notes)
    result["parameters"]["elapsed_s"] = round(time.monotonic() - t0, 1)
    progress.update("writing report.json and report.html")
    page = render_html(result, comparisons, plan_rows, rec_figs, config_rows, images=images)
    json_path = results.save(result, folder / "report.json")
    html_path = write_text_atomic(folder / "report.html", page)
    record_path = results.save(result, record_folder) if record_folder is not None else None
    progress.close(f"done in {time.monotonic() - t0:.0f} s")
    return ReportOutcome(result, comparisons, plan_rows, json_path, html_path, record_path)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ampere report",
        description="Run every measurement this GPU supports in a short mode and compare each figure with "
                    "the model of the GPU and with the recorded results (flags: more than 10%% below the "
                    "recorded reference of the same GPU). Writes report.json and report.html.")
    p.add_argument("--out", type=Path, default=Path("ampere-report"),
                   help="output folder for report.json and report.html (default: ./ampere-report)")
    p.add_argument("--only", nargs="+", metavar="PROBE", help=f"run only these probes ({', '.join(probe_names())})")
    p.add_argument("--skip", nargs="+", metavar="PROBE", help="do not run these probes")
    p.add_argument("--quick", action="store_true", help="shorter still: one size per measurement")
    p.add_argument("--reference", type=Path, default=None,
                   help="folder of result JSON files to compare with, besides the ones bundled in ampere/data")
    p.add_argument("--record", type=Path, default=None, metavar="DIR",
                   help="also save the JSON in DIR under its recorded-result name (e.g. --record ampere/data)")
    p.add_argument("--time-budget", type=float, default=TIME_BUDGET_S,
                   help=f"skip probes that would not fit in this many seconds (default {TIME_BUDGET_S:.0f})")
    p.add_argument("--list", action="store_true", help="list the probes and whether this machine can run them")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere report [--out DIR] [--only P ...] [--skip P ...] [--quick] [--reference DIR]``.

    Exit codes: 0 written (flags do not change it), 2 bad usage or an output folder that cannot be written.
    """
    from .. import device as _device

    parser = _parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 on --help
        return int(exc.code or 0)
    if args.list:
        info = _device.probe()
        for row in plan(info, PROBES):
            print(f"  {row['probe']:12s} {row['status']:14s} {row['reason'] or row['title']}")
        return 0
    try:
        references = load_references(args.reference)
        outcome = run(args.out, args.only, args.skip, args.quick, args.time_budget, references=references,
                      record=args.record)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    res = outcome.result
    if res["device"].get("backend") != "cuda":
        print(f"No CUDA GPU here: nothing to measure. Model-only report of {MODEL_FALLBACK_GPU} and the "
              f"recorded results written.")
    else:
        flagged = [c for c in outcome.comparisons if c["flag"]]
        for row in summary_rows(outcome.comparisons):
            print(f"  {row['figure'][:44]:44s} {row['measured']:>18s}  {row['% of model']:>6s}% of model  "
                  f"{row['status']}")
        print(f"{len(outcome.comparisons)} figures measured, {len(flagged)} flagged "
              f"(> {FLAG_THRESHOLD:.0%} below the recorded reference)")
    print(f"report written to {outcome.json_path} and {outcome.html_path}")
    if outcome.record_path is not None:
        print(f"recorded result written to {outcome.record_path} (see CONTRIBUTING.md to contribute it)")
    return 0

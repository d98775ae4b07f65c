"""The run: probe the device, measure what is supported within the time budget, compare, and write
``report.json`` and ``report.html`` (:func:`run`); the ``python -m ampere report`` command (:func:`main`).

Imports torch only through the chapter modules the probes call. Chapter: *The reference check*
(book/reference-check.ipynb).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, TextIO

from .. import check
from .arguments import device_info, figure_list, mapping_list, path, result_list
from .arguments import stream as _stream
from .comparison import FLAG_THRESHOLD, compare, config_differences, summary_rows
from .config_checks import findings, judge_all
from .config_facts import read_facts
from .extract import _gpu_id, load_references, recorded_figures
from .output import MODEL_FALLBACK_GPU, check_output_folder, render_html, write_report_set
from .probes import PROBES, ProbeContext, plan, probe_names, select_probes
from .progress import Progress
from .references import published_figures

#: Default time budget of the whole run on a GPU (the issue asks for at most 3 minutes).
TIME_BUDGET_S = 170.0
#: The longest budget a run accepts: a day (a report is minutes; more is a unit mistake).
MAX_TIME_BUDGET_S = 86_400.0


@dataclass
class ReportOutcome:
    """What :func:`run` returns: the result written to report.json, the comparisons and the paths."""

    result: dict[str, Any]
    comparisons: list[dict[str, Any]]
    plan: list[dict[str, Any]]
    json_path: Path
    html_path: Path
    record_path: Path | None = None  # the copy saved for contribution (``record=``)
    text_path: Path | None = None  # report.txt, what the command prints
    checks: list[dict[str, Any]] | None = None  # the configuration checks (config_checks.judge_all)
    findings: list[dict[str, Any]] | None = None  # the checks that failed or warn, ranked


def mig_scale(figures: list[dict[str, Any]], info: Any) -> tuple[list[dict[str, Any]], str | None]:
    """Inside a MIG instance, scale each figure's model to the slice (``ampere.mig_geometry.instance_peaks``).

    Compute figures (matmul) scale with the slice's SMs, memory figures (DRAM, L2 plateaus) with its
    memory slices; ratios (speedups, the knee) do not change. Returns (figures, note or None). ``info`` is
    the :class:`ampere.device.DeviceInfo` of the run.
    """
    figures = figure_list("figures", figures)
    spec = device_info("info", info).spec
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
        if f.get("model") is not None and f.get("probe") in ("matmul", "workload", "hbm-copy", "l2-sweep") \
                and f.get("unit") != "x L2":
            f["model"] *= compute if f["probe"] in ("matmul", "workload") else memory
            f["model_label"] = f"{f.get('model_label')} x MIG {info.mig_instance} share"
        out.append(f)
    return out, (f"inside MIG instance {info.mig_instance}: models scaled to {peaks.sms} of {spec.sm_count} SMs "
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
        images: bool = True, record: str | os.PathLike[str] | None = None,
        facts: dict[str, Any] | None = None) -> ReportOutcome:
    """Check the configuration, probe and measure what is supported, compare, and write the report's files
    (``report.json``, ``report.html``, ``report.txt``) in ``out`` as one set.

    ``references`` defaults to the results bundled in ``ampere/data``; the published measurements of the
    same GPU (:func:`published_figures`) are references too. ``info`` defaults to
    ``ampere.device.probe()``, ``facts`` to :func:`ampere.report.read_facts` of this machine (the
    configuration checks judge them). ``record``: a folder (e.g. ``ampere/data``) where the JSON is also
    saved under its recorded-result name (``report-<gpu>-<date>.json``), for contributing it. Raises
    ``ValueError`` for an unwritable folder, unknown probe names or a time budget that is not a finite
    positive number, before measuring anything. A probe that fails is reported as failed; the others run.
    """
    from .. import device as _device
    from .. import results

    if isinstance(time_budget_s, bool) or not isinstance(time_budget_s, (int, float)) \
            or not math.isfinite(time_budget_s) or not 0 < time_budget_s <= MAX_TIME_BUDGET_S:
        raise ValueError(f"time_budget_s={time_budget_s!r} must be a finite positive number of seconds, at most "
                         f"{MAX_TIME_BUDGET_S:.0f} (a day)")
    quick, images = check.boolean("quick", quick), check.boolean("images", images)
    info = check.optional(device_info, "info", info)
    references = check.optional(result_list, "references", references)
    stream = _stream("stream", stream)
    facts = check.optional(check.mapping, "facts", facts)
    chosen = select_probes(only, skip)
    folder = check_output_folder(path("out", out))
    record_folder = Path(path("record", record)) if record is not None else None
    if record_folder is not None:
        try:
            record_folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"record folder {str(record_folder)!r} cannot be created: {exc.strerror or exc}") \
                from None
        if not os.access(record_folder, os.W_OK):
            raise ValueError(f"record folder {str(record_folder)!r} is not writable")
    t0 = time.monotonic()
    info = info or _device.probe()
    references = load_references() if references is None else list(references)
    plan_rows = plan(info, chosen)
    runnable = [p for p, r in zip(chosen, plan_rows) if r["status"] == "run"]
    progress = Progress(len(runnable) + 2, stream=stream)
    progress.update("reading the configuration (NVML, sysfs, procfs)")
    facts = read_facts(info) if facts is None else facts
    checks = judge_all(facts, info.spec_name if info.is_gpu else None)
    ranked = findings(checks)
    progress.update(f"{len(checks)} configuration checks, {len(ranked)} finding(s)", advance=1)
    figures: list[dict[str, Any]] = []
    notes: list[str] = []
    if not info.is_gpu:
        notes.append(f"No CUDA GPU in this run ({info.label()}): configuration checks and the model only.")
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
        if fig.get("size_bytes") is not None:
            rec["size_bytes"] = fig["size_bytes"]
        rec.update({k: comp[k] for k in ("pct_of_model", "reference", "reference_n", "pct_of_reference", "flag",
                                         "status")})
        if fig.get("measurement"):
            rec["measurement"] = fig["measurement"]
        records.append(rec)
    parameters = {"quick": quick, "only": list(only or []), "skip": list(skip or []),
                  "time_budget_s": time_budget_s, "flag_threshold": FLAG_THRESHOLD,
                  "probes": {r["probe"]: {"status": r["status"], "reason": r["reason"]} for r in plan_rows},
                  "references": len(references)}
    result = results.make_result("report", info, parameters, records, notes)
    result["checks"] = checks
    result["findings"] = ranked
    result["facts"] = facts
    result["parameters"]["elapsed_s"] = round(time.monotonic() - t0, 1)
    results.validate(result)
    progress.update("writing report.json, report.html and report.txt")
    page = render_html(result, comparisons, plan_rows, rec_figs, config_rows, images=images, checks=checks,
                       ranked=ranked)
    text = summary_text(result, comparisons, checks, ranked)
    paths = write_report_set(folder, {"report.json": json.dumps(result, indent=1, allow_nan=False) + "\n",
                                      "report.html": page, "report.txt": text})
    record_path = results.save(result, str(record_folder) + os.sep) if record_folder is not None else None
    progress.close(f"done in {time.monotonic() - t0:.0f} s")
    return ReportOutcome(result, comparisons, plan_rows, paths["report.json"], paths["report.html"], record_path,
                         paths["report.txt"], checks, ranked)


def _wrap(text: str, width: int, indent: str) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent))


def summary_text(result: dict[str, Any], comparisons: Sequence[dict[str, Any]], checks: Sequence[dict[str, Any]],
                 ranked: Sequence[dict[str, Any]], width: int = 88) -> str:
    """What ``python -m ampere report`` prints (and writes to report.txt): the findings ranked by expected
    throughput loss with their fix, every configuration check with its status and why, then the figures.
    ``width`` (40 to 400 characters) wraps the text."""
    from .arguments import result as _result

    result = _result("result", result)
    comparisons = mapping_list("comparisons", comparisons, ("flag",))
    checks = mapping_list("checks", checks, ("name", "status", "title", "what", "observed", "detail"))
    ranked = mapping_list("ranked", ranked, ("rank", "check", "status", "expected loss", "observed", "fix"))
    width = check.bounded_int("width", width, 40, 400, why="characters per line")
    dev = result["device"]
    who = (f"{dev.get('name', '?')} ({dev.get('spec_name') or 'not in the catalogue'})"
           if dev.get("backend") == "cuda" else "this machine (no CUDA GPU)")
    lines = [f"Reference check of {who}, {result['created_utc'][:16]}", ""]
    lines.append(f"Findings, ranked by expected loss of training throughput ({len(ranked)}):")
    for f in ranked:
        lines.append(f"  {f['rank']}. {f['check']} [{f['status']}] expected loss {f['expected loss']}")
        lines.append(_wrap(f"observed: {f['observed']}", width, "       "))
        lines.append(_wrap(f"fix: {f['fix']}", width, "       "))
    if not ranked:
        lines.append("  none: no configuration check failed or warned")
    lines += ["", f"Configuration checks ({len(checks)}):"]
    for r in checks:
        lines.append(f"  {r['name']} [{r['status']}] {r['title']}")
        lines.append(_wrap(f"what: {r['what']}", width, "      "))
        if r["status"] == "n/a" and r["observed"].startswith("no "):
            verdict = r["detail"]  # "not applicable here: <why>"
        else:
            verdict = r["observed"] + (f": {r['detail']}" if r["detail"] else "")
        lines.append(_wrap(f"read: {verdict}", width, "      "))
    lines.append("")
    if dev.get("backend") != "cuda":
        lines.append(_wrap(f"No CUDA GPU: no probe ran. The HTML page shows the model of {MODEL_FALLBACK_GPU} "
                           "and the published references.", width, ""))
    else:
        flagged = [c for c in comparisons if c["flag"]]
        lines.append("Figures measured, against the model and the reference of the same size:")
        for row in summary_rows(comparisons):
            lines.append(f"  {row['figure'][:40]:40s} {row['measured']:>16s} {row['% of model']:>6s}% of model "
                         f" {row['status']}")
        lines.append(f"{len(comparisons)} figures measured, {len(flagged)} flagged (> {FLAG_THRESHOLD:.0%} below "
                     "the recorded reference)")
    return "\n".join(lines) + "\n"


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line on stderr (exit 2) instead of usage + message."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _seconds(text: str) -> float:
    """A finite positive number of seconds (``inf``, ``nan``, 0 and words are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite positive number of seconds")
    return value


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m ampere report",
        description="Check the configuration of this machine (clocks, power, ECC, MIG, PCIe, NUMA, ACS/IOMMU, "
                    "GPUDirect RDMA, NCCL, NVLink, versions, CPU governor), run every measurement this GPU "
                    "supports in a short mode, and compare each figure with the model of the GPU and with "
                    "references of the same size (flag: more than 10 % below the reference of the same GPU). "
                    "Writes report.json, report.html and report.txt as one set.")
    p.add_argument("--out", type=Path, default=Path("ampere-report"),
                   help="output folder, replaced as a whole by each run (default: ./ampere-report)")
    p.add_argument("--only", nargs="+", metavar="PROBE", help=f"run only these probes ({', '.join(probe_names())})")
    p.add_argument("--skip", nargs="+", metavar="PROBE", help="do not run these probes")
    p.add_argument("--quick", action="store_true", help="shorter still: one size per measurement")
    p.add_argument("--reference", type=Path, default=None,
                   help="folder of result JSON files to compare with, besides the ones bundled in ampere/data")
    p.add_argument("--record", type=Path, default=None, metavar="DIR",
                   help="also save the JSON in DIR under its recorded-result name (e.g. --record ampere/data)")
    p.add_argument("--time-budget", type=_seconds, default=TIME_BUDGET_S, metavar="SECONDS",
                   help=f"skip probes that would not fit in this many seconds (default {TIME_BUDGET_S:.0f})")
    p.add_argument("--list", action="store_true", help="list the probes and whether this machine can run them")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere report [--out DIR] [--only P ...] [--skip P ...] [--quick] [--reference DIR]``.

    Prints the findings ranked by expected throughput loss, every configuration check with its status and
    explanation, and the measured figures. Exit codes: 0 written (findings and flags do not change it),
    2 bad usage or an output folder that cannot be written (one line on stderr, never a traceback).
    """
    from .. import device as _device

    argv = list(sys.argv[1:]) if argv is None else check.sequence("argv", argv, check.string, min_len=0,
                                                                  max_len=1000)
    parser = _parser()
    try:
        args = parser.parse_args(argv)
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
    print(outcome.text_path.read_text(encoding="utf-8"), end="")
    print(f"report written to {outcome.json_path.parent}/ (report.json, report.html, report.txt)")
    if outcome.record_path is not None:
        print(f"recorded result written to {outcome.record_path} (see CONTRIBUTING.md to contribute it)")
    return 0

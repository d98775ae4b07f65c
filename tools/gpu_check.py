#!/usr/bin/env python
"""``make gpu-check``: the one command for the first GPU machine the book runs on.

    python tools/gpu_check.py [--benches NAME ...] [--no-book] [--no-report] [--no-copy] [--data DIR]

On a machine with a CUDA GPU it

1. runs every benchmark of ``ampere.cli.BENCHES`` in quick mode (``python -m ampere bench NAME --quick``),
   each into a temporary folder;
2. runs the chapters under nbval (``python -m pytest book/``, the stored outputs are the CPU path and
   the hardware-dependent cells are tagged ``nbval-ignore-output``);
3. runs ``python -m ampere report --record`` (into the temporary folder too) and times it;
4. checks the chapters' acceptance levels, read from the result JSONs, and prints them as a table:

   * bf16 matmul at 8192^3 >= ``architecture.BF16_TARGET_PCT`` % of the dense peak (``bench matmul``);
   * TF32 / strict FP32 >= 5x at 4096^3 (``bench tf32``);
   * HBM copy >= ``hbm.ACCEPT_COPY_PCT`` % of the datasheet and an L2 knee within
     ``hbm.ACCEPT_KNEE_TOLERANCE`` of the reported L2 (``bench hbm``, ``hbm.check_acceptance``);
   * 2:4 sparse >= 1.2x over dense on the largest shape, or the measured reason why not (``bench sparsity``);
   * the report within 3 minutes;

5. copies the results into ``ampere/data/`` (``--data``), and only those whose device is a real CUDA GPU
   (a result's ``device.backend``), under their recorded-result names.

Without a GPU it says so and exits 2, having run nothing. Exit 0: every step ran and no acceptance check
failed (a 2:4 speedup below target with its measured reason counts as explained, not failed); 1 otherwise.
The table and every step's command, exit code and time are also written to ``gpu-check.json`` in the
temporary folder, whose path is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: acceptance levels of issue 14 that no chapter module holds as a constant
TF32_SPEEDUP_TARGET = 5.0
TF32_SIZE = 4096
BF16_SIZE = 8192
SPARSE_SPEEDUP_TARGET = 1.2
REPORT_BUDGET_S = 180.0
#: per-step limits (seconds): a bench in quick mode, the whole book under nbval, the report
BENCH_TIMEOUT_S = 900
BOOK_TIMEOUT_S = 3600
REPORT_TIMEOUT_S = 900

PASS, FAIL, EXPLAINED, NOT_RUN, NOT_APPLICABLE = "PASS", "FAIL", "EXPLAINED", "NOT RUN", "n/a"


@dataclass
class Step:
    """One command gpu-check ran."""

    name: str
    command: list[str]
    returncode: int
    seconds: float
    output_tail: str = ""


@dataclass
class Check:
    """One acceptance level: what it asks, what was measured, and the verdict."""

    name: str
    target: str
    measured: str
    status: str
    detail: str = ""


# ---------------------------------------------------------------------------------------------------------
# acceptance, from result JSONs (pure functions: tested on synthetic results)
# ---------------------------------------------------------------------------------------------------------


def _as_dict(row: Any) -> Mapping[str, Any]:
    """A chapter module's row as a mapping (they return dicts or dataclasses with ``to_dict``)."""
    if isinstance(row, Mapping):
        return row
    return row.to_dict() if hasattr(row, "to_dict") else vars(row)


def check_matmul(result: Mapping[str, Any] | None) -> Check:
    from ampere import architecture

    target = f">= {architecture.BF16_TARGET_PCT:.0f}% of the dense BF16 peak at {BF16_SIZE}^3"
    name = "bf16 matmul"
    if result is None:
        return Check(name, target, "-", NOT_RUN, "no matmul result")
    c = architecture.bf16_peak_check(result.get("records", []), n=BF16_SIZE)
    if c is None:
        return Check(name, target, "-", NOT_RUN, f"no bf16 {BF16_SIZE}^3 record with a catalogue peak")
    c = _as_dict(c)
    return Check(name, target, f"{c['tflops']:.1f} TFLOP/s = {c['pct_of_peak']:.1f}%", PASS if c["met"] else FAIL)


def check_tf32(result: Mapping[str, Any] | None) -> Check:
    from ampere import numerics

    target = f"TF32 / strict FP32 >= {TF32_SPEEDUP_TARGET:g}x at {TF32_SIZE}^3"
    name = "TF32 speedup"
    if result is None:
        return Check(name, target, "-", NOT_RUN, "no tf32 result")
    s = numerics.tf32_speedups(result.get("records", [])).get(TF32_SIZE)
    if s is None:
        return Check(name, target, "-", NOT_RUN, f"no TF32 and FP32 pair at {TF32_SIZE}^3 (no TF32 tensor cores?)")
    return Check(name, target, f"{s:.2f}x", PASS if s >= TF32_SPEEDUP_TARGET else FAIL)


def check_hbm(result: Mapping[str, Any] | None) -> list[Check]:
    from ampere import hbm

    targets = [f"copy >= {hbm.ACCEPT_COPY_PCT:.0f}% of the datasheet",
               f"L2 knee within {hbm.ACCEPT_KNEE_TOLERANCE:.0%} of the reported L2"]
    if result is None:
        return [Check("HBM copy", targets[0], "-", NOT_RUN, "no hbm result"),
                Check("L2 knee", targets[1], "-", NOT_RUN, "no hbm result")]
    out = []
    for row in hbm.check_acceptance(result.get("records", []), result.get("device", {}).get("spec_name")):
        c = _as_dict(row)
        if c["check"].startswith("scale"):
            continue  # shown by the chapter, not an acceptance level
        name = "HBM copy" if c["check"].startswith("copy") else "L2 knee"
        status = (PASS if c["passed"] else FAIL) if c["applies"] else NOT_APPLICABLE
        out.append(Check(name, c["check"], str(c["detail"]), status,
                         "" if c["applies"] else "threshold not meant for this GPU, or no data to judge it"))
    return out


def check_sparsity(result: Mapping[str, Any] | None, bench_output: str = "") -> Check:
    from ampere import sparsity

    target = f">= {SPARSE_SPEEDUP_TARGET:g}x over dense on the largest shape, or the measured reason"
    name = "2:4 sparse"
    if result is None:
        reason = " ".join(line.strip() for line in bench_output.strip().splitlines()[-3:])
        if "2:4 backend" in bench_output or "No working 2:4 backend" in bench_output:
            return Check(name, target, "not measured", EXPLAINED, reason)
        return Check(name, target, "-", NOT_RUN, reason or "no sparsity result")
    rows = [r for r in map(_as_dict, sparsity.sweep_table(dict(result))) if r["backend"] != "torch.sparse CSR"]
    if not rows:
        return Check(name, target, "-", NOT_RUN, "no 2:4 configuration in the result")
    largest = max(r["flops"] for r in rows)
    best = max((r for r in rows if r["flops"] == largest), key=lambda r: r["speedup"])
    measured = f"{best['speedup']:.2f}x ({best['shape']}, {best['dtype']}, {best['backend']})"
    if best["speedup"] >= SPARSE_SPEEDUP_TARGET:
        return Check(name, target, measured, PASS)
    return Check(name, target, measured, EXPLAINED,
                 "; ".join(sparsity.verdict(dict(result), target=SPARSE_SPEEDUP_TARGET)))


def check_report(step: Step | None) -> Check:
    target = f"python -m ampere report within {REPORT_BUDGET_S / 60:.0f} min"
    if step is None:
        return Check("report", target, "-", NOT_RUN, "skipped")
    measured = f"{step.seconds:.0f} s"
    if step.returncode != 0:
        return Check("report", target, measured, FAIL, f"exit code {step.returncode}")
    return Check("report", target, measured, PASS if step.seconds <= REPORT_BUDGET_S else FAIL)


def acceptance(results: Mapping[str, Mapping[str, Any]], report: Step | None = None,
               outputs: Mapping[str, str] | None = None) -> list[Check]:
    """Every acceptance check from the bench results (benchmark name -> result dict) and the report step."""
    outputs = outputs or {}
    return [check_matmul(results.get("matmul")), check_tf32(results.get("tf32")), *check_hbm(results.get("hbm")),
            check_sparsity(results.get("sparsity"), outputs.get("sparsity", "")), check_report(report)]


def table(checks: Sequence[Check]) -> str:
    """The checks as a markdown table."""
    lines = ["| check | target | measured | status | detail |", "|---|---|---|---|---|"]
    for c in checks:
        detail = c.detail.replace("|", "/").replace("\n", " ")
        lines.append(f"| {c.name} | {c.target} | {c.measured} | {c.status} | {detail} |")
    return "\n".join(lines)


def passed(checks: Sequence[Check], steps: Sequence[Step]) -> bool:
    """Every step exited 0 and no check failed or went unrun (explained and not-applicable are fine)."""
    return all(s.returncode == 0 for s in steps) and all(c.status in (PASS, EXPLAINED, NOT_APPLICABLE)
                                                         for c in checks)


# ---------------------------------------------------------------------------------------------------------
# running it
# ---------------------------------------------------------------------------------------------------------


def run_step(name: str, command: list[str], timeout_s: float) -> Step:
    """Run ``command`` from the repository root, streaming nothing, keeping the tail of its output."""
    print(f"gpu-check: {name}: {' '.join(command)}", flush=True)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
        code, text = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        code = 124
        out = exc.stdout or ""
        text = (out.decode() if isinstance(out, bytes) else out) + f"\n(timed out after {timeout_s:.0f} s)"
    seconds = time.monotonic() - t0
    print(f"gpu-check: {name}: exit {code} in {seconds:.0f} s", flush=True)
    return Step(name, command, code, seconds, text[-4000:])


def _load(path: Path) -> dict[str, Any] | None:
    from ampere import results

    try:
        return results.load(path)
    except (OSError, ValueError):
        return None


def copy_gpu_results(paths: Sequence[Path], data_dir: Path) -> list[Path]:
    """Save into ``data_dir`` the results (of ``paths``) measured on a real CUDA GPU; return what was written."""
    from ampere import results

    written = []
    for path in paths:
        res = _load(path)
        if res is None or res.get("device", {}).get("backend") != "cuda":
            continue
        written.append(results.save(res, str(data_dir) + os.sep))
    return written


def main(argv: Sequence[str] | None = None, *, runner: Callable[[str, list[str], float], Step] = run_step) -> int:
    from ampere import cli, device

    p = argparse.ArgumentParser(prog="tools/gpu_check.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--benches", nargs="+", default=None, choices=sorted(cli.BENCHES),
                   help="which benchmarks (default: all)")
    p.add_argument("--no-book", action="store_true", help="do not run the chapters under nbval")
    p.add_argument("--no-report", action="store_true", help="do not run python -m ampere report")
    p.add_argument("--no-copy", action="store_true", help="leave the results in the temporary folder only")
    p.add_argument("--data", type=Path, default=ROOT / "ampere" / "data",
                   help="where GPU results are recorded (default: ampere/data)")
    args = p.parse_args(argv)

    info = device.probe()
    if info.backend != "cuda":
        print(f"gpu-check: no CUDA GPU on this machine ({info.label()}): nothing was run. "
              "make gpu-check measures a real GPU; on a CPU, use make test.", file=sys.stderr)
        return 2
    print(f"gpu-check on {info.label()} ({info.spec_name or 'not in the catalogue'})", flush=True)
    work = Path(tempfile.mkdtemp(prefix="ampere-gpu-check-"))
    py = sys.executable
    steps: list[Step] = []
    results_by_name: dict[str, dict[str, Any]] = {}
    outputs: dict[str, str] = {}
    paths: list[Path] = []
    for name in args.benches or list(cli.BENCHES):
        out = work / f"{name}.json"
        step = runner(f"bench {name}", [py, "-m", "ampere", "bench", name, "--quick", "--out", str(out)],
                      BENCH_TIMEOUT_S)
        steps.append(step)
        outputs[name] = step.output_tail
        res = _load(out) if out.exists() else None
        if res is not None:
            results_by_name[name] = res
            paths.append(out)
    if not args.no_book:
        steps.append(runner("book under nbval", [py, "-m", "pytest", "-q", "-p", "no:xdist", "book/"],
                            BOOK_TIMEOUT_S))
    report = None
    if not args.no_report:
        record = work / "record"
        report = runner("report", [py, "-m", "ampere", "report", "--out", str(work / "report"),
                                   "--record", str(record)], REPORT_TIMEOUT_S)
        steps.append(report)
        paths += sorted(record.glob("*.json")) if record.is_dir() else []
    checks = acceptance(results_by_name, report, outputs)
    written = [] if args.no_copy else copy_gpu_results(paths, args.data)
    ok = passed(checks, steps)
    print("\n" + table(checks) + "\n")
    for s in steps:
        print(f"  {s.name:24s} exit {s.returncode:3d}  {s.seconds:7.0f} s")
        if s.returncode != 0:
            print("    " + "\n    ".join(s.output_tail.strip().splitlines()[-15:]))
    for w in written:
        print(f"recorded: {w}")
    summary = {"device": info.to_dict(), "checks": [asdict(c) for c in checks], "steps": [asdict(s) for s in steps],
               "recorded": [str(w) for w in written], "passed": ok}
    (work / "gpu-check.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    print(f"gpu-check: {'PASSED' if ok else 'FAILED'}; details in {work / 'gpu-check.json'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

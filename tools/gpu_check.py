#!/usr/bin/env python
"""``make gpu-check``: the one command for a borrowed GPU machine, sized to one short lease.

    python tools/gpu_check.py --plan [--budget-s 420]          # the steps, their estimates, the total
    python tools/gpu_check.py --budget-s 420 --out DIR [...]     # run them; every result lands in DIR

The machines this project borrows give 15 minutes in all (start included), at most 10 minutes a command,
and no network: their Python has torch and triton, anything else travels as wheels. So the check installs
nothing and never reaches the network; it plans its steps with time estimates and runs only what fits the
budget (``--budget-s``, default 420 s), in this order:

1. the environment: which modules the steps need are importable (``numpy``, ``pytest``, ``nbval``, ...);
   a step whose modules are missing is skipped and says which;
2. every benchmark of ``ampere.cli.BENCHES`` in quick mode (``python -m ampere bench NAME --quick``);
3. ``python -m ampere report --quick --record``: the configuration checks, the probes, the comparison;
4. as many GPU chapters under nbval as the budget still allows, the reference check first.

Each step gets a timeout of what is left of the budget, so the whole run stays within it. Everything goes
into one folder (``--out``): ``benches/<name>.json`` and ``.log``, ``report/``, ``record/``,
``nbval/<chapter>.log``, ``acceptance.md`` and ``gpu-check.json`` (the device as what it is: name,
catalogue entry, architecture, compute capability; every step's command, exit code and time; the
acceptance table). Results are copied into ``ampere/data`` only on request (``--record-into``), and only
those measured on a CUDA GPU.

The acceptance levels: BF16 matmul at 8192^3 >= ``architecture.BF16_TARGET_PCT`` % of the dense peak;
TF32 / strict FP32 >= 5x at 4096^3; HBM copy and the L2 knee (``hbm.check_acceptance``); 2:4 sparse
>= 1.2x or the measured reason; the report within its budget. Without a GPU, ``--plan`` still prints the
plan (exit 0) and a run says so and exits 2, having run nothing. Exit 0: every step that ran exited 0 and
no acceptance check failed; 1 otherwise.
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
#: the whole check on one lease: 15 minutes with the machine's start, 10 minutes at most per command
DEFAULT_BUDGET_S = 420.0
#: the report's own budget inside gpu-check (--quick), seconds
REPORT_TIME_BUDGET_S = 90.0
#: estimated seconds of each step on one A100/H100-class GPU, process start (~8 s) included; estimates from
#: the quick modes' warm-up and time limits, to be replaced by the times gpu-check.json records
ENV_ESTIMATE_S = 5.0
BENCH_ESTIMATES_S: dict[str, float] = {"matmul": 45.0, "tf32": 25.0, "hbm": 30.0, "kernels": 60.0,
                                       "sparsity": 30.0, "mig": 20.0, "collectives": 15.0, "megatron": 30.0}
REPORT_ESTIMATE_S = REPORT_TIME_BUDGET_S + 15.0
#: GPU chapters under nbval, most useful first, with their estimated seconds on a GPU machine
CHAPTER_ESTIMATES_S: dict[str, float] = {"reference-check": 40.0, "architecture": 60.0, "hbm": 60.0,
                                         "tf32": 60.0, "sparsity": 60.0, "kernels": 90.0, "megatron": 90.0,
                                         "mig": 60.0, "nvlink": 60.0}
#: modules each kind of step imports (none of them is installed: a missing one skips the step)
NEEDS: dict[str, tuple[str, ...]] = {"bench": ("ampere", "numpy", "torch"), "report": ("ampere", "numpy", "torch"),
                                     "nbval": ("ampere", "numpy", "torch", "pytest", "nbval", "matplotlib")}

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


@dataclass
class Planned:
    """One step of the plan: what runs, its estimate, and whether the budget lets it run."""

    name: str
    kind: str  # "env", "bench", "report" or "nbval"
    command: list[str]
    estimate_s: float
    status: str = "run"  # "run", or why not: "over budget", "needs <module>"
    output: str = ""  # the file (or folder) of the out folder it writes


def missing_modules(names: Sequence[str]) -> list[str]:
    """The modules of ``names`` this Python cannot import (found without importing them)."""
    import importlib.util

    out = []
    for n in names:
        try:
            if importlib.util.find_spec(n) is None:
                out.append(n)
        except (ImportError, ValueError):
            out.append(n)
    return out


def make_plan(out: Path, budget_s: float = DEFAULT_BUDGET_S, benches: Sequence[str] | None = None,
              chapters: Sequence[str] | None = None, book: bool = True, report: bool = True,
              python: str | None = None, available: Callable[[Sequence[str]], list[str]] = missing_modules
              ) -> list[Planned]:
    """The steps in order with their estimates; those that would pass ``budget_s`` are marked "over budget"
    and those whose modules are missing "needs ..." (nothing is ever installed)."""
    from ampere import cli

    py = python or sys.executable
    # in process: which modules each step needs are importable (recorded in gpu-check.json)
    steps = [Planned("environment", "env", [], ENV_ESTIMATE_S, output="gpu-check.json")]
    for name in benches or list(cli.BENCHES):
        steps.append(Planned(f"bench {name}", "bench",
                             [py, "-m", "ampere", "bench", name, "--quick", "--out", str(out / "benches" / f"{name}.json")],
                             BENCH_ESTIMATES_S.get(name, 30.0), output=f"benches/{name}.json"))
    if report:
        steps.append(Planned("report", "report", [py, "-m", "ampere", "report", "--quick", "--time-budget",
                                                  f"{REPORT_TIME_BUDGET_S:.0f}", "--out", str(out / "report"),
                                                  "--record", str(out / "record")], REPORT_ESTIMATE_S, output="report/"))
    if book:
        for ch in chapters or list(CHAPTER_ESTIMATES_S):
            steps.append(Planned(f"nbval {ch}", "nbval", [py, "-m", "pytest", "-q", "-p", "no:xdist",
                                                         f"book/{ch}.ipynb"],
                                 CHAPTER_ESTIMATES_S.get(ch, 60.0), output=f"nbval/{ch}.log"))
    used = 0.0
    for st in steps:
        missing = available(NEEDS.get(st.kind, ()))
        if missing:
            st.status = f"needs {', '.join(missing)}"
        elif used + st.estimate_s > budget_s:
            st.status = "over budget"
        else:
            used += st.estimate_s
    return steps


def plan_table(steps: Sequence[Planned], budget_s: float) -> str:
    """The plan as text: one line per step with its estimate, then the total of what will run."""
    lines = [f"{'step':24s} {'estimate':>9s}  status", "-" * 60]
    for st in steps:
        lines.append(f"{st.name:24s} {st.estimate_s:7.0f} s  {st.status}")
    total = sum(st.estimate_s for st in steps if st.status == "run")
    lines += ["-" * 60, f"{'total (steps that run)':24s} {total:7.0f} s  of a {budget_s:.0f} s budget",
              "(estimates; nothing is installed and nothing reaches the network)"]
    return "\n".join(lines)


def run_step(name: str, command: list[str], timeout_s: float) -> Step:
    """Run ``command`` from the repository root, streaming nothing, keeping the tail of its output."""
    print(f"gpu-check: {name}: {' '.join(command)}", flush=True)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
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


def device_record(info: Any) -> dict[str, Any]:
    """The GPU as what it is: driver name, catalogue entry, architecture and compute capability."""
    from ampere import specs

    spec = info.spec
    return {"name": info.name, "spec_name": info.spec_name, "architecture": spec.architecture if spec else None,
            "compute_capability": list(info.compute_capability) if info.compute_capability else None,
            "gpu_count": info.gpu_count, "driver": info.driver_version, "torch": info.torch_version,
            "cuda": info.cuda_version, "catalogue": spec is not None and spec.name in specs.names()}


def _parser() -> argparse.ArgumentParser:
    from ampere import cli

    p = argparse.ArgumentParser(prog="tools/gpu_check.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--plan", action="store_true", help="print the steps, their estimates and the total, then exit")
    p.add_argument("--budget-s", type=float, default=DEFAULT_BUDGET_S,
                   help=f"seconds for the whole run (default {DEFAULT_BUDGET_S:.0f})")
    p.add_argument("--out", type=Path, default=Path("gpu-check-out"), help="the one folder every result goes to")
    p.add_argument("--benches", nargs="+", default=None, choices=sorted(cli.BENCHES),
                   help="which benchmarks (default: all)")
    p.add_argument("--chapters", nargs="+", default=None, choices=list(CHAPTER_ESTIMATES_S),
                   help="which chapters under nbval, in this order (default: by usefulness)")
    p.add_argument("--no-book", action="store_true", help="do not run chapters under nbval")
    p.add_argument("--no-report", action="store_true", help="do not run python -m ampere report")
    p.add_argument("--record-into", type=Path, default=None, metavar="DIR",
                   help="also copy the GPU results into DIR under their recorded names (e.g. ampere/data)")
    return p


def main(argv: Sequence[str] | None = None, *, runner: Callable[[str, list[str], float], Step] = run_step) -> int:
    from ampere import device

    args = _parser().parse_args(argv)
    if not (args.budget_s > 0 and args.budget_s < float("inf")):
        print(f"gpu-check: --budget-s {args.budget_s} must be a finite positive number of seconds", file=sys.stderr)
        return 2
    out = args.out.resolve()
    steps = make_plan(out, args.budget_s, args.benches, args.chapters, not args.no_book, not args.no_report)
    if args.plan:
        print(plan_table(steps, args.budget_s))
        return 0
    info = device.probe()
    if info.backend != "cuda":
        print(f"gpu-check: no CUDA GPU on this machine ({info.label()}): nothing was run. "
              "make gpu-check measures a real GPU; on a CPU, use make test (or --plan).", file=sys.stderr)
        return 2
    gpu = device_record(info)
    print(f"gpu-check on {info.label()}: {gpu['spec_name'] or 'not in the catalogue'}, "
          f"{gpu['architecture'] or 'architecture unknown'}; every result in {out}", flush=True)
    for sub in ("benches", "nbval", "record"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    done: list[Step] = []
    results_by_name: dict[str, dict[str, Any]] = {}
    outputs: dict[str, str] = {}
    paths: list[Path] = []
    report_step = None
    for st in steps:
        left = args.budget_s - (time.monotonic() - t0)
        if st.status == "run" and st.estimate_s > left:
            st.status = "over budget"
        if st.status != "run" or st.kind == "env":
            continue
        step = runner(st.name, st.command, max(5.0, left))
        done.append(step)
        if st.kind == "bench":
            name = st.name.split()[1]
            outputs[name] = step.output_tail
            (out / "benches" / f"{name}.log").write_text(step.output_tail, encoding="utf-8")
            res = _load(out / st.output) if (out / st.output).exists() else None
            if res is not None:
                results_by_name[name] = res
                paths.append(out / st.output)
        elif st.kind == "report":
            report_step = step
            paths += sorted((out / "record").glob("*.json"))
        elif st.kind == "nbval":
            (out / st.output).write_text(step.output_tail, encoding="utf-8")
    checks = acceptance(results_by_name, report_step, outputs)
    written = copy_gpu_results(paths, args.record_into) if args.record_into else []
    ok = passed(checks, done)
    text = table(checks)
    (out / "acceptance.md").write_text(text + "\n", encoding="utf-8")
    print("\n" + text + "\n")
    for s_ in done:
        print(f"  {s_.name:24s} exit {s_.returncode:3d}  {s_.seconds:7.0f} s")
        if s_.returncode != 0:
            print("    " + "\n    ".join(s_.output_tail.strip().splitlines()[-15:]))
    for st in steps:
        if st.status != "run":
            print(f"  {st.name:24s} not run: {st.status}")
    for w in written:
        print(f"recorded: {w}")
    env = {kind: missing_modules(mods) for kind, mods in NEEDS.items()}
    summary = {"gpu": gpu, "device": info.to_dict(), "budget_s": args.budget_s, "missing_modules": env,
               "elapsed_s": round(time.monotonic() - t0, 1), "plan": [asdict(st) for st in steps],
               "checks": [asdict(c) for c in checks], "steps": [asdict(s_) for s_ in done],
               "recorded": [str(w) for w in written], "passed": ok}
    (out / "gpu-check.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    print(f"gpu-check: {'PASSED' if ok else 'FAILED'}; everything in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

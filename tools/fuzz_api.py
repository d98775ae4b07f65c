#!/usr/bin/env python
"""Call every public function and class of ampere with bad input, each call in a forked child with a time
limit, and tabulate what came back.

    python tools/fuzz_api.py                     # the core modules (check, launch, cli, timing, results, ...)
    python tools/fuzz_api.py --all               # every module and package of ampere
    python tools/fuzz_api.py ampere.megatron     # some modules or packages
    python tools/fuzz_api.py --all --details     # and list every call that was not a clear refusal

For each public function, class (its constructor) and public method of a class it can build, the fuzzer
starts from a valid call (a hand-written baseline for the core, else the defaults plus guesses tried until
one call succeeds) and replaces one argument at a time with a bad value of the argument's kind: 0, -1,
NaN, inf, 10**12, a bool, a string, None, an unknown name, an empty list, a string instead of a list.
Outcomes, per call:

  clear     ValueError/TypeError whose message names the argument (or a CLI exit code != 0)
  unclear   ValueError/TypeError that does not name the argument
  other     any other exception type (AttributeError, ZeroDivisionError, OverflowError, KeyError, ...)
  hang      no answer within --timeout seconds (the child and its process group are killed)
  silent    returned an answer for an input that is not valid
  accepted  returned, and the input is valid for this argument (the default value, or listed in ACCEPT
            below with the reason)

The goal is 0 hangs, 0 silent, 0 other and few unclear. ``--json`` writes every call's outcome.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import math
import os
import pickle
import re
import select
import signal
import sys
import tempfile
import time
import types
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: the core modules (task "robust"); the rest of the package is the chapters and the shared models
CORE = ["ampere.check", "ampere.launch", "ampere.cli", "ampere.benchcli", "ampere.timing", "ampere.results",
        "ampere.book", "ampere.plots", "ampere.views", "ampere.tables", "ampere.glue", "ampere.device"]

NAN, INF = float("nan"), float("inf")
HUGE = 10 ** 12

#: (callable qualname, argument, kind) -> why a call that returns is right. "*" matches any kind.
ACCEPT: dict[tuple[str, str, str], str] = {
    **{(f"ampere.check.{f}", "name", "*"): "the label printed in the message, any object prints"
       for f in ("integer", "positive_int", "nonneg_int", "bounded_int", "real", "finite", "positive", "nonneg",
                 "bounded", "fraction", "boolean", "string", "choice", "one_of", "names", "gpu", "gpus",
                 "sequence", "mapping", "function", "optional", "at_most")},
    ("ampere.check.at_most", "why", "*"): "free text printed in the message",
    ("ampere.check.bounded_int", "why", "*"): "free text printed in the message",
    ("ampere.check.bounded", "why", "*"): "free text printed in the message",
    ("ampere.check.real", "minimum", "negative"): "a lower bound may be negative",
    ("ampere.check.real", "minimum", "huge"): "a lower bound may be large (then the value is refused)",
    ("ampere.check.real", "maximum", "huge"): "an upper bound may be large",
    ("ampere.check.real", "maximum", "zero"): "an upper bound may be zero (then the value is refused)",
    ("ampere.check.real", "maximum", "negative"): "an upper bound may be negative (then the value is refused)",
    ("ampere.check.integer", "minimum", "negative"): "a lower bound may be negative",
    ("ampere.check.integer", "minimum", "zero"): "a lower bound may be zero",
    ("ampere.check.integer", "maximum", "huge"): "an upper bound may be large",
    ("ampere.check.positive_int", "maximum", "huge"): "an upper bound may be large",
    ("ampere.check.nonneg_int", "maximum", "huge"): "an upper bound may be large",
    ("ampere.check.positive", "maximum", "huge"): "an upper bound may be large",
    ("ampere.check.nonneg", "maximum", "huge"): "an upper bound may be large",
    ("ampere.check.bounded_int", "hi", "huge"): "an upper bound may be large",
    ("ampere.check.bounded_int", "lo", "negative"): "a lower bound may be negative",
    ("ampere.check.bounded_int", "lo", "zero"): "a lower bound may be zero",
    ("ampere.check.bounded", "hi", "huge"): "an upper bound may be large",
    ("ampere.check.bounded", "lo", "negative"): "a lower bound may be negative",
    ("ampere.check.bounded", "lo", "zero"): "a lower bound may be zero",
    ("ampere.check.bounded", "lo", "huge"): "then the value is refused",
    ("ampere.check.at_most", "limit", "huge"): "a limit may be large",
    ("ampere.check.at_most", "limit", "inf"): "no limit",
    ("ampere.check.string", "max_len", "huge"): "a length limit may be large",
    ("ampere.check.sequence", "max_len", "huge"): "a length limit may be large",
    ("ampere.check.names", "max_len", "huge"): "a length limit may be large",
    ("ampere.check.gpus", "max_len", "huge"): "a length limit may be large",
    ("ampere.check.sequence", "min_len", "zero"): "an empty list allowed on request",
    ("ampere.check.names", "min_len", "zero"): "an empty list allowed on request",
    ("ampere.check.gpus", "min_len", "zero"): "an empty list allowed on request",
    ("ampere.check.one_of", "value", "unknown-case"): "the baseline is lower case; refused the same way",
    ("ampere.check.choice", "value", "unknown-case"): "idem",
    ("ampere.check.optional", "value", "none"): "None is what optional admits",
    ("ampere.check.sequence", "item", "none"): "no element check",
    ("ampere.tables.markdown_table", "columns", "empty"): "no columns given: the first row's keys",
    ("ampere.tables.show_md", "text", "empty"): "an empty Markdown cell is valid",
    ("ampere.tables.show_html", "text", "empty"): "an empty HTML output is valid",
    ("ampere.plots.gpu_color", "name", "*"): "any device name gets a colour (unknown: the neutral grey)",
    ("ampere.views.cite_label", "key", "unknown"): "a key outside the bibliography prints as itself",
    ("ampere.views.Point", "what", "empty"): "free text",
    ("ampere.views.Point", "source", "empty"): "a model-only point has no source",
    ("ampere.views.Point", "unit", "empty"): "a ratio has no unit",
    ("ampere.views.table", "model_label", "empty"): "free text",
    ("ampere.views.table", "real_label", "empty"): "free text",
    ("ampere.views.show", "title", "empty"): "a figure may have no title",
    ("ampere.results.Record", "where", "empty"): "optional provenance detail",
    ("ampere.glue.glue", "value", "*"): "any value can be glued",
    ("ampere.book.device_note", "info", "*"): "any object: the note reads what it has",
    ("ampere.device.pci_bus_id", "props", "*"): "documented: None when the object lacks the PCI fields",
    ("ampere.timing.benchmark", "label", "empty"): "an empty label becomes the function's name",
    ("ampere.timing.benchmark", "warmup_s", "zero"): "no warm-up on request",
    ("ampere.timing.benchmark", "min_time_s", "zero"): "no minimum time on request",
    ("ampere.timing.Measurement", "label", "empty"): "free text",
    ("ampere.results.make_result", "notes", "empty"): "no notes",
    ("ampere.results.make_result", "records", "empty"): "a benchmark that found nothing to measure says so",
    ("ampere.results.data_files", "sub", "empty"): "the data folder itself",
    ("ampere.results.data_files", "sub", "unknown"): "documented: an absent folder has no files",
    ("ampere.benchcli.bench_parser", "description", "empty"): "free text",
    ("ampere.benchcli.finish_bench", "summary", "empty"): "free text",
}

ACCEPT.update({
    ("ampere.launch.RankContext", "rank", "zero"): "rank 0 is the first rank",
    ("ampere.timing.Measurement", "device", "unknown"): "free text: the device the samples came from",
    ("ampere.results.Record", "gpu", "unknown"): "a record's GPU may be a system name (\"Selene (DGX A100)\")",
    ("ampere.results.Record", "gpu", "unknown-case"): "idem",
    ("ampere.results.make_result", "notes", "unknown-element"): "notes are free text",
    ("ampere.results.save", "path", "unknown"): "a new file name is a valid place to write",
    ("ampere.results.write_atomic", "path", "unknown"): "idem",
    ("ampere.results.write_atomic", "text", "empty"): "an empty file is a valid file",
    ("ampere.plots.save", "path", "unknown"): "a new file name is a valid place to write",
    ("ampere.results.records", "gpu", "unknown-case"): "catalogue names match in any case (the house rule)",
    ("ampere.results.recorded", "gpu", "unknown-case"): "idem",
    ("ampere.check.gpu", "value", "unknown-case"): "idem",
    ("ampere.check.gpus", "value", "unknown-case"): "idem",
    ("ampere.glue.glue", "name", "unknown"): "any identifier names a glued value",
    ("ampere.views.Point", "gpu", "unknown"): "a device or system name outside the catalogue is shown as given",
    ("ampere.views.Point", "gpu", "unknown-case"): "idem",
    ("ampere.views.point", "gpu", "unknown"): "idem",
    ("ampere.views.point", "what", "empty"): "free text",
    ("ampere.views.point", "unit", "empty"): "a ratio has no unit",
    ("ampere.views.point", "scale", "huge"): "a unit conversion may be large (bytes to TB and back)",
    ("ampere.views.best", "records", "empty"): "ordering nothing gives nothing",
    **{(q, f, k): "a model or a real value may be any finite number; None makes a one-sided row"
       for q in ("ampere.views.Point", "ampere.views.point") for f in ("model", "real")
       for k in ("zero", "negative", "huge", "none")},
    **{("ampere.views.ratio_text", "r", k): "any finite ratio prints; None is an empty cell"
       for k in ("zero", "negative", "huge", "none")},
    **{("ampere.device.DeviceInfo", f, "unknown"): "free text reported by the driver or the system"
       for f in ("name", "mig_instance", "pcie_link", "torch_version", "cuda_version", "nccl_version",
                 "driver_version", "cpu_name")},
    ("ampere.device.DeviceInfo", "python_version", "string"): "free text",
    ("ampere.device.DeviceInfo", "memory_bytes", "huge"): "10**12 bytes is below the 16 TiB bound: a possible device",
    ("ampere.device.DeviceInfo", "sm_clock_max_hz", "huge"): "idem for 10**12 Hz? no: bounded at 1e10",
    ("ampere.device.sparse_2to4_backends", "compute_capability", "none"): "documented: no GPU, no backend",
    ("ampere.benchcli.Progress", "after_s", "zero"): "show the line at once",
    ("ampere.benchcli.Progress", "stream", "*"): "any object with write(); None is stderr",
})
ACCEPT.pop(("ampere.device.DeviceInfo", "sm_clock_max_hz", "huge"))

ACCEPT.update({
    **{("ampere.check.finite", "value", k): "any finite number" for k in ("zero", "negative", "huge")},
    ("ampere.check.nonneg_int", "value", "zero"): "zero is >= 0",
    ("ampere.check.nonneg", "value", "zero"): "zero is >= 0",
    ("ampere.check.fraction", "value", "zero"): "zero is in [0, 1]",
    ("ampere.check.string", "value", "unknown"): "any string",
    **{("ampere.check.at_most", "value", k): "below the limit" for k in ("zero", "negative", "float")},
})

ACCEPT.update({("ampere.timing.Measurement.rate", "amount", k): "any amount of work (FLOP, bytes) >= 0"
               for k in ("zero", "huge")})

#: validators: their message names the field they were told (their ``name`` argument)
VALIDATORS = {f"ampere.check.{f}" for f in ("integer", "positive_int", "nonneg_int", "bounded_int", "real", "finite",
                                            "positive", "nonneg", "bounded", "fraction", "boolean", "string",
                                            "choice", "one_of", "names", "gpu", "gpus", "sequence", "mapping",
                                            "function", "optional", "at_most")} | {"ampere.plots.axes"}

#: documented exceptions of the environment (not of the input): "accepted" when the input is valid
ENVIRONMENT: dict[str, str] = {
    "ampere.device.nvml_handle": "RuntimeError",  # documented: NVML is not usable on this machine
}

#: why an argument is not fuzzed (its bad values are not values: a module object, free text)
SKIP_ARGS: dict[tuple[str, str], str] = {
    ("ampere.device.sparse_2to4_backends", "torch"): "the torch module (or a double of it)",
    ("ampere.plots.axes", "name"): "a constant of the calling code, not user input",
    ("ampere.plots.axes", "method"): "a constant of the calling code, not user input",
    **{(f"ampere.check.{f}", a): "a constant of the calling code, not user input (tests/properties/test_check.py)"
       for f in ("integer", "positive_int", "nonneg_int", "bounded_int", "real", "finite", "positive", "nonneg",
                 "bounded", "fraction", "boolean", "string", "choice", "one_of", "names", "gpu", "gpus",
                 "sequence", "mapping", "function", "optional", "at_most")
       for a in ("name", "minimum", "maximum", "lo", "hi", "why", "strict_min", "allow_inf", "allow_zero",
                 "allow_empty", "max_len", "min_len", "allowed", "ignore_case", "unique", "item", "helper",
                 "limit")},
}

SKIP_CALLABLES: dict[str, str] = {
    "ampere.benchcli.BenchParser": "argparse.ArgumentParser's constructor; its parse_args is tested in tests/",
}


def _bad_values(value: Any, annotation: str) -> list[tuple[str, Any]]:
    """The bad values for an argument whose valid value is ``value`` (its default or the baseline's)."""
    numbers_ = [("zero", 0), ("negative", -1), ("nan", NAN), ("inf", INF), ("huge", HUGE), ("bool", True),
                ("string", "1"), ("none", None)]
    if isinstance(value, bool):
        return [("string", "false"), ("int", 1), ("none", None)]
    if isinstance(value, int):
        return [(k, v) for k, v in numbers_ if k not in ("nan", "inf")] + [("float", 2.5)]
    if isinstance(value, float):
        return [(k, float(v) if isinstance(v, int) and not isinstance(v, bool) else v) for k, v in numbers_]
    if isinstance(value, str):
        out = [("unknown", "NoSuchName"), ("empty", ""), ("int", 1), ("none", None)]
        if value and value.lower() != value:
            out.append(("unknown-case", value.lower()))
        return out
    if isinstance(value, (list, tuple)):
        out = [("empty", type(value)()), ("string-not-list", "abc"), ("none", None), ("int", 3)]
        if value and isinstance(value[0], str):
            out.append(("unknown-element", type(value)(["NoSuchName"])))
        elif value and isinstance(value[0], (int, float)) and not isinstance(value[0], bool):
            out += [("negative-element", type(value)([-1])), ("nan-element", type(value)([NAN]))]
        return out
    if isinstance(value, dict):
        return [("list", []), ("string", "x"), ("none", None)]
    if value is None:
        a = annotation.lower()
        if "int" in a or "float" in a:
            return [("negative", -1), ("nan", NAN), ("huge", HUGE), ("bool", True), ("string", "1")]
        if "str" in a:
            return [("unknown", "NoSuchName"), ("empty", ""), ("int", 1)]
        return [("int", -1), ("string", "NoSuchName"), ("object", object())]
    if callable(value):
        return [("int", 1), ("none", None), ("string", "x")]
    return [("none", None), ("int", 1), ("string", "x")]


# ----------------------------------------------------------------------------------------------------
# Baselines: a valid call of each core callable (arguments without defaults, and cheap settings).
# ----------------------------------------------------------------------------------------------------

def core_baselines(tmp: Path) -> dict[str, dict[str, Any]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ampere import benchcli, device, results, views

    info = device.probe(force="cpu")
    res = results.make_result("matmul", info, {"quick": True}, [{"params": {"n": 8}, "derived": {"x_s": 1.0}}],
                              created_utc="2026-01-01T00:00:00Z")
    out_dir = tmp / "out"
    out_dir.mkdir(exist_ok=True)
    saved = results.save(res, tmp / "saved.json")
    rec = results.Record(kind="published", benchmark="matmul", gpu="A100-SXM4-80GB",
                         figures={"bf16_tflop_per_s": 250.0}, source="bekman2024mle", where="table", id="x")
    pt = views.Point("q", "A100-SXM4-80GB", model=1.0, real=0.9, unit="TFLOP/s", source="s")
    _, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="l")
    bench_args = benchcli.bench_parser("matmul", "d").parse_args(["--out", str(out_dir) + "/", "--device", "cpu"])
    fig = plt.figure()
    noop = lambda: None  # noqa: E731
    return {
        "ampere.check.integer": {"name": "n", "value": 3, "minimum": 1, "maximum": 10},
        "ampere.check.positive_int": {"name": "n", "value": 3, "maximum": 10},
        "ampere.check.nonneg_int": {"name": "n", "value": 3, "maximum": 10},
        "ampere.check.bounded_int": {"name": "n", "value": 3, "lo": 1, "hi": 10},
        "ampere.check.real": {"name": "x", "value": 1.5, "minimum": 1.0, "maximum": 2.0},
        "ampere.check.finite": {"name": "x", "value": 1.5},
        "ampere.check.positive": {"name": "x", "value": 1.5, "maximum": 10.0},
        "ampere.check.nonneg": {"name": "x", "value": 1.5, "maximum": 10.0},
        "ampere.check.bounded": {"name": "x", "value": 1.5, "lo": 1.0, "hi": 2.0},
        "ampere.check.fraction": {"name": "x", "value": 0.5},
        "ampere.check.boolean": {"name": "b", "value": True},
        "ampere.check.string": {"name": "s", "value": "text"},
        "ampere.check.choice": {"name": "c", "value": "bf16", "allowed": ["bf16", "fp16"]},
        "ampere.check.one_of": {"name": "c", "value": "BF16", "allowed": ["BF16", "FP16"]},
        "ampere.check.names": {"name": "c", "value": ["bf16"], "allowed": ["bf16", "fp16"]},
        "ampere.check.gpu": {"name": "gpu", "value": "A100-SXM4-80GB"},
        "ampere.check.gpus": {"name": "gpus", "value": ["A100-SXM4-80GB"]},
        "ampere.check.sequence": {"name": "xs", "value": [1.0, 2.0], "item": __import__("ampere.check").check.positive},
        "ampere.check.mapping": {"name": "m", "value": {"a": 1}},
        "ampere.check.function": {"name": "f", "value": noop},
        "ampere.check.optional": {"helper": __import__("ampere.check").check.positive, "name": "x", "value": 1.5,
                                  "maximum": 10.0},
        "ampere.check.at_most": {"name": "n", "value": 3, "limit": 10, "why": "a test limit"},
        "ampere.launch.spawn": {"fn": repr, "world_size": 2, "timeout_s": 60.0},
        "ampere.launch.default_backend": {"world_size": 2},
        "ampere.launch.RankContext": {"rank": 0, "world_size": 2, "backend": "gloo"},
        "ampere.launch.max_wall_s": {"timeout_s": 5.0},
        "ampere.cli.main": {"argv": ["bench", "--list"]},
        "ampere.benchcli.bench_parser": {"name": "matmul", "description": "d"},
        "ampere.benchcli.check_out": {"out": str(out_dir) + "/", "benchmark": "matmul"},
        "ampere.benchcli.finish_bench": {"result": res, "args": bench_args, "summary": "s"},
        "ampere.benchcli.probe": {"args": bench_args},
        "ampere.benchcli.Progress": {"label": "step", "after_s": 0.5},
        "ampere.benchcli.fail": {"message": "no GPU"},
        "ampere.plots.axes": {"name": "ax", "value": ax, "method": "plot"},
        "ampere.timing.benchmark": {"fn": noop, "min_time_s": 0.01, "max_time_s": 0.05},
        "ampere.timing.summarize": {"samples_s": [1.0, 2.0, 3.0]},
        "ampere.timing.Measurement": {"label": "m", "samples_s": [1.0, 2.0]},
        "ampere.timing.l2_flusher": {"device": "cpu"},
        "ampere.results.make_result": {"benchmark": "matmul", "device": info, "parameters": {"q": 1},
                                       "records": [{"params": {"n": 8}}], "notes": ["n"]},
        "ampere.results.validate": {"result": res},
        "ampere.results.save": {"result": res, "path": str(tmp / "x.json")},
        "ampere.results.load": {"path": str(saved)},
        "ampere.results.recorded": {},
        "ampere.results.records": {"benchmark": "matmul", "gpu": "A100-SXM4-80GB", "kind": "published"},
        "ampere.results.table": {"name": "sources"},
        "ampere.results.default_filename": {"result": res},
        "ampere.results.provenance": {"result": res},
        "ampere.results.write_atomic": {"path": str(tmp / "w.txt"), "text": "t"},
        "ampere.results.data_files": {"sub": "published"},
        "ampere.results.Record": {"kind": "published", "benchmark": "matmul", "gpu": "A100-SXM4-80GB",
                                  "figures": {"bf16_tflop_per_s": 250.0}, "source": "bekman2024mle", "where": "t"},
        "ampere.book.show_table": {"rows": [{"a": 1}]},
        "ampere.book.setup": {"measures": "this chapter times matmuls"},
        "ampere.book.device_note": {"info": info, "measures": "this chapter times matmuls"},
        "ampere.plots.gpu_color": {"name": "A100-SXM4-80GB"},
        "ampere.plots.figure": {"size": "full"},
        "ampere.plots.provenance_note": {"ax": ax, "text": "t"},
        "ampere.plots.save": {"fig": fig, "path": str(tmp / "f.png")},
        "ampere.plots.legend_outside": {"ax": ax},
        "ampere.views.Point": {"what": "q", "gpu": "A100-SXM4-80GB", "model": 1.0, "real": 0.9, "unit": "TFLOP/s",
                               "kind": "published", "source": "s"},
        "ampere.views.source_text": {"rec": rec},
        "ampere.views.cite_label": {"key": "bekman2024mle"},
        "ampere.views.point": {"rec": rec, "figure": "bf16_tflop_per_s", "what": "q", "model": 312.0,
                               "unit": "TFLOP/s"},
        "ampere.views.best": {"records": [rec]},
        "ampere.views.table": {"points": [pt]},
        "ampere.views.plot": {"ax": ax, "points": [pt]},
        "ampere.views.show": {"points": [pt], "title": "t"},
        "ampere.views.ratio_text": {"r": 0.5},
        "ampere.tables.markdown_table": {"rows": [{"a": 1}], "columns": ["a"], "formats": {"a": "d"}},
        "ampere.tables.show_md": {"text": "t"},
        "ampere.tables.show_html": {"text": "t"},
        "ampere.glue.glue": {"name": "x", "value": 1.0},
        "ampere.device.DeviceInfo": {"backend": "cpu", "name": "cpu"},
        "ampere.device.probe": {"force": "cpu"},
        "ampere.device.tf32_enabled": {"enabled": True},
        "ampere.device.nvml_handle": {"index": 0},
        "ampere.device.pci_bus_id": {"props": types.SimpleNamespace(pci_domain_id=0, pci_bus_id=1, pci_device_id=0)},
        "ampere.device.sparse_2to4_backends": {"torch": types.SimpleNamespace(), "compute_capability": (8, 0)},
        "ampere.device.torch_device": {"info": info},
    }


#: guesses for required arguments outside the core, by argument name (tried in order)
GUESSES: dict[str, list[Any]] = {
    "gpu": ["A100-SXM4-80GB"], "spec": ["A100-SXM4-80GB"], "name": ["A100-SXM4-80GB", "bf16", "all_reduce"],
    "gpus": [["A100-SXM4-80GB"]], "precision": ["bf16"], "dtype": ["bf16"], "op": ["all_reduce"],
    "profile": ["1g.10gb"], "model": ["gpt3-175b", "A100-SXM4-80GB"], "size_bytes": [2 ** 20],
    "sizes_bytes": [[2 ** 20]], "world_size": [8], "n": [8], "m": [1024], "k": [1024], "nodes": [4],
}


def _guess(param: inspect.Parameter) -> list[Any]:
    if param.name in GUESSES:
        return GUESSES[param.name]
    a = str(param.annotation).lower()
    if "bool" in a:
        return [True]
    if "int" in a:
        return [8, 1024]
    if "float" in a:
        return [1.0, 1e9]
    if "str" in a:
        return ["A100-SXM4-80GB", "bf16"]
    if "sequence" in a or "list" in a:
        return [[1024], ["A100-SXM4-80GB"]]
    return []


# ----------------------------------------------------------------------------------------------------
# Running one call in a forked child
# ----------------------------------------------------------------------------------------------------

def _child(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any], wfd: int, cwd: str) -> None:
    os.setpgid(0, 0)
    os.chdir(tempfile.mkdtemp(dir=cwd))  # a fresh folder per call: no call sees another's files
    devnull = os.open(os.devnull, os.O_RDWR)
    stderr_r, stderr_w = os.pipe()
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        value = fn(*args, **kwargs)
        if isinstance(value, types.GeneratorType) or hasattr(value, "__enter__") and hasattr(value, "gen"):
            with value:  # a context manager validates on entry
                pass
        msg = ("return", type(value).__name__, "")
    except SystemExit as exc:
        msg = ("exit", type(exc).__name__, str(exc.code))
    except BaseException as exc:  # noqa: BLE001 - that is the point
        kind = "raise-vt" if isinstance(exc, (ValueError, TypeError)) else "raise"
        if isinstance(exc, OSError) and not isinstance(exc, (ValueError, TypeError)):
            kind = "raise-os"
        msg = (kind, type(exc).__name__, str(exc)[:500])
    os.write(wfd, pickle.dumps(msg))
    os.close(wfd)
    os._exit(0)


def run_call(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any], timeout: float, cwd: str) -> tuple:
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        try:
            _child(fn, args, kwargs, wfd, cwd)
        finally:
            os._exit(1)
    os.close(wfd)
    data = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([rfd], [], [], left)
        if not ready:
            break
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        data += chunk
    os.close(rfd)
    hung = not data and time.monotonic() >= deadline
    for sig in (signal.SIGKILL,):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    _, status = os.waitpid(pid, 0)
    if hung:
        return ("hang", "", f"no answer within {timeout:g} s")
    if not data:
        return ("crash", "", f"child died with status {status}")
    return pickle.loads(data)


def _names_field(message: str, field: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(field)}(?![A-Za-z0-9])", message, re.IGNORECASE) is not None


#: free-text arguments: any non-empty string is valid (an unknown name is not a mistake there)
FREE_TEXT = {"message", "label", "title", "what", "unit", "source", "where", "note", "id", "description", "summary", "text",
             "measures", "model_label", "real_label", "why", "date"}
#: path arguments: a missing file may raise FileNotFoundError (an OSError naming the path), and a new
#: file name ("NoSuchName") is a valid place to write
PATH_FIELDS = {"path", "out"}


def classify(qual: str, field: str, kind: str, result: tuple, is_main: bool, named: str | None = None) -> str:
    """The outcome of one call; ``field`` is the argument changed, ``named`` the name its message must say
    (a validator's ``name`` argument; else the argument itself)."""
    what, typ, msg = result
    named = named or field
    if what == "hang":
        return "hang"
    if what == "crash":
        return "other"
    if what == "exit":
        return "clear" if is_main and msg not in ("0", "None") else "other"
    if what == "raise-vt":
        return "clear" if _names_field(msg, named) else "unclear"
    if what == "raise-os" and field in PATH_FIELDS:
        return "clear"
    if what in ("raise", "raise-os"):
        return "accepted" if ENVIRONMENT.get(qual) == typ and kind in ("zero",) else "other"
    if is_main and typ == "int":
        return "clear" if msg != "0" else "silent"
    if (qual, field, kind) in ACCEPT or (qual, field, "*") in ACCEPT:
        return "accepted"
    if field in FREE_TEXT and kind in ("unknown", "unknown-case"):
        return "accepted"
    return "silent"


# ----------------------------------------------------------------------------------------------------
# Targets
# ----------------------------------------------------------------------------------------------------

def _public(module_name: str) -> list[tuple[str, Any]]:
    module = importlib.import_module(module_name)
    out = []
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name, None)
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        if (getattr(obj, "__module__", "") or "").split(".")[0] != "ampere":
            continue
        out.append((f"{obj.__module__}.{obj.__qualname__}", obj))
    return out


def _modules(selection: list[str]) -> list[str]:
    import ampere

    if selection == ["--all"]:
        return [f"ampere.{m}" for m in sorted(ampere._SUBMODULES)]
    return selection


def _kwargs_for(obj: Any, baseline: dict[str, Any] | None) -> tuple[dict[str, Any], list[inspect.Parameter]] | None:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
              and p.name != "self"]
    kwargs = dict(baseline or {})
    for p in params:
        if p.name not in kwargs and p.default is not inspect.Parameter.empty:
            kwargs.setdefault(p.name, p.default) if baseline is None else None
    return kwargs, params


def _find_baseline(obj: Any, params: list[inspect.Parameter], timeout: float, cwd: str) -> dict[str, Any] | None:
    required = [p for p in params if p.default is inspect.Parameter.empty]
    choices = [_guess(p) for p in required]
    if any(not c for c in choices):
        return None
    for attempt in range(3):
        kw = {p.name: c[min(attempt, len(c) - 1)] for p, c in zip(required, choices)}
        if run_call(obj, (), kw, timeout, cwd)[0] == "return":
            return kw
    return None


def _methods(cls: type, instance: Any, qual: str) -> list[tuple[str, Any]]:
    """Public methods defined on ``cls`` itself (classmethods too), bound to ``instance``."""
    out = []
    for name, member in vars(cls).items():
        if name.startswith("_") or isinstance(member, property):
            continue
        if isinstance(member, (types.FunctionType, classmethod, staticmethod)):
            out.append((f"{qual}.{name}", getattr(instance, name)))
    return out


def fuzz(modules: list[str], timeout: float, core_only_baselines: bool) -> list[dict[str, Any]]:
    tmp = Path(tempfile.mkdtemp(prefix="ampere-fuzz-"))
    baselines = {**core_baselines(tmp), **method_baselines(tmp)}
    rows: list[dict[str, Any]] = []
    seen: set[int] = set()
    targets: list[tuple[str, str, Any]] = []
    for module_name in modules:
        for qual, obj in _public(module_name):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            targets.append((".".join(obj.__module__.split(".")[:2]), qual, obj))  # the defining module
    i = 0
    while i < len(targets):
        module_name, qual, obj = targets[i]
        i += 1
        if qual in SKIP_CALLABLES:
            rows.append({"module": module_name, "callable": qual, "field": "", "kind": "", "outcome": "skipped",
                         "detail": SKIP_CALLABLES[qual]})
            continue
        found = _kwargs_for(obj, None)
        if found is None:
            continue
        defaults, params = found
        if qual in baselines:
            base = baselines[qual]
        else:
            guessed = None if core_only_baselines else _find_baseline(obj, params, timeout, str(tmp))
            if guessed is None and any(p.default is inspect.Parameter.empty for p in params):
                rows.append({"module": module_name, "callable": qual, "field": "", "kind": "",
                             "outcome": "no-baseline", "detail": "no valid call found"})
                continue
            base = guessed or {}
        if isinstance(obj, type):
            try:
                instance = obj(**base)
            except Exception:
                instance = None
            if instance is not None:
                targets[i:i] = [(module_name, q, m) for q, m in _methods(obj, instance, qual)]
        rows += _fuzz_one(module_name, qual, obj, base, params, timeout, str(tmp))
    return rows


def _fuzz_one(module_name: str, qual: str, obj: Any, base: dict[str, Any], params: list[inspect.Parameter],
              timeout: float, cwd: str) -> list[dict[str, Any]]:
    rows = []
    is_main = qual.endswith(".main") or qual.endswith("_main")
    for p in params:
        if (qual, p.name) in SKIP_ARGS:
            continue
        valid = base.get(p.name, p.default)
        if valid is inspect.Parameter.empty:
            continue
        for kind, bad in _bad_values(valid, str(p.annotation)):
            if p.default is not inspect.Parameter.empty and _same(bad, p.default):
                continue
            kwargs = {k: v for k, v in base.items()}
            kwargs[p.name] = bad
            result = run_call(obj, (), kwargs, timeout, cwd)
            # a validator's message names the field it was told (its ``name`` argument), not "value"
            field = base["name"] if (p.name == "value" and qual in VALIDATORS) else p.name
            outcome = classify(qual, p.name, kind, result, is_main, field)
            rows.append({"module": module_name, "callable": qual, "field": p.name, "kind": kind,
                         "outcome": outcome, "detail": f"{result[1]}: {result[2]}"[:300]})
    return rows


def method_baselines(tmp: Path) -> dict[str, dict[str, Any]]:
    """Valid calls of the core's public methods that take arguments."""
    from ampere import device, results, timing

    info = device.probe(force="cpu")
    meas = timing.Measurement(label="m", samples_s=[1.0, 2.0])
    rec = results.published()[0]
    return {
        "ampere.timing.Measurement.rate": {"amount": 1e9, "statistic": "median"},
        "ampere.timing.Measurement.from_dict": {"d": meas.to_dict()},
        "ampere.results.Record.figure": {"name": next(iter(rec.figures))},
        "ampere.results.Record.from_dict": {"d": rec.to_dict(), "kind": "published"},
        "ampere.device.DeviceInfo.from_dict": {"d": info.to_dict()},
    }


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)))
    except Exception:
        return False


OUTCOMES = ("clear", "accepted", "unclear", "other", "hang", "silent", "no-baseline", "skipped")


def table(rows: list[dict[str, Any]], by: str = "module") -> str:
    counts: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        counts[r[by]][r["outcome"]] += 1
    lines = [f"| {by} | calls | " + " | ".join(OUTCOMES) + " |", "|---|---:|" + "---:|" * len(OUTCOMES)]
    total: Counter = Counter()
    for key in sorted(counts):
        c = counts[key]
        total.update(c)
        calls = sum(v for k, v in c.items() if k not in ("no-baseline", "skipped"))
        lines.append(f"| {key} | {calls} | " + " | ".join(str(c.get(o, 0)) for o in OUTCOMES) + " |")
    calls = sum(v for k, v in total.items() if k not in ("no-baseline", "skipped"))
    lines.append(f"| **total** | {calls} | " + " | ".join(str(total.get(o, 0)) for o in OUTCOMES) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("modules", nargs="*", help="modules or packages (default: the core)")
    p.add_argument("--all", action="store_true", help="every module and package of ampere")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per call (default 10)")
    p.add_argument("--details", action="store_true", help="list every unclear, other, hang and silent call")
    p.add_argument("--json", help="write every call's outcome to this file")
    p.add_argument("--by", choices=("module", "callable"), default="module")
    args = p.parse_args(argv)
    os.environ.setdefault("AMPERE_DEVICE", "cpu")
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    modules = _modules(["--all"]) if args.all else (args.modules or CORE)
    t0 = time.monotonic()
    rows = fuzz(modules, args.timeout, core_only_baselines=not (args.all or args.modules))
    print(table(rows, args.by))
    print(f"\n{len(rows)} rows, {time.monotonic() - t0:.0f} s")
    if args.details:
        for r in rows:
            if r["outcome"] in ("unclear", "other", "hang", "silent", "no-baseline"):
                print(f"{r['outcome']:8s} {r['callable']}({r['field']}={r['kind']}): {r['detail']}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    bad = sum(1 for r in rows if r["outcome"] in ("hang", "silent", "other"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

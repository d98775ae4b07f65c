"""The core's side of tools/fuzz_api.py: valid calls of every public function of the core, and the inputs
that are valid although they look bad (each with its reason). Kept apart so the fuzzer stays readable."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

#: the core modules (task "robust"); the rest of the package is the chapters and the shared models
CORE = ["ampere.check", "ampere.launch", "ampere.cli", "ampere.benchcli", "ampere.timing", "ampere.results",
        "ampere.book", "ampere.plots", "ampere.views", "ampere.tables", "ampere.glue", "ampere.device"]

#: (callable qualname, argument, kind) -> why a call that returns is right. "*" matches any kind.
ACCEPT: dict[tuple[str, str, str], str] = {
    ("ampere.check.one_of", "value", "unknown-case"): "the baseline is lower case; refused the same way",
    ("ampere.check.choice", "value", "unknown-case"): "idem",
    ("ampere.check.optional", "value", "none"): "None is what optional admits",
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

# ---- ch-spmig (ampere.sparsity, ampere.mig): one block ---------------------------------------------------
def _spmig_records() -> dict[tuple[str, str, str], str]:
    """The chapters' result records check every field by its annotation (ampere/<chapter>/fields.py); what a
    record may hold by design (0 where a count or a time may be zero, free text, empty collections, large
    sizes and rates) is listed, with the reason, by ``fields.accepted``."""
    import dataclasses

    from ampere import mig, sparsity
    from ampere.mig import fields as mig_fields
    from ampere.sparsity import fields as sparsity_fields

    out: dict[tuple[str, str, str], str] = {}
    for pkg, fields in ((mig, mig_fields), (sparsity, sparsity_fields)):
        for name in pkg.__all__:
            obj = getattr(pkg, name)
            if isinstance(obj, type) and dataclasses.is_dataclass(obj) and hasattr(obj, "FIELD_RULES"):
                out.update(fields.accepted(obj))
    return out


ACCEPT.update(_spmig_records())
ACCEPT.update({
    ("ampere.sparsity.llm.amdahl", "fraction", "zero"): "no GEMM share: the layer gains nothing (1.0)",
    ("ampere.sparsity.llm.amdahl", "speedup", "huge"): "an unbounded GEMM speedup gives Amdahl's cap 1/(1-f)",
    ("ampere.sparsity.llm.gemm_speedup_needed", "fraction", "zero"):
        "documented: inf when no GEMM speedup reaches the target",
    ("ampere.sparsity.llm.gemm_speedup_needed", "target", "huge"): "idem",
    **{("ampere.mig.profile_tables.profile_from_device_name", "device_name", k):
       "documented: a device name without ' MIG <profile>' (or None) names no profile, None" for k in
       ("unknown", "empty", "none")},
    ("ampere.mig.tenants.Workload", "name", "unknown"): "free text: the tenant's name",
    **{("ampere.mig.tenants.Workload", f, k): "a request may move no bytes of one kind, or many"
       for f in ("flops", "hbm_bytes", "pcie_bytes") for k in ("zero", "huge")},
    ("ampere.mig.tenants.Workload", "rate_per_s", "huge"): "any positive arrival rate (the queue saturates)",
    ("ampere.mig.tenants.Workload", "rate_per_s", "none"): "documented: None is a closed loop",
    ("ampere.mig.tenants.SimConfig", "switch_s", "zero"): "a context switch that costs nothing is a valid what-if",
    ("ampere.mig.tenants.SimConfig", "warmup_s", "zero"): "no warm-up: every request counts",
    **{("ampere.mig.nvml.nvml_mig_report", f, k): "free text reported by CUDA or the environment"
       for f in ("device_name", "visible_devices") for k in ("unknown", "empty")},
    ("ampere.mig.costs.serving_costs", "demand_per_s", "huge"): "a demand no option meets: every row says so",
    **{(f"ampere.{p}.bench_main", "argv", "empty"): "no options: the benchmark with its defaults"
       for p in ("sparsity.bench", "mig.measure")},
    ("ampere.sparsity.measure.linear_sweep", "unstructured_shape", "none"):
        "documented: None skips the unstructured CSR comparison",
    **{("ampere.sparsity.measure.linear_sweep", f, "zero"): "no warm-up, or no minimum timing window: valid (the "
       "harness still takes its minimum number of samples)" for f in ("warmup_s", "min_time_s")},
})
# ---- end of ch-spmig -------------------------------------------------------------------------------------


#: validators: their message names the field they were told (their ``name`` argument)
VALIDATORS = {f"ampere.check.{f}" for f in ("integer", "positive_int", "nonneg_int", "bounded_int", "real", "finite",
                                            "positive", "nonneg", "bounded", "fraction", "boolean", "string",
                                            "choice", "one_of", "names", "gpu", "gpus", "sequence", "mapping",
                                            "function", "device", "optional", "at_most")} | {"ampere.plots.axes"}

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
                 "sequence", "mapping", "function", "device", "optional", "at_most")
       for a in ("name", "minimum", "maximum", "lo", "hi", "why", "strict_min", "allow_inf", "allow_zero",
                 "allow_empty", "max_len", "min_len", "allowed", "ignore_case", "unique", "item", "helper",
                 "limit")},
}

SKIP_CALLABLES: dict[str, str] = {
    "ampere.benchcli.BenchParser": "argparse.ArgumentParser's constructor; its parse_args is tested in tests/",
}


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
        "ampere.check.device": {"name": "device", "value": "cpu"},
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

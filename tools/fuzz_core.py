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

# --- ampere.architecture and ampere.numerics (phase 3, ch-arch): inputs that are valid although they look bad
_A, _N = "ampere.architecture", "ampere.numerics"
ACCEPT.update({
    **{(f"{_A}.die.{f}", a, "zero"): why for f in ("harvest_yield", "harvest_shortfall")
       for a, why in (("needed", "needing no working unit is certain (yield 1, shortfall 0)"),
                      ("unit_defect_probability", "a perfect process: every unit works"))},
    (f"{_A}.cache.l2_read_bandwidth", "size_bytes", "huge"): "a working set far beyond L2 reads at the DRAM plateau",
    **{(f"{_A}.roofline.{f}", a, "huge"): "any positive rate, size or intensity: the roofline formulas hold"
       for f, a in (("ridge_point", "bytes_per_s"), ("matmul_intensity", "m"), ("matmul_intensity", "n"),
                    ("matmul_intensity", "k"), ("attainable_flops", "intensity"),
                    ("attainable_flops", "bytes_per_s"), ("roofline_curve", "hi"),
                    ("roofline_curve", "bytes_per_s"))},
    (f"{_A}.execution.divergence_expected", "p_taken", "zero"): "a branch never taken is a probability",
    **{(f"{_A}.execution.divergence_expected", a, k): "an empty branch (0 cycles) or a long one is valid"
       for a in ("cycles_taken", "cycles_other") for k in ("zero", "huge")},
    (f"{_A}.execution.issue_utilization", "warps_per_sm", "zero"): "an SM with no resident warp issues nothing: 0",
    **{(f"{_A}.measure.matmul_sweep", a, "zero"): "no warm-up / no minimum time on request (as timing.benchmark)"
       for a in ("warmup_s", "min_time_s")},
    **{(f"{_N}.measure.measure_throughput", a, "zero"): "no warm-up / no minimum time on request (as timing.benchmark)"
       for a in ("warmup_s", "min_time_s")},
    (f"{_N}.torch_rounding.torch_agreement", "seed", "zero"): "seed 0 is a seed",
    **{(q, "seed", "huge"): "any non-negative integer seeds the generator (torch.Generator: bounded at 2**63 - 1)"
       for q in (f"{_N}.torch_rounding.torch_agreement", f"{_N}.matmul_error.error_vs_k",
                 f"{_N}.matmul_error.accumulation_error_curve", f"{_N}.dynamic_range.gradient_like_values",
                 f"{_N}.measure.compare_tf32_with_emulation", f"{_N}.measure.tf32_conversion_probe")},
    (f"{_N}.matmul_error.probabilistic_confidence", "k", "huge"): "a dot product of 10**12 terms has a confidence",
    **{(f"{_N}.dynamic_range.gradient_like_values", a, k): "a decade exponent: 10**0 and 10**-1 are magnitudes"
       for a in ("log10_low", "log10_high", "log10_mean") for k in ("zero", "negative")},
    (f"{_N}.throughput.printed_interval", "value", "huge"): "any positive printed number",
})

# --- specs, hbm, kernels (group B, p3-hbmk): inputs that look bad but are valid, each with its reason ---------
_HBM, _K = "ampere.hbm", "ampere.kernels"
_LARGE = "a result may hold any large finite figure (10**12 bytes, B/s or s is a real size); bounded at 1e30"
ACCEPT.update({
    ("ampere.specs.catalogue.match", "device_name", "none"): "documented: no device name, no spec (None)",
    ("ampere.specs.catalogue.match", "device_name", "empty"): "documented: an empty device name matches nothing",
    ("ampere.specs.catalogue.match", "device_name", "unknown"): "documented: a device the catalogue lacks gives None",
    **{(f"{_HBM}.{q}", f, "unknown"): "free text" for q, f in (
        ("roofline.Op", "name"), ("roofline.DecodeBound", "model"), ("measure.Capacity", "device"),
        ("acceptance.Acceptance", "check"), ("acceptance.Acceptance", "detail"))},
    **{(f"{_HBM}.{q}", f, "empty"): "free text, may be empty" for q, f in (
        ("roofline.Op", "description"), ("measure.Capacity", "note"), ("acceptance.Acceptance", "detail"))},
    **{(f"{_HBM}.{q}", f, "huge"): _LARGE for q, fs in (
        ("roofline.Op", ("flops", "bytes")),
        ("roofline.DecodeBound", ("weight_bytes", "kv_bytes", "bytes_per_step", "memory_time_s", "compute_time_s",
                                  "tokens_per_s")),
        ("l2_model.Knee", ("l2_plateau_bytes_per_s", "dram_plateau_bytes_per_s", "knee_bytes", "ratio_to_l2",
                           "l2_bytes")),
        ("measure.Capacity", ("total_bytes", "datasheet_bytes"))) for f in fs},
    **{(f"{_HBM}.{q}", f, "huge"): "a bandwidth or an intensity may be large: the bound is compute's (checked <= 1e18)"
       for q, f in (("roofline.attainable_flops", "intensity"), ("roofline.attainable_flops", "bytes_per_s"),
                    ("roofline.decode_bound", "bytes_per_s"))},
    (f"{_HBM}.roofline.Op", "flops", "zero"): "an operation may do no arithmetic (a copy)",
    (f"{_HBM}.roofline.DecodeBound", "context", "zero"): "no KV cache: the bound of the weights alone",
    (f"{_HBM}.roofline.DecodeBound", "kv_bytes", "zero"): "no KV cache at context 0",
    (f"{_HBM}.measure.Capacity", "free_bytes", "zero"): "a full GPU has no free memory",
    **{(f"{_HBM}.measure.Capacity", f, "none"): "documented: None where the driver reports nothing (a CPU)"
       for f in ("total_bytes", "free_bytes", "datasheet_bytes")},
    **{(f"{_HBM}.measure.{q}", "min_time_s", "zero"): "no minimum time on request (timing.benchmark's rule)"
       for q in ("measure_bandwidth", "measure_l2_sweep", "measure_strided_copy")},
    **{(f"{_HBM}.measure.measure_strided_copy", f, "empty"): "the aligned copy is always measured: an empty list "
       "leaves only the other list's patterns" for f in ("strides", "offsets_bytes")},
    **{(f"{_K}.{q}", f, "zero"): "documented: a kernel may use no registers or no shared memory"
       for q in ("occupancy.occupancy", "views.occupancy_rows")
       for f in ("registers_per_thread", "shared_bytes_per_block")},
    (f"{_K}.launch_order.program_tile", "pid", "zero"): "program 0 is the first program",
    **{(f"{_K}.l2_residency.{q}", f, "zero"): "documented: no stream, or no persisting window"
       for q in ("L2Persistence", "l2_persistence") for f in ("streaming_bytes", "carveout_bytes")},
    (f"{_K}.fusion.FusionTraffic", "fused_bytes", "zero"): "a chain whose tensors are all free (size 0) moves nothing",
    **{(f"{_K}.{q}", f, "huge"): _LARGE for q, fs in (
        ("tiling.TileCost", ("intensity_flop_per_byte", "shared_bytes", "accumulator_registers")),
        ("l2_residency.L2Persistence", ("working_set_bytes", "streaming_bytes", "carveout_bytes", "hbm_bytes_default",
                                        "hbm_bytes_persisting")),
        ("l2_residency.l2_persistence", ("working_set_bytes", "streaming_bytes")),
        ("launch_order.LaunchTraffic", ("l2_bytes", "hbm_bytes", "compulsory_bytes")),
        ("fusion.FusionTraffic", ("unfused_bytes",))) for f in fs},
    **{(f"{_K}.{q}", f, "huge"): "a bandwidth may be large (1 TB/s is an HBM); checked <= 1e18 B/s" for q, f in (
        ("tiling.bytes_in_flight", "bandwidth_bytes_per_s"), ("launch_order.LaunchTraffic.time_s", "l2_bytes_per_s"),
        ("fusion.FusionTraffic.saved_s", "bytes_per_s"))},
    # found with hand-written baselines for the callables the fuzzer cannot guess (the result types, the views)
    **{("ampere.specs.model.MemoryFigure", f, k): "a printed capture, its driver and where it is: free text"
       for f in ("printed", "driver") for k in ("unknown", "none")},
    ("ampere.specs.model.MemoryFigure", "where", "empty"): "optional provenance detail",
    ("ampere.specs.model.MemoryFigure", "bytes", "none"): "documented: no citable figure (the note says so)",
    ("ampere.specs.model.MemoryFigure", "bytes", "zero"): "a driver may reserve nothing",
    ("ampere.specs.model.MemoryFigure", "bytes", "huge"): "10**12 bytes is below the 1 PiB bound: a possible memory",
    **{("ampere.specs.model.Quoted.agrees_with", "derived", k): "any peak >= 0 can be compared (False: disagrees)"
       for k in ("zero", "huge")},
    (f"{_HBM}.measure.Kernel", "name", "unknown"): "free text: a kernel's name",
    (f"{_HBM}.measure.Kernel", "description", "empty"): "free text, may be empty",
    **{(f"{_HBM}.measure.Kernel", f, "zero"): "a write kernel reads nothing, a read kernel writes nothing"
       for f in ("reads", "writes")},
    **{(f"{_HBM}.l2_model.l2_sweep_model", f, "huge"): "a bandwidth may be large (1 TB/s); checked <= 1e18 B/s"
       for f in ("l2_bytes_per_s", "dram_bytes_per_s")},
    (f"{_HBM}.coalescing.WarpRequest", "offset_bytes", "zero"): "an aligned request starts at offset 0",
    (f"{_HBM}.published.ZeroFigureRow", "stage", "zero"): "ZeRO stage 0 is plain data parallelism",
    **{(f"{_HBM}.published.ZeroFigureRow", f, "huge"): _LARGE for f in ("params", "per_gpu_gb")},
    (f"{_HBM}.published.ZeroFigureRow", "where", "empty"): "optional provenance detail",
    (f"{_HBM}.published.L2Sweep", "gpu", "unknown"): "a sweep's device may be outside the catalogue (an H100 PCIe)",
    (f"{_HBM}.published.L2Sweep", "label", "empty"): "free text, may be empty",
    **{(f"{_HBM}.records.BandwidthRow", f, "none"): "documented: None where the record lacks the figure"
       for f in ("engine", "array_bytes", "pct_of_datasheet", "copied_bytes_per_s", "samples", "rel_iqr")},
    **{(f"{_HBM}.records.BandwidthRow", f, "huge"): _LARGE
       for f in ("array_bytes", "bytes_per_s", "pct_of_datasheet", "copied_bytes_per_s", "rel_iqr")},
    **{(f"{_HBM}.records.BandwidthRow", f, "zero"): "a perfect spread (IQR 0) or a stalled kernel (0 %)"
       for f in ("pct_of_datasheet", "rel_iqr")},
    **{(f"{_HBM}.{q}", "records", "empty"): "no records, nothing to flatten or judge (the checks say so)"
       for q in ("records.bandwidth_rows", "records.sweep_rows", "acceptance.check_acceptance")},
    (f"{_HBM}.acceptance.check_acceptance", "spec_name", "unknown"): "documented: any device; the thresholds "
       "apply to the A100, H100 and H200 only",
    (f"{_HBM}.acceptance.check_acceptance", "spec_name", "none"): "documented: a GPU outside the catalogue",
    **{(f"{_HBM}.views.{q}", "info", "none"): "documented: no device probed, the published view"
       for q in ("show_bandwidth", "show_l2_sweep", "show_capacity", "show_coalescing")},
    **{(f"{_K}.views.{q}", "info", "none"): "documented: no device probed, the published view"
       for q in ("show_matmul", "show_attention", "show_profile")},
    (f"{_K}.occupancy.SMLimits", "reserved_shared_bytes_per_block", "zero"): "no reservation before sm80",
    **{(f"{_K}.occupancy.Occupancy", f, "zero"): "a kernel may use no registers or no shared memory"
       for f in ("registers_per_thread", "shared_bytes_per_block")},
    (f"{_K}.occupancy.Occupancy", "limiter", "unknown"): "free text naming the binding resource",
    (f"{_K}.tiling.PipelineTime", "total_s", "huge"): _LARGE,
    **{(f"{_K}.shared_memory.tile_offset", f, "zero"): "row 0 and byte 0 are the tile's first"
       for f in ("row", "column_byte")},
    (f"{_K}.fusion.FusionOp", "name", "unknown"): "free text: a kernel's name",
    (f"{_K}.fusion.FusionOp", "reads", "empty"): "a kernel may read nothing (a fill)",
    **{(f"{_K}.fusion.FusionOp", f, "unknown-element"): "tensor names are free text" for f in ("reads", "writes")},
    (f"{_K}.fusion.fusion_traffic", "outputs", "empty"): "a chain whose results are not needed after it writes nothing",
    (f"{_K}.figures.plot_l2_persistence", "streaming_mib", "zero"): "no stream: the working set alone",
})


# ---- ch-spmig (ampere.sparsity, ampere.mig): one block ---------------------------------------------------
def _spmig_records() -> dict[tuple[str, str, str], str]:
    """The chapters' result records check every field by its annotation (ampere/fields.py); what a
    record may hold by design (0 where a count or a time may be zero, free text, empty collections, large
    sizes and rates) is listed, with the reason, by ``fields.accepted``."""
    import dataclasses

    from ampere import fields, mig, sparsity

    out: dict[tuple[str, str, str], str] = {}
    for pkg in (mig, sparsity):
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

# --- NVLink and SuperPOD chapters (ampere.collectives, fabrics, pricing, interconnect, cluster) -----------
_C, _F, _IC, _CL = "ampere.collectives", "ampere.fabrics", "ampere.interconnect", "ampere.cluster"
_MODEL_SIZE = "a model's size in bytes is any real number >= 0 (680e6, 2.5; 10**12 bytes is 1 TB)"
_MODEL_RATE = "a rate up to the 1e14 B/s bound is a link (10**12 B/s is 1 TB/s per direction)"
_ZERO_LAT = "no latency or fixed cost is the textbook model (zero is valid)"
_RECORD = "a record of computed or published figures: any finite non-negative value is representable"
_FREE = "free text"
ACCEPT.update({
    **{(f"{_C}.{f}", "size_bytes", k): _MODEL_SIZE for f in ("algorithm_bandwidth", "collective_time",
       "hierarchical_all_reduce_time", "hierarchical_all_reduce_breakdown", "AllReducePhases")
       for k in ("zero", "huge", "float")},
    (f"{_C}.algorithm_bandwidth", "time_s", "huge"): "any positive time",
    **{(f"{_C}.bus_bandwidth", "algbw_bytes_per_s", k): _MODEL_RATE + "; zero is a collective that moved nothing"
       for k in ("zero", "huge")},
    **{(f"{_C}.{f}", "link_bytes_per_s", "huge"): _MODEL_RATE for f in ("collective_time", "ring_tree_crossover_bytes")},
    (f"{_C}.collective_time", "link_bytes_per_s", "inf"): "documented: inf is a link without a bandwidth limit (what "
                                                          "a fit with beta = 0 gives)",
    **{(f"{_C}.{f}", a, "zero"): _ZERO_LAT for f in ("collective_time", "ring_tree_crossover_bytes")
       for a in ("latency_s",)},
    **{(f"{_C}.{f}", a, "huge"): _MODEL_RATE for f in ("hierarchical_all_reduce_time",
       "hierarchical_all_reduce_breakdown") for a in ("intra_bytes_per_s", "inter_bytes_per_s")},
    **{(f"{_C}.{f}", a, "zero"): _ZERO_LAT for f in ("hierarchical_all_reduce_time",
       "hierarchical_all_reduce_breakdown") for a in ("intra_latency_s", "inter_latency_s")},
    **{(f"{_C}.AllReducePhases", a, k): _RECORD for a in ("reduce_scatter_s", "inter_all_reduce_s", "all_gather_s",
       "overhead_s") for k in ("zero", "huge")},
    (f"{_F}.NodeNetwork", "name", "unknown"): _FREE,
    (f"{_F}.node_network", "name", "unknown"): _FREE + " (empty: a name made from the parts)",
    **{(f"{_F}.{f}", a, "huge"): _MODEL_RATE for f in ("NodeNetwork", "node_network")
       for a in ("intra_bytes_per_s", "hca_bytes_per_s")},
    **{(f"{_F}.{f}", a, "zero"): _ZERO_LAT for f in ("NodeNetwork", "node_network")
       for a in ("intra_latency_s", "inter_latency_s", "intra_overhead_s", "inter_overhead_s")},
    **{(f"{_F}.{f}", "hcas_per_node", "zero"): "a single box without a compute fabric"
       for f in ("NodeNetwork", "node_network")},
    **{("ampere.pricing.hours_for_budget", a, "huge"): "any positive amount of money is arithmetic"
       for a in ("budget_usd", "low_usd_per_h", "high_usd_per_h")},
    **{(f"{_IC}.protocols.Protocol", a, "zero"): _ZERO_LAT for a in ("base_latency_s", "nvlink_hop_s", "net_hop_s")},
    **{(f"{_IC}.protocols.Protocol", a, k): "documented: inf is no cap; any positive cap is a rate"
       for a in ("busbw_cap", "per_channel_cap") for k in ("inf", "huge")},
    **{(f"{_IC}.protocols.best_protocol", "size_bytes", k): _MODEL_SIZE for k in ("zero", "huge", "float")},
    **{(f"{_IC}.protocols.{f}", a, "huge"): _MODEL_RATE for f, a in (
        ("best_protocol", "link_bytes_per_s"), ("switch_points", "link_bytes_per_s"),
        ("channels_needed", "busbw_bytes_per_s"), ("channels_needed", "per_channel_bytes_per_s"))},
    (f"{_IC}.innetwork.all_reduce_busbw_bound", "link_bytes_per_s", "huge"): _MODEL_RATE,
    **{(f"{_IC}.ncclog.Connection", a, "zero"): "channel 0 and rank 0 exist" for a in ("channel", "src", "dst")},
    (f"{_IC}.ncclog.Connection", "transport", "unknown"): _FREE + " (what the log prints)",
    **{(f"{_IC}.ncclog.NcclLog", a, "unknown"): _FREE + " (what the log prints)" for a in ("version", "network")},
    (f"{_IC}.ncclog.parse_nccl_log", "lines", "unknown"): "a one-line log that names nothing parses to an empty log",
    (f"{_IC}.ncclog.parse_nccl_log", "lines", "empty"): "an empty log parses to an empty NcclLog",
    **{(f"{_CL}.{f}", "optical_tiers", "empty"): "no optical tier: every cable copper, no transceiver"
       for f in ("fabric.fat_tree", "pod.superpod")},
    (f"{_CL}.fabric.fat_tree", "port_bytes_per_s", "huge"): _MODEL_RATE,
    (f"{_CL}.pod.superpod", "switch_power_w", "zero"): "leaves the switches' power out of the total",
    **{(f"{_CL}.references.ReferenceDesign", a, k): _FREE for a in ("name", "system", "switch", "counts_table",
       "counts_where", "switch_source") for k in ("unknown", "empty")},
    (f"{_CL}.references.ReferenceDesign", "where", "empty"): _FREE,
    (f"{_CL}.references.ReferenceDesign", "port_bytes_per_s", "huge"): _MODEL_RATE,
    (f"{_CL}.references.ReferenceDesign", "year", "none"): "documented: None when the document gives no year",
    **{(f"{_CL}.published.Top500Entry", a, "unknown"): _FREE for a in ("system", "list_name")},
    **{(f"{_CL}.published.Top500Entry", a, "huge"): _RECORD for a in ("rmax_flops", "rpeak_flops", "power_w",
                                                                       "green500_flops_per_w")},
    **{(f"{_CL}.published.Top500Entry", a, "none"): "documented: None where the list entry gives no figure"
       for a in ("rpeak_flops", "power_w", "top500_rank", "green500_rank", "green500_flops_per_w")},
    **{(f"{_CL}.allreduce.{f}", "params", "huge"): "10**12 parameters: a trillion-parameter model exists"
       for f in ("pod_all_reduce", "serial_all_reduce")},
    **{(f"{_CL}.allreduce.rail_all_reduce", "size_bytes", k): _MODEL_SIZE for k in ("zero", "huge", "float")},
    **{(f"{_CL}.allreduce.all_reduce_checks", "size_bytes", k): _MODEL_SIZE + " (at most 2**40)"
       for k in ("huge", "float")},
    **{(f"{_CL}.costs.Ownership", a, k): "any non-negative amount of money is arithmetic (zero: a machine "
       "already paid for, free power, no staff)" for a in ("capex_usd", "opex_usd_per_year", "electricity_usd_per_kwh")
       for k in ("zero", "huge") if not (a == "electricity_usd_per_kwh" and k == "huge")},
    (f"{_CL}.costs.Ownership", "max_power_w", "zero"): "leaves electricity out",
    (f"{_CL}.costs.Ownership", "busy_power_fraction", "zero"): "leaves electricity out",
    **{(f"{_CL}.costs.{f}", "cloud_usd_per_gpu_hour", "huge"): "any positive price is arithmetic"
       for f in ("break_even_utilization", "break_even")},
    **{(f"{_CL}.costs.BreakEven", a, k): _RECORD + "; documented: utilization may be inf (energy alone costs more)"
       for a, k in (("price_usd_per_gpu_hour", "huge"), ("utilization", "zero"), ("utilization", "huge"),
                    ("utilization", "inf"), ("own_usd_per_gpu_hour_at_full_use", "huge"))},
    **{(f"{_CL}.costs.round_sig", "value", k): "any finite number rounds" for k in ("zero", "negative", "huge")},
    **{(f"{_CL}.costs.training_energy_j", a, k): "arithmetic: no time or no power is no energy; 10**12 s is long, "
       "not wrong" for a, k in (("seconds", "zero"), ("seconds", "huge"), ("power_per_node_w", "zero"))},
})
SKIP_ARGS.update({
    (f"{_IC}.bench.bench_main", "argv"): "an empty argv runs the whole benchmark (tens of seconds on a CPU): a valid "
                                         "run, not a hang; tests/test_benches_cpu.py and tests/interconnect run it",
})



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


# ----------------------------------------------------------------------------------------------------
# The Megatron chapter and the shared models it owns: megatron, megatron_lab, memory, transformer, gemm.
# Baselines for the callables whose required arguments the fuzzer cannot guess (a shape, a layout, a
# record), and the bad values that are valid for them.
# ----------------------------------------------------------------------------------------------------

ACCEPT.update({
    **{("ampere.megatron.comms.overlapped", a, k): "no time and a long time are both times (seconds >= 0)"
       for a in ("comm_s", "compute_s") for k in ("zero", "huge")},
    ("ampere.megatron.comms.step_collectives", "params_per_gpu", "huge"): "10**12 parameters: a trillion-parameter "
                                                                           "replica",
    ("ampere.megatron.lab_model.LabConfig", "seed", "huge"): "any 64-bit seed",
    ("ampere.megatron.measure.bench_main", "argv", "empty"): "no options: the benchmark with its defaults (here "
                                                             "its CPU code path)",
    ("ampere.megatron.sizing.training_days", "tokens", "huge"): "10**12 tokens: a trillion-token run",
    ("ampere.megatron.throughput.Estimate", "options", "empty"): "no options recorded",
    ("ampere.megatron.throughput.Estimate", "notes", "empty"): "no notes",
    ("ampere.megatron.throughput.Estimate", "figures_used", "empty"): "no figures listed",
    ("ampere.megatron.throughput.Estimate", "software", "unknown"): "free text: the stack's name",
    ("ampere.megatron.throughput.Estimate", "software", "empty"): "free text",
    ("ampere.megatron.throughput.Estimate", "bubble_fraction", "zero"): "no pipeline, no bubble",
    ("ampere.megatron.throughput.Estimate", "tflops_per_gpu", "zero"): "a rate >= 0",
    **{("ampere.megatron.throughput.Estimate", f, k): "a rate or a count of bytes >= 0"
       for f in ("tflops_per_gpu", "model_tflops_per_gpu", "causal_model_tflops_per_gpu", "memory_bytes_per_gpu",
                 "bubble_fraction") for k in ("zero", "huge")},
    ("ampere.megatron.throughput.Estimate", "time_per_iteration_s", "huge"): "seconds > 0",
    ("ampere.megatron.schedules.ScheduleResult", "makespan", "huge"): "a time > 0",
    ("ampere.megatron.schedules.ScheduleResult", "ideal", "huge"): "a time > 0",
    ("ampere.megatron.schedules.ScheduleResult", "ops", "empty"): "a schedule record may hold no operations",
    **{("ampere.megatron.schedules.simulate_schedule", a, "huge"): "a duration > 0 in any unit"
       for a in ("t_fwd", "t_bwd", "t_comm")},
    ("ampere.megatron.schedules.simulate_schedule", "t_comm", "zero"): "free transfers",
    **{("ampere.megatron.other_teams.TeamGroup", a, k): "errors and counts >= 0"
       for a in ("mean_abs_error", "max_abs_error") for k in ("zero", "huge")},
    ("ampere.megatron.other_teams.TeamGroup", "stack", "empty"): "the group of all runs has no single stack",
    ("ampere.megatron.other_teams.TeamGroup", "stack", "unknown"): "free text: the stack's name",
    ("ampere.megatron.other_teams.TeamGroup", "team", "unknown"): "free text: a team's name",
    **{("ampere.megatron.validation.ValidationGroup", a, k): "errors >= 0"
       for a in ("mean_abs_error", "max_abs_error") for k in ("zero", "huge")},
    ("ampere.megatron.validation.ValidationGroup", "group", "unknown"): "free text: a group's name",
    ("ampere.megatron.validation.ValidationGroup", "source", "unknown"): "free text: a bib key",
    ("ampere.megatron.inputs.Input", "value", "zero"): "an input may be zero",
    ("ampere.megatron.inputs.Input", "value", "negative"): "an input is any finite number",
    ("ampere.megatron.inputs.Input", "value", "huge"): "an input is any finite number (bytes per second, say)",
    ("ampere.megatron.inputs.Input", "name", "unknown"): "free text: the input's name",
    ("ampere.megatron.inputs.Input", "meaning", "unknown"): "free text",
    ("ampere.megatron.inputs.Input", "source", "empty"): "an empty source is a stated assumption",
    ("ampere.megatron.stacks.Software", "name", "unknown"): "free text: a new stack's name",
    ("ampere.megatron.stacks.Software", "label", "unknown"): "free text",
    ("ampere.megatron.stacks.Software", "note", "unknown"): "free text",
    ("ampere.megatron.stacks.Software", "note", "empty"): "no note",
    ("ampere.megatron.stacks.Software", "sources", "list"): "no sources: an empty collection",
    ("ampere.megatron.lab.LabResult", "notes", "empty"): "no notes",
    **{("ampere.megatron.lab.LabResult", f, k): "a difference, a scale, a time or a count >= 0"
       for f in ("max_abs_logit_diff", "max_abs_grad_diff", "max_rel_grad_diff", "tp_bytes_formula",
                 "pp_bytes_per_boundary_per_microbatch", "pp_bytes_formula", "wall_s", "step_s", "logit_scale",
                 "grad_scale", "tp_bytes_per_rank") for k in ("zero", "huge")},
    **{("ampere.megatron.lab.LabResult", f, k): "a loss is any real number; a diverged run's is NaN or inf (noted)"
       for f in ("loss_first_step", "reference_loss_first_step") for k in ("zero", "negative", "huge", "nan", "inf")},
    ("ampere.megatron.lab.LabResult", "losses", "negative-element"): "a loss is any real number",
    ("ampere.megatron.lab.LabResult", "losses", "nan-element"): "a diverged run's loss is NaN (noted)",
    ("ampere.megatron.lab.LabResult", "reference_losses", "negative-element"): "a loss is any real number",
    ("ampere.megatron.lab.LabResult", "reference_losses", "nan-element"): "idem",
    ("ampere.megatron.lab.LabResult", "losses", "empty"): "a run of zero recorded steps",
    ("ampere.megatron.lab.LabResult", "reference_losses", "empty"): "idem",
    ("ampere.memory.fits.MemoryEstimate", "breakdown", "list"): "an empty breakdown holds nothing",
    ("ampere.memory.fits.MemoryEstimate", "params", "huge"): "10**12 parameters",
    ("ampere.memory.fits.MemoryEstimate", "assumptions", "empty"): "no assumptions stated",
    ("ampere.memory.fits.MemoryEstimate.table", "unit", "huge"): "any unit > 0 (a terabyte, say)",
    **{(f"ampere.memory.fits.MemoryEstimate.{m}", "reserve_bytes", k): "a reserve >= 0 (0: everything CUDA exposes)"
       for m in ("headroom_bytes", "fits", "gpus_needed") for k in ("zero",)},
    ("ampere.memory.fits.model_memory", "params", "huge"): "10**12 parameters",
    ("ampere.memory.fits.model_memory", "context", "zero"): "no KV cache",
    ("ampere.memory.fits.model_memory", "seq_len", "zero"): "activations left out",
    ("ampere.memory.fits.model_memory", "zero_stage", "zero"): "ZeRO stage 0",
    ("ampere.memory.fits.min_gpus_zero", "params", "huge"): "10**12 parameters",
    ("ampere.memory.fits.min_gpus_zero", "reserve_bytes", "zero"): "no reserve",
    ("ampere.memory.fits.min_gpus_zero", "stage", "zero"): "ZeRO stage 0",
    ("ampere.memory.fits.max_batch", "reserve_bytes", "zero"): "no reserve",
    ("ampere.memory.fits.max_batch", "weight_overhead_bits", "zero"): "no scales",
    ("ampere.memory.fits.max_trainable_params", "reserve_bytes", "zero"): "no reserve",
    ("ampere.memory.fits.finetune_memory", "seq_len", "zero"): "activations left out",
    ("ampere.memory.capacity.gpus_to_hold", "total_bytes", "zero"): "nothing to hold: one GPU",
    ("ampere.memory.capacity.gpus_to_hold", "total_bytes", "huge"): "a terabyte needs many GPUs",
    ("ampere.memory.capacity.gpus_to_hold", "reserve_bytes", "zero"): "no reserve",
    ("ampere.memory.capacity.usable_bytes", "reserve_bytes", "zero"): "no reserve",
    ("ampere.memory.capacity.runtime_reserve", "fraction", "zero"): "no reserve",
    ("ampere.memory.weights.weight_bytes", "params", "huge"): "10**12 parameters",
    ("ampere.memory.weights.weight_bytes", "overhead_bits", "zero"): "no scales",
    ("ampere.memory.weights.kv_cache_bytes", "context", "zero"): "an empty cache",
    ("ampere.memory.weights.group_scale_overhead_bits", "zero_point_bits", "zero"): "no zero point",
    **{("ampere.memory.training.StateBytes", f, "zero"): "a part may be absent (0 bytes)"
       for f in ("weights", "gradients", "master_weights", "optimizer_state")},
    **{("ampere.memory.training.TrainingRecipe", f, "zero"): "a part may be absent (0 bytes)"
       for f in ("weight_bytes", "grad_bytes", "master_bytes", "optimizer_bytes")},
    ("ampere.memory.training.TrainingRecipe", "name", "unknown"): "free text: a new recipe's name",
    ("ampere.memory.training.TrainingRecipe", "source", "unknown"): "free text: a bib key",
    ("ampere.memory.training.TrainingRecipe", "source", "empty"): "no source: an assumption",
    ("ampere.memory.training.zero_bytes_per_param", "stage", "zero"): "ZeRO stage 0",
    ("ampere.memory.training.state_bytes_per_param", "stage", "zero"): "ZeRO stage 0",
    ("ampere.memory.training.gathered_layer_bytes", "largest_layer_params", "zero"): "no module gathered",
    ("ampere.memory.training.gathered_layer_bytes", "largest_layer_params", "huge"): "a 10**12-parameter module",
    ("ampere.memory.training.MemoryConvention", "commit", "none"): "a source without a commit (a paper)",
    **{("ampere.memory.training.MemoryConvention", f, "unknown"): "free text" for f in ("name", "description",
                                                                                         "source", "where")},
    ("ampere.memory.training.MemoryConvention", "commit", "unknown"): "free text: a commit",
    ("ampere.memory.training.MemoryConvention", "from_the_source", "empty"): "a convention may state no stage itself",
    ("ampere.memory.training.MemoryConvention", "gathered_layer_bytes_per_param", "list"): "no gathered module",
    ("ampere.memory.training.MemoryConvention.stated", "stage", "zero"): "ZeRO stage 0",
    ("ampere.transformer.TransformerShape", "name", "unknown"): "free text",
    ("ampere.transformer.TransformerShape", "name", "empty"): "a shape without a name",
    ("ampere.transformer.TransformerShape", "source", "unknown"): "free text: a bib key",
    ("ampere.transformer.TransformerShape", "source", "empty"): "no source",
    **{(f"ampere.transformer.{f}", "name", k): "free text" for f in ("gpt", "llama") for k in ("unknown", "empty")},
    **{(f"ampere.transformer.{f}", "source", k): "free text" for f in ("gpt", "llama") for k in ("unknown", "empty")},
    ("ampere.gemm.PeakRow", "datasheet", "unknown"): "free text: the figure as printed",
    ("ampere.gemm.PeakRow", "datasheet", "empty"): "free text",
    ("ampere.gemm.PeakRow", "note", "unknown"): "free text",
    ("ampere.gemm.PeakRow", "note", "empty"): "free text",
    ("ampere.gemm.quantized_matmul_time", "overhead_s", "zero"): "no launch overhead",
    ("ampere.gemm.quantized_matmul_time", "peak_flop_per_s", "huge"): "10**12 FLOP/s: a TFLOP/s",
    ("ampere.gemm.PeakRow", "derived_flop_per_s", "huge"): "10**12 FLOP/s: a TFLOP/s",
    ("ampere.megatron.search.search_layouts", "top", "none"): "None: every layout (documented)",
    ("ampere.megatron.search.search_layouts", "memory_limit_bytes", "huge"): "a terabyte of memory: every layout fits",
    ("ampere.megatron.sizing.training_days", "n_params", "huge"): "10**12 parameters",
    ("ampere.megatron.measure.measure_layer_gemms", "warmup_s", "zero"): "no warm-up",
    **{(f"ampere.memory.fits.{f}", "reserve_bytes", "huge"): "a reserve larger than the card gives the documented "
       "answer: no headroom, no fit, 0 sequences, 0 parameters, no number of GPUs"
       for f in ("MemoryEstimate.fits", "MemoryEstimate.headroom_bytes", "max_batch", "max_trainable_params",
                 "min_gpus_zero")},
    ("ampere.memory.training.gathered_layer_bytes", "stage", "zero"): "stage 0 gathers nothing: 0 bytes",
    **{("ampere.megatron.other_teams.TeamRun", f, k): "free text"
       for f in ("id", "team", "run", "label", "published_name") for k in ("unknown", "unknown-case")},
    ("ampere.megatron.other_teams.TeamRun", "why_not_scored", "unknown"): "free text",
    ("ampere.megatron.other_teams.TeamRun", "why_not_scored", "empty"): "scored: no reason",
    ("ampere.megatron.other_teams.TeamRun", "kwargs", "empty"): "no options beyond the defaults",
    ("ampere.megatron.other_teams.TeamRun", "assumed", "empty"): "nothing assumed",
    ("ampere.megatron.other_teams.TeamRun", "assumed", "unknown-element"): "free text: what the rules assumed",
    ("ampere.megatron.other_teams.TeamRun", "cfg", "none"): "a run whose source gives no shape (shown, not scored)",
    ("ampere.megatron.throughput.Estimate", "figures_used", "unknown-element"): "free text: a figure and its source",
    ("ampere.megatron.other_teams.TeamRun", "published", "huge"): "a figure > 0 in its unit (tokens per second, say)",
})


def _megatron_baselines(tmp: Path) -> dict[str, dict[str, Any]]:
    import dataclasses

    from ampere import gemm, memory, megatron
    from ampere.megatron import lab

    cfg = megatron.GPTConfig(4, 256, 8, 512, 128)
    est = megatron.estimate(cfg, 16, 32, 2, 2)
    small = lab.LabConfig(steps=2)
    run = megatron.team_runs()[0]
    rec = gemm.published_matmul(precision="bf16")[0]
    lab_result = lab.LabResult(small, "gloo", 3.0, 3.0, 0.0, 0.0, 0.0, [3.0, 2.0], [3.0, 2.0], 1024, 1024.0, 0.0, 0.0,
                               1.0, 0.1)

    def fields(obj: Any) -> dict[str, Any]:
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}

    def tensor() -> Any:
        import torch

        return torch.zeros(1, 2, 4, 8)

    layout = {"cfg": cfg, "gpus": 16, "batch": 32, "tensor": 2, "pipeline": 2}
    return {
        "ampere.megatron.layouts.Layout": fields(megatron.layout(cfg, 16, 32, 2, 2)),
        "ampere.megatron.schedules.ScheduleResult": fields(megatron.simulate_schedule("1f1b", 2, 2)),
        "ampere.megatron.sizing.params": {"cfg": cfg},
        "ampere.megatron.sizing.flops_per_iteration": {"cfg": cfg, "batch": 32},
        "ampere.megatron.sizing.training_days": {"n_params": 1.7e9, "tokens": 3e11, "gpus": 8, "tflops_per_gpu": 100.0},
        "ampere.megatron.published.table1_config": {"row": "1T"},
        "ampere.megatron.layouts.layout": layout,
        "ampere.megatron.layouts.params_per_gpu": {"cfg": cfg, "tensor": 2, "pipeline": 2},
        "ampere.megatron.gpu_memory.memory_per_gpu": layout,
        "ampere.megatron.gpu_memory.activation_bytes_per_layer": {"cfg": cfg},
        "ampere.megatron.schedules.schedule_ops": {"kind": "1f1b", "pipeline": 4, "microbatches": 8},
        "ampere.megatron.schedules.simulate_schedule": {"kind": "1f1b", "pipeline": 4, "microbatches": 8},
        "ampere.megatron.figures.plot_schedule": {"result": megatron.simulate_schedule("1f1b", 4, 8)},
        "ampere.megatron.throughput.estimate": layout,
        "ampere.megatron.throughput.Estimate": fields(est),
        "ampere.megatron.search.search_layouts": {"cfg": cfg, "gpus": 8, "batch": 16},
        "ampere.megatron.measure.layer_gemm_shapes": {"cfg": cfg},
        "ampere.megatron.measure.measure_layer_gemms": {"cfg": cfg, "device": "cpu", "dtype": "fp32", "warmup_s": 0.0,
                                                       "max_time_s": 0.05},
        "ampere.megatron.stacks.Software": fields(megatron.STACKS["fsdp"]),
        "ampere.megatron.other_teams.TeamRun": fields(run),
        "ampere.megatron.lessons.context_parallel": {"cfg": cfg, "context": 2},
        "ampere.megatron.lessons.overlap_effect": layout,
        "ampere.megatron.lessons.tp_efficiency": {"cfg": cfg, "tensor": 2},
        "ampere.megatron.lab.LabResult": fields(lab_result),
        "ampere.megatron.lab.run_labs": {"cfgs": [small], "timeout_s": 30.0},
        "ampere.megatron.lab.run_lab": {"cfg": small, "timeout_s": 30.0},
        "ampere.megatron.lab_model.causal_attention": {"q": tensor(), "k": tensor(), "v": tensor()},
        "ampere.megatron.lab_model.tp_bytes_formula": {"cfg": small},
        "ampere.megatron.lab_model.pp_bytes_formula": {"cfg": small},
        "ampere.megatron.lab_model.tolerances": {"cfg": small},
        "ampere.memory.fits.MemoryEstimate": {"mode": "training", "params": 1e9, "breakdown": {"weights": 2e9}},
        "ampere.memory.training.memory_convention": {"name": "paper"},
        "ampere.memory.training.MemoryConvention": fields(memory.CONVENTIONS["deepspeed"]),
        "ampere.memory.training.gathered_layer_bytes": {"stage": 3, "largest_layer_params": 1e6,
                                                        "convention": "deepspeed"},
        "ampere.memory.training.largest_module_params": {"shape": cfg},
        "ampere.memory.activations.shape_activation_bytes_per_layer": {"shape": cfg},
        "ampere.transformer.preset": {"name": "7B"},
        "ampere.gemm.matmul_tflops": {"rec": rec},
        "ampere.gemm.matmul_shape": {"rec": rec},
        "ampere.gemm.PeakRow": fields(gemm.peak_rows(["A100-SXM4-80GB"], ["bf16"])[0]),
        "ampere.transformer.TransformerShape": {"layers": 4, "hidden": 256, "heads": 8},
    }


def _megatron_method_baselines(tmp: Path) -> dict[str, dict[str, Any]]:
    from ampere import megatron

    cfg = megatron.GPTConfig(4, 256, 8, 512, 128)
    return {
        "ampere.megatron.layouts.Layout.stage_layers": {"cfg": cfg},
        "ampere.megatron.layouts.Layout.chunk_layers": {"cfg": cfg},
        "ampere.megatron.stacks.Software.differences": {"other": megatron.STACKS["megatron-2022"]},
        "ampere.memory.fits.MemoryEstimate.headroom_bytes": {"gpu": "A100-SXM4-80GB"},
        "ampere.memory.fits.MemoryEstimate.fits": {"gpu": "A100-SXM4-80GB"},
        "ampere.memory.fits.MemoryEstimate.gpus_needed": {"gpu": "A100-SXM4-80GB"},
        "ampere.memory.training.MemoryConvention.stated": {"stage": 2},
        "ampere.transformer.TransformerShape.lora_params": {"rank": 8},
    }


_core_baselines_before_megatron = core_baselines
_method_baselines_before_megatron = method_baselines


def core_baselines(tmp: Path) -> dict[str, dict[str, Any]]:  # noqa: F811 - extended, one block per chapter
    return {**_core_baselines_before_megatron(tmp), **_megatron_baselines(tmp)}


def method_baselines(tmp: Path) -> dict[str, dict[str, Any]]:  # noqa: F811
    return {**_method_baselines_before_megatron(tmp), **_megatron_method_baselines(tmp)}


# ---- The reference check and the live calculators (ampere.report, ampere.live): one block ---------------
def _report_live_baselines(tmp: Path) -> dict[str, dict[str, Any]]:
    """Valid calls of ampere.report's and ampere.live's public callables (cheap settings: a model-only run
    on the CPU, no images, a tiny layer)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ampere import device, live, report, results, transformer

    cpu = device.probe(force="cpu")
    h200 = device.DeviceInfo(backend="cuda", name="NVIDIA H200", spec_name="H200-SXM-141GB", gpu_count=1,
                             compute_capability=(9, 0), bf16_tensor=True, tf32=True, memory_bytes=150_000_000_000)
    res = results.make_result("report", h200, {}, [{"probe": "matmul", "key": "matmul/bf16/n8192", "label": "m",
                                                    "value": 700.0, "unit": "TFLOP/s", "model": 989.4}],
                              created_utc="2026-11-30T10:00:00Z")
    figs = report.figures_from_result(res)
    recorded = report.recorded_figures([res])
    comps = report.compare(figs, "H200-SXM-141GB", recorded)
    checks = report.judge_all(report.example_facts(["acs"]), "A100-SXM4-80GB")
    ranked = report.findings(checks)
    outcome = report.run(tmp / "report-base", info=cpu, references=[], stream=io.StringIO(), images=False)
    _, axes = plt.subplots(1, 2)
    tiny = transformer.TransformerShape(layers=1, hidden=16, heads=2, seq=8, vocab=32)
    verdict = report.Verdict("fail", "x", resource="network", loss=(0.1, 0.1))
    c = report.CHECKS[0]
    field = live.Field("n", "n", "int", 1, minimum=1, maximum=9)
    (tmp / "refs").mkdir(exist_ok=True)
    return {
        "ampere.report.probes.Probe": {"name": "p", "title": "t", "needs": ("ampere.specs:get",),
                                       "supported": report.probes._needs_cuda, "run": lambda ctx: [],
                                       "estimate_s": lambda quick: 1.0},
        "ampere.report.probes.plan": {"info": h200, "probes": list(report.PROBES)},
        "ampere.report.extract.figures_from_result": {"result": res},
        "ampere.report.extract.recorded_figures": {"results_list": [res]},
        "ampere.report.extract.load_references": {"folder": str(tmp / "refs"), "bundled": True},
        "ampere.report.extract.allreduce_key": {"gpus": 8, "size_bytes": 4 * 2**30},
        "ampere.report.comparison.compare": {"figures": figs, "gpu": "H200-SXM-141GB", "recorded": recorded},
        "ampere.report.comparison.config_differences": {"device": h200.to_dict(), "references": [res]},
        "ampere.report.comparison.summary_rows": {"comparisons": comps},
        "ampere.report.comparison.recorded_rows": {"recorded": recorded},
        "ampere.report.figures.draw_comparison": {"ax": axes[0], "comparisons": comps, "title": "t"},
        "ampere.report.figures.draw_model": {"axes": list(axes), "gpus": ["A100-SXM4-80GB"]},
        "ampere.report.figures.draw_recorded": {"ax": axes[1], "recorded": recorded},
        "ampere.report.figures.comparison_figure": {"comparisons": comps, "title": "t"},
        "ampere.report.figures.model_figure": {"gpus": ["A100-SXM4-80GB"]},
        "ampere.report.figures.recorded_figure": {"recorded": recorded},
        "ampere.report.figures.draw_findings": {"ax": axes[0], "ranked": ranked, "rows": checks},
        "ampere.report.runner.mig_scale": {"figures": figs, "info": h200},
        "ampere.report.runner.run": {"out": str(tmp / "report-run"), "info": cpu, "references": [],
                                     "stream": io.StringIO(), "images": False},
        "ampere.report.runner.main": {},  # argv=None reads sys.argv; [] is the command with its defaults
        "ampere.report.runner.summary_text": {"result": outcome.result, "comparisons": outcome.comparisons,
                                              "checks": outcome.checks, "ranked": outcome.findings},
        "ampere.report.output.render_html": {"result": outcome.result, "comparisons": [], "plan_rows": outcome.plan,
                                             "recorded": [], "images": False},
        "ampere.report.output.write_text_atomic": {"path": str(tmp / "report.txt"), "text": "t"},
        "ampere.report.output.check_output_folder": {"out": str(tmp / "report-out")},
        "ampere.report.output.write_report_set": {"folder": str(tmp / "report-set"), "files": {"report.txt": "t"}},
        "ampere.report.progress.Progress": {"total": 4, "stream": io.StringIO()},
        "ampere.report.claims.gap_cost": {"gpus": 1000, "gap": 0.1, "price_per_gpu_hour": 1.0},
        "ampere.report.references.Reference": {"quantity": "q", "gpu": "A100-SXM4-80GB", "unit": "GB/s",
                                               "values": (1.0, 2.0), "sources": ("a", "b")},
        "ampere.report.references.reference_rows": {"refs": report.reference_table()[:3]},
        "ampere.report.references.figure_unit": {"name": "bf16_tflop_per_s"},
        "ampere.report.references.key_label": {"key": "matmul/bf16/n8192"},
        "ampere.report.references.key_model": {"key": "matmul/bf16/n8192", "gpu": "A100-SXM4-80GB"},
        "ampere.report.references.allreduce_points": {"rec": results.records(benchmark="all-reduce",
                                                                             kind="published")[0]},
        "ampere.report.config_checks.ConfigCheck": {f: getattr(c, f) for f in (
            "name", "title", "what", "how", "expected", "cost", "fix", "judge", "prescreen")},
        "ampere.report.config_judges.Verdict": {"status": "fail", "observed": "x", "resource": "network",
                                                "loss": (0.1, 0.2), "sources": ("nccl412",)},
        "ampere.report.config_checks.judge_all": {"facts": report.example_facts(), "spec": "A100-SXM4-80GB"},
        "ampere.report.config_checks.findings": {"rows": checks},
        "ampere.report.config_checks.check_rows": {"rows": checks},
        "ampere.report.config_checks.throughput_loss": {"v": verdict, "shares": report.step_shares()},
        "ampere.report.config_facts.read_facts": {"info": cpu, "root": str(tmp), "env": {},
                                                  "run": lambda argv: None, "cpus": [0]},
        "ampere.report.workload.measure_layer": {"device": "cpu", "dtype": "fp32", "shape": tiny},
        "ampere.live.registry.Field": {"name": "n", "label": "n", "kind": "int", "default": 1, "minimum": 1,
                                       "maximum": 9},
        "ampere.live.registry.Table": {"columns": ("a", "b"), "rows": ({"a": 1, "b": 2},), "caption": "c"},
        "ampere.live.registry.Answer": {"summary": ("s",), "tables": (), "notes": ("n",)},
        "ampere.live.registry.Calculator": {"name": "t", "title": "t", "call": "ampere.x.y", "chapter": "hbm",
                                            "section": "s", "description": "d", "fields": (field,),
                                            "compute": lambda n: live.Answer(("s",))},
        "ampere.live.registry.get": {"name": "superpod-sizer"},
        "ampere.live.registry.run": {"name": "superpod-sizer"},
        "ampere.live.registry.run_json": {"name": "superpod-sizer", "values_json": '{"nodes": 20}'},
        "ampere.live.registry.register": {"name": "fuzz-calculator"},
        "ampere.live.registry.describe": {"selected": ["superpod-sizer"]},
    }


def _report_live_method_baselines() -> dict[str, dict[str, Any]]:
    return {
        "ampere.report.progress.Progress.line": {"text": "x"},
        "ampere.report.progress.Progress.update": {"text": "x", "advance": 1},
        "ampere.report.progress.Progress.close": {"text": "done"},
        "ampere.live.registry.Field.parse": {"value": 3},
        "ampere.live.registry.Calculator.values": {"values": {"n": 3}},
        "ampere.live.registry.Calculator.run": {"values": {"n": 3}},
    }


_core_baselines_before_report_live = core_baselines
_method_baselines_before_report_live = method_baselines


def core_baselines(tmp: Path) -> dict[str, dict[str, Any]]:  # noqa: F811 - extended by the report/live block
    return {**_core_baselines_before_report_live(tmp), **_report_live_baselines(tmp)}


def method_baselines(tmp: Path) -> dict[str, dict[str, Any]]:  # noqa: F811 - extended by the report/live block
    return {**_method_baselines_before_report_live(tmp), **_report_live_method_baselines()}


_R, _L = "ampere.report", "ampere.live.registry"
ACCEPT.update({
    **{(f"{_R}.{q}", f, k): "nothing in, nothing out: an empty list of figures, results or rows is valid"
       for q, f in (("probes.plan", "probes"), ("extract.recorded_figures", "results_list"),
                    ("comparison.compare", "figures"), ("comparison.compare", "recorded"),
                    ("comparison.config_differences", "references"), ("comparison.summary_rows", "comparisons"),
                    ("comparison.recorded_rows", "recorded"), ("figures.draw_comparison", "comparisons"),
                    ("figures.draw_recorded", "recorded"), ("figures.comparison_figure", "comparisons"),
                    ("figures.recorded_figure", "recorded"), ("figures.draw_findings", "ranked"),
                    ("runner.mig_scale", "figures"), ("output.render_html", "comparisons"),
                    ("output.render_html", "plan_rows"), ("output.render_html", "recorded"),
                    ("runner.run", "references"), ("references.reference_rows", "refs"),
                    ("config_checks.findings", "rows"), ("config_checks.check_rows", "rows"),
                    ("runner.summary_text", "comparisons"), ("runner.summary_text", "checks"),
                    ("runner.summary_text", "ranked"))
       for k in ("empty",)},
    **{(f"{_R}.{q}", f, k): "free text (a name, a label, a sentence, a bib-free source label)"
       for q, f in (("probes.Probe", "name"), ("references.Reference", "quantity"), ("references.Reference", "gpu"),
                    ("references.Reference", "unit"), ("references.Reference", "benchmark"),
                    ("config_checks.ConfigCheck", "name"), ("config_checks.ConfigCheck", "how"),
                    ("config_checks.ConfigCheck", "expected"), ("config_checks.ConfigCheck", "cost"),
                    ("config_checks.ConfigCheck", "fix"), ("config_checks.ConfigCheck", "prescreen"),
                    ("config_judges.Verdict", "observed"), ("config_judges.Verdict", "detail"),
                    ("figures.comparison_figure", "title"), ("progress.Progress.line", "text"),
                    ("progress.Progress.update", "text"), ("progress.Progress.close", "text"),
                    ("output.write_text_atomic", "text"))
       for k in ("unknown", "unknown-case", "empty")},
    **{(f"{_R}.{q}", f, "unknown"): "a new file or folder name is a valid place to write (or, for root, a tree "
                                    "the readers find empty and say so)"
       for q, f in (("output.write_text_atomic", "path"), ("output.check_output_folder", "out"),
                    ("runner.run", "out"), ("runner.run", "record"), ("output.write_report_set", "folder"),
                    ("config_facts.read_facts", "root"))},
    (f"{_R}.probes.Probe", "needs", "empty"): "a probe that needs no chapter module",
    (f"{_R}.probes.Probe", "needs", "unknown-element"): "a module not written yet: availability() says 'not "
                                                         "available in this version' (documented and tested)",
    (f"{_R}.comparison.compare", "gpu", "unknown"): "the name a result's GPU goes by: a driver name or a MIG slice "
                                                    "is as valid as a catalogue name",
    (f"{_R}.claims.gap_cost", "gap", "zero"): "no gap costs nothing",
    (f"{_R}.references.reference_table", "gpus", "none"): "documented: None keeps every GPU",
    (f"{_R}.references.training_rows", "gpus", "none"): "documented: None keeps every GPU",
    (f"{_R}.references.figure_unit", "name", "unknown"): "documented: a name without a unit ending has none",
    (f"{_R}.references.key_label", "key", "unknown"): "documented: a key of no known form prints as itself",
    (f"{_R}.references.key_model", "key", "unknown"): "documented: (None, '') for a key of no known form",
    (f"{_R}.references.key_model", "gpu", "unknown"): "documented: (None, '') for a GPU the catalogue does not match",
    (f"{_R}.config_facts.read_facts", "cpus", "empty"): "an empty affinity reads as unknown",
    (f"{_R}.extract.allreduce_sizes", "memory_bytes", "zero"): "documented: 0 or None is unknown memory (1 GiB)",
    (f"{_R}.extract.allreduce_sizes", "memory_bytes", "none"): "documented: 0 or None is unknown memory (1 GiB)",
    (f"{_R}.extract.allreduce_sizes", "memory_bytes", "huge"): "10**12 bytes is below the 2**50 bound: a possible "
                                                               "memory size",
    **{(f"{_L}.{q}", f, k): "free text or a new name"
       for q, f in (("Answer", "summary"), ("Answer", "notes"), ("Table", "columns"), ("Table", "caption"),
                    ("Calculator", "name"), ("Calculator", "call"), ("Calculator", "chapter"),
                    ("Calculator", "section"), ("Field", "name"), ("Field", "help"), ("register", "name"))
       for k in ("unknown", "unknown-element")},
    (f"{_L}.Table", "rows", "empty"): "a table may be empty (its header shows)",
    (f"{_L}.Field", "minimum", "zero"): "a bound below the default is valid",
    (f"{_L}.Field", "minimum", "negative"): "a bound below the default is valid",
    (f"{_L}.Field", "maximum", "huge"): "a bound far above the default is valid",
    (f"{_L}.run_json", "values_json", "unknown"): "documented: the browser's entry answers {\"error\": ...} for "
                                                   "input that is not a JSON object (the page shows it)",
    (f"{_L}.run_json", "values_json", "empty"): "idem",
})


# ---- A100 today (ampere.today): one block ----------------------------------------------------------------
def _today_baselines() -> dict[str, dict[str, Any]]:
    """Valid calls of ampere.today's public callables that take arguments without defaults."""
    from ampere import megatron, today
    from ampere.today import network as today_network

    w = today.Workload("7B", "lora")
    p = today.plan(w, "A100-SXM4-80GB")
    run = today.training_run_checks()[0]
    check = today.pcie_server_check()
    step = today.adapter_step(p.estimate, "lora", 16)
    node = today.node_of("A100-PCIE-80GB")
    assert isinstance(p.estimate, megatron.Estimate) and node is not None and today_network.MAX_CARDS
    return {
        "ampere.today.workload.Workload": {"model": "7B", "task": "lora"},
        "ampere.today.workload.GPUPlan": {
            "gpu": p.gpu, "workload": w, "feasible": True, "cards": 1, "memory_bytes": p.memory_bytes,
            "capacity_bytes": p.capacity_bytes, "tokens_per_s": p.tokens_per_s, "bound": p.bound,
            "step_time_s": p.step_time_s, "run_time_s": None, "price": None},
        "ampere.today.network.Network": {"node": node, "cards": 8, "nodes": 1, "link": "PCIe Gen4"},
        "ampere.today.calculator.plan": {"workload": w, "gpu": "A100-SXM4-80GB"},
        "ampere.today.calculator.plans": {"workload": w},
        "ampere.today.decision.best": {"candidates": today.plans(w)},
        "ampere.today.decision.decision_table": {"workloads": {"LoRA 7B": w}},
        "ampere.today.decision.break_even_price": {"workload": w, "gpu": "H100-SXM5-80GB"},
        "ampere.today.decision.break_even_rows": {"moves": [("LoRA 7B", w, None, "H100-SXM5-80GB")]},
        "ampere.today.training_runs.TrainingRunCheck": {
            "record": run.record, "model": run.model, "gpus": run.gpus, "tokens": run.tokens,
            "published_tokens_per_s_per_gpu": run.published_tokens_per_s_per_gpu,
            "predicted_tokens_per_s_per_gpu": run.predicted_tokens_per_s_per_gpu,
            "baseline_tokens_per_s_per_gpu": run.baseline_tokens_per_s_per_gpu, "layout": run.layout},
        "ampere.today.adapters.adapter_step": {"est": p.estimate, "method": "lora", "lora_rank": 16},
        "ampere.today.adapters.AdapterStep": {"method": "lora", "time_s": step.time_s, "breakdown": step.breakdown,
                                              "memory": step.memory, "adapter_params": step.adapter_params},
        "ampere.today.server_check.ServerCheck": {f: getattr(check, f) for f in (
            "box", "gpus", "params", "compute_s", "planner_all_reduce_s", "chapter_all_reduce_s",
            "planner_efficiency", "chapter_efficiency", "chapter_headline_efficiency", "sxm_efficiency")},
        "ampere.today.prices.PriceRange.at": {"where": "mid"},
    }


_method_baselines_before_today = method_baselines


def method_baselines(tmp: Path) -> dict[str, dict[str, Any]]:  # noqa: F811 - extended by the today block
    return {**_method_baselines_before_today(tmp), **_today_baselines()}


ACCEPT.update({
    ("ampere.today.prices.PriceRange", "as_of", "unknown"): "free text: the date as the source gives it",
    ("ampere.today.prices.PriceRange", "note", "unknown"): "free text",
    ("ampere.today.prices.PriceRange", "note", "empty"): "no note",
    ("ampere.today.decode.decode_run_bound", "prompt_tokens", "zero"): "no prompt: decoding from the first token",
    ("ampere.today.a800.gradient_allreduce_time", "params", "huge"): "a trillion parameters is a real model size",
    ("ampere.today.workload.Workload", "context", "zero"): "inference without a KV cache (weights only)",
    ("ampere.today.workload.Workload", "model", "huge"): "a parameter count of a trillion is a model size",
    ("ampere.today.workload.Workload", "lora_rank", "none"): "None is the book's default rank",
    ("ampere.today.workload.Workload", "global_batch", "none"): "None: micro-batch x cards",
    ("ampere.today.workload.Workload", "tokens", "none"): "None: no run length, no run time",
    ("ampere.today.workload.Workload", "mfu", "none"): "None: the Megatron time model",
    ("ampere.today.workload.Workload", "hcas_per_node", "none"): "None: the node's own adapters",
    ("ampere.today.workload.Workload", "hcas_per_node", "zero"): "a single node without adapters",
    ("ampere.today.workload.GPUPlan", "memory_bytes", "zero"): "an empty plan holds nothing",
    ("ampere.today.workload.GPUPlan", "reason", "unknown"): "free text",
    ("ampere.today.workload.GPUPlan", "layout", "unknown"): "free text",
    ("ampere.today.workload.GPUPlan", "gpu", "unknown-case"): "catalogue names match in any case (the house rule)",
    ("ampere.today.network.Network", "link", "unknown"): "free text",
    ("ampere.today.network.Network", "reason", "unknown"): "free text",
    ("ampere.today.network.Network", "reason", "empty"): "no reason: a possible layout",
    ("ampere.today.calculator.plan", "gpu", "unknown-case"): "catalogue names match in any case (the house rule)",
    ("ampere.today.calculator.plan", "reserve_fraction", "zero"): "no reserve: budget against all CUDA exposes",
    ("ampere.today.decision.break_even_price", "gpu", "unknown-case"): "idem",
    ("ampere.today.decision.break_even_price", "reference_gpu", "unknown-case"): "idem",
    ("ampere.today.training_runs.TrainingRunCheck", "model", "unknown"): "a published run's model name",
    ("ampere.today.training_runs.TrainingRunCheck", "layout", "unknown"): "free text",
    ("ampere.today.training_runs.TrainingRunCheck", "layout", "empty"): "no layout (fixed utilisation)",
    ("ampere.today.training_runs.TrainingRunCheck", "core_tokens_per_s_per_gpu", "zero"): "not computed",
    ("ampere.today.server_check.ServerCheck", "box", "unknown"): "free text: the node's name",
    ("ampere.today.server_check.ServerCheck", "planner_all_reduce_s", "zero"): "no data-parallel exchange",
    ("ampere.today.server_check.ServerCheck", "chapter_all_reduce_s", "zero"): "idem",
    ("ampere.today.server_check.ServerCheck", "box", "unknown-case"): "free text: the node's name",
    ("ampere.today.server_check.ServerCheck", "params", "huge"): "a trillion parameters is a model size",
    ("ampere.today.adapters.AdapterStep", "adapter_params", "huge"): "idem",
    ("ampere.today.workload.Workload", "tokens", "huge"): "a trillion tokens is a pre-training corpus",
    ("ampere.today.training_runs.TrainingRunCheck", "tokens", "huge"): "idem",
    ("ampere.today.training_runs.TrainingRunCheck", "layout", "unknown-case"): "free text",
    ("ampere.today.training_runs.TrainingRunCheck.gpu_hours", "tokens_per_s_per_gpu", "huge"):
        "below the bound of 1e9 tokens/s per GPU: any positive rate is a rate",
    **{("ampere.today.workload.GPUPlan", f, "huge"): "a model's magnitude (bytes, tokens/s, seconds)"
       for f in ("memory_bytes", "capacity_bytes", "tokens_per_s", "step_time_s", "run_time_s")},
    ("ampere.today.network.Network", "link", "unknown-case"): "free text",
    **{(f"ampere.today.network.Network.{m}", "size_bytes", k): r
       for m in ("all_reduce_time", "collective_time")
       for k, r in (("zero", "an empty buffer takes only the latency"), ("huge", "a terabyte is a size"),
                    ("float", "a modelled byte count may be fractional (bytes per parameter x parameters)"))},
    ("ampere.today.calculator.plans", "prices", "none"): "documented: None prices nothing",
    ("ampere.today.decision.decision_table", "prices", "none"): "idem",
    ("ampere.today.decision.best", "candidates", "empty"): "documented: None when nothing qualifies",
    ("ampere.today.decision.break_even_rows", "moves", "empty"): "no moves, no rows",
})
# ---- end of A100 today -----------------------------------------------------------------------------------


# ---- ampere.fields (core: the checked fields of result records) ------------------------------------------
ACCEPT.update({
    **{(f"ampere.fields.{fn}", arg, kind): "a bound of a field may be zero, negative or large (a signed or "
       "unbounded quantity); only lo <= hi is required"
       for fn in ("integer_rule", "number_rule") for arg in ("lo", "hi") for kind in ("zero", "negative", "huge")},
})

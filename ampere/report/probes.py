"""Probes: the measurements the report can run (:data:`PROBES`), each importing its chapter module lazily
and saying "not available in this version" or "not supported on this device" instead of failing; the
selection (``--only``/``--skip``) and the plan of a run.

Measures through the chapter modules (architecture, hbm, sparsity, interconnect), which import torch
inside their functions; this file imports no torch itself. Chapter: *The reference check*
(book/reference-check.ipynb).
"""

from __future__ import annotations

import importlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .. import check, specs
from .arguments import device_info
from .extract import (_hbm_figures, _link_model, _matmul_figures, _sparsity_figures, allreduce_key, allreduce_sizes,
                      size_label)

@dataclass
class ProbeContext:
    """What a probe's ``run`` receives."""

    info: Any  # ampere.device.DeviceInfo
    quick: bool
    progress: Callable[[str], None]
    notes: list[str] = field(default_factory=list)
    deadline: float = math.inf  # time.monotonic() by which the whole report must be done

    def time_left_s(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def spec(self) -> specs.GPUSpec | None:
        return self.info.spec


@dataclass(frozen=True)
class Probe:
    """One measurement of the report.

    ``needs`` lists ``module:function`` targets that must exist ("not available in this version"
    otherwise); ``supported(info)`` returns None when the device can run it, else the reason;
    ``estimate_s(quick)`` is the expected duration on an A100/H100 (the time budget skips what cannot fit).
    """

    name: str
    title: str
    needs: tuple[str, ...]
    supported: Callable[[Any], str | None]
    run: Callable[[ProbeContext], list[dict[str, Any]]]
    estimate_s: Callable[[bool], float]

    def __post_init__(self) -> None:
        check.string("name", self.name)
        check.string("title", self.title)
        needs = tuple(check.sequence("needs", self.needs, check.string, min_len=0, max_len=16))
        for i, target in enumerate(needs):
            module, _, func = target.partition(":")
            if not module or not all(part.isidentifier() for part in module.split(".")) \
                    or (func and not func.isidentifier()):
                raise ValueError(f"needs[{i}]={target!r} must be 'package.module' or 'package.module:function'")
        object.__setattr__(self, "needs", needs)
        for name in ("supported", "run", "estimate_s"):
            check.function(name, getattr(self, name))

    def availability(self) -> str | None:
        """None when every needed function exists, else why not ("not available in this version: ...")."""
        for target in self.needs:
            module, _, func = target.partition(":")
            try:
                mod = importlib.import_module(module)
            except ImportError:
                return f"not available in this version ({module} is missing)"
            if func and not callable(getattr(mod, func, None)):
                return f"not available in this version ({module}.{func} is missing)"
        return None


def _needs_cuda(info: Any) -> str | None:
    if getattr(info, "backend", "cpu") != "cuda":
        return "not supported on this device: no CUDA GPU"
    return None


# --- matmul ----------------------------------------------------------------------------------------------

def _matmul_precisions(info: Any) -> tuple[list[str], list[str]]:
    """(precisions to time, notes on those skipped) for this device."""
    spec = info.spec
    chosen, notes = ["fp32", "fp16"], []
    if info.tf32:
        chosen[1:1] = ["tf32"]
    else:
        notes.append("TF32 needs compute capability 8.0+: not timed")
    if info.bf16_tensor:
        chosen.append("bf16")
    else:
        notes.append("BF16 tensor cores need compute capability 8.0+: not timed")
    if spec is not None and spec.supports("fp64_tc"):
        chosen.insert(0, "fp64")
    else:
        notes.append("FP64 matmul is timed only on GPUs with FP64 tensor cores (A100, H100, H200)")
    return chosen, notes


def _run_matmul(ctx: ProbeContext) -> list[dict[str, Any]]:
    from .. import architecture

    precisions, notes = _matmul_precisions(ctx.info)
    ctx.notes.extend(f"matmul: {n}" for n in notes)
    sizes = [8192] if ctx.quick else [4096, 8192]

    def show(rec: dict[str, Any]) -> None:
        ctx.progress(f"matmul {rec['precision']} {rec['n']}^3: {rec['tflops']:.1f} TFLOP/s")

    records = architecture.matmul_sweep(sizes, precisions, warmup_s=0.5 if ctx.quick else 1.0,
                                        min_time_s=0.2, max_time_s=1.5 if ctx.quick else 3.0, progress=show)
    return _matmul_figures(records, ctx.spec)


# --- 2:4 sparsity ----------------------------------------------------------------------------------------

def _sparse_supported(info: Any) -> str | None:
    if _needs_cuda(info):
        return _needs_cuda(info)
    if not info.sparse_2to4:
        return "not supported on this device: 2:4 sparse tensor cores need compute capability 8.0+ " \
               "and torch semi-structured sparsity"
    return None


def _run_sparse(ctx: ProbeContext) -> list[dict[str, Any]]:
    from .. import sparsity

    ctx.progress("2:4 sparse F.linear (short sweep)")
    result = sparsity.short_run(ctx.info)
    ctx.notes.extend(f"sparse-2to4: {n}" for n in result["notes"])
    return _sparsity_figures(result)


# --- all-reduce across the GPUs of the machine -----------------------------------------------------------


def _allreduce_supported(info: Any) -> str | None:
    if _needs_cuda(info):
        return _needs_cuda(info)
    if info.gpu_count < 2:
        return f"not supported on this device: collectives need 2+ GPUs, this machine has {info.gpu_count}"
    return None


def _run_allreduce(ctx: ProbeContext) -> list[dict[str, Any]]:
    """NCCL all-reduce on the busbw plateau (4 and 8 GiB where memory allows), one figure per size."""
    from .. import interconnect, launch
    from ..timing import Measurement

    n = min(int(ctx.info.gpu_count), 8)
    sizes = allreduce_sizes(ctx.info.memory_bytes)
    ctx.progress(f"all-reduce of {', '.join(size_label(s) for s in sizes)} on {n} GPUs (NCCL)")
    # the longest launch.spawn can take is launch.max_wall_s(timeout): keep it inside the report's budget
    overhead = launch.max_wall_s(1.0) - 1.0
    timeout = max(20.0, min(120.0, ctx.time_left_s() - overhead))
    run = interconnect.run_collective("all_reduce", sizes, n, backend="nccl",
                                      samples=10 if ctx.quick else 20, timeout_s=timeout)
    model, label = _link_model(ctx.spec)
    out = []
    for i, rec in enumerate(run.records):
        m: Measurement = run.measurement(i)
        size = int(rec["size_bytes"])
        out.append({"probe": "allreduce", "key": allreduce_key(n, size), "size_bytes": size,
                    "label": f"all-reduce busbw, {size_label(size)} x {n} GPUs",
                    "value": rec["busbw_bytes_per_s"] / 1e9, "unit": "GB/s", "higher_is_better": True,
                    "model": model / 1e9 if model else None, "model_label": label, "measurement": m.to_dict()})
    return out


# --- one transformer layer, forward and backward (the workload probe) ------------------------------------


def _workload_supported(info: Any) -> str | None:
    if _needs_cuda(info):
        return _needs_cuda(info)
    if not info.bf16_tensor:
        return "not supported on this device: the BF16 layer needs BF16 tensor cores (compute capability 8.0+)"
    return None


def _run_workload(ctx: ProbeContext) -> list[dict[str, Any]]:
    from .. import device as _device
    from . import workload

    shape = workload.layer_shape()
    ctx.progress(f"one transformer layer fwd+bwd, BF16, hidden {shape.hidden}, seq {shape.seq} "
                 f"({workload.REFERENCE_ROW} of Megatron-LM Table 1)")
    res = workload.measure_layer(_device.torch_device(ctx.info), quick=ctx.quick)
    flops = workload.layer_flops()
    model = workload.predict_layer_s(ctx.spec) if ctx.spec is not None else None
    return [{"probe": "workload", "key": f"workload/layer-{workload.REFERENCE_ROW}/bf16",
             "label": f"layer fwd+bwd ({workload.REFERENCE_ROW} shape, BF16)", "value": flops / res["seconds"] / 1e12,
             "unit": "TFLOP/s", "higher_is_better": True,
             "model": flops / model / 1e12 if model else None,
             "model_label": "Megatron model of this GPU (uncalibrated)" if model else None,
             "measurement": res["measurement"]}]


# --- HBM and L2 (module ampere.hbm) ----------------------------------------------------------------------


def _run_hbm_copy(ctx: ProbeContext) -> list[dict[str, Any]]:
    from .. import device as _device
    from .. import hbm

    kernels = ["copy"] if ctx.quick else ["copy", "scale"]
    ctx.progress(f"DRAM bandwidth: {', '.join(kernels)} (L2 flushed between samples)")
    records = hbm.measure_bandwidth(_device.torch_device(ctx.info), quick=True, kernels=kernels,
                                    max_time_s=2.0)
    return _hbm_figures(records, ctx.spec)


def _run_l2_sweep(ctx: ProbeContext) -> list[dict[str, Any]]:
    from .. import device as _device
    from .. import hbm

    ctx.progress("L2 working-set sweep (12 footprints, no flush)")
    records = hbm.measure_l2_sweep(_device.torch_device(ctx.info), quick=True, max_time_s=1.0)
    return _hbm_figures(records, ctx.spec, ctx.info.l2_bytes)


#: Every probe the report knows, in the order it runs them.
PROBES: tuple[Probe, ...] = (
    Probe("matmul", "Square matmul per precision (Architecture chapter)", ("ampere.architecture:matmul_sweep",),
          _needs_cuda, _run_matmul, lambda quick: 12.0 if quick else 30.0),
    Probe("hbm-copy", "HBM copy bandwidth (HBM chapter)", ("ampere.hbm:measure_bandwidth", "ampere.hbm:bandwidth_rows"),
          _needs_cuda, _run_hbm_copy, lambda quick: 10.0 if quick else 20.0),
    Probe("l2-sweep", "L2 working-set sweep (HBM chapter)",
          ("ampere.hbm:measure_l2_sweep", "ampere.hbm:find_knee", "ampere.hbm:sweep_rows"),
          _needs_cuda, _run_l2_sweep, lambda quick: 10.0 if quick else 25.0),
    Probe("sparse-2to4", "2:4 sparse matmul (2:4 sparsity chapter)", ("ampere.sparsity:short_run",),
          _sparse_supported, _run_sparse, lambda quick: 20.0),
    Probe("workload", "One transformer layer, forward and backward, BF16 (Megatron chapter's model)",
          ("ampere.megatron:estimate", "ampere.report.workload:measure_layer"), _workload_supported, _run_workload,
          lambda quick: 8.0 if quick else 15.0),
    Probe("allreduce", "NCCL all-reduce on the busbw plateau (NVLink chapter)", ("ampere.interconnect:run_collective",),
          _allreduce_supported, _run_allreduce, lambda quick: 30.0 if quick else 45.0),
)


def probe_names() -> list[str]:
    """The names of :data:`PROBES`, in run order (what ``--only`` and ``--skip`` accept)."""
    return [p.name for p in PROBES]


def select_probes(only: Sequence[str] | None = None, skip: Sequence[str] | None = None) -> list[Probe]:
    """The probes chosen by ``--only`` and ``--skip`` (lists of :func:`probe_names`; unknown names raise
    ``ValueError`` listing the known ones), in run order. ``only=None`` selects every probe; an empty
    ``only`` would select none and is refused; an empty ``skip`` skips nothing."""
    known = probe_names()
    only = check.optional(check.sequence, "only", only, check.string, max_len=len(known) * 4)
    skip = check.optional(check.sequence, "skip", skip, check.string, min_len=0, max_len=len(known) * 4) or []
    for label, names in (("only", only), ("skip", skip)):
        bad = [n for n in (names or []) if n not in known]
        if bad:
            raise ValueError(f"--{label} names unknown probe(s) {bad}; known: {', '.join(known)}")
    return [p for p in PROBES if (only is None or p.name in only) and p.name not in skip]


def plan(info: Any, probes: Sequence[Probe]) -> list[dict[str, Any]]:
    """For each probe: ``status`` "run", "not available" or "not supported", and the reason. ``info`` is the
    :class:`ampere.device.DeviceInfo` of the machine, ``probes`` a list of :class:`Probe`."""
    device_info("info", info)

    def probe(name: str, p: Any) -> Probe:
        if not isinstance(p, Probe):
            raise TypeError(f"{name} must be an ampere.report.Probe (an entry of PROBES), got {p!r:.60}")
        return p

    rows = []
    for p in check.sequence("probes", probes, probe, min_len=0, max_len=1000):
        why = p.availability()
        if why:
            rows.append({"probe": p.name, "title": p.title, "status": "not available", "reason": why})
            continue
        why = p.supported(info)
        rows.append({"probe": p.name, "title": p.title, "status": "not supported" if why else "run",
                     "reason": why or ""})
    return rows

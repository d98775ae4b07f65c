"""The throughput model's view of the hardware: the GPU in its node (``_Hardware``, ``_hardware``), the
GEMM roofline with wave quantisation (:func:`gemm_time`), the attention core
(:func:`attention_core_roofline`, :func:`attention_efficiency`, :func:`flash_attention_efficiency`) and
the node network its collectives run on (``_Hardware.net``).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
section "A throughput model built from hardware". Pure: the node network from :mod:`ampere.fabrics`,
wave efficiency from :mod:`ampere.gemm`, the figures from ``inputs.py``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from .. import check, fabrics, gemm, results, specs
from .inputs import _A100_MAMF, _ATTENTION, INPUTS, _mamf


@dataclass(frozen=True)
class _Hardware:
    spec: specs.GPUSpec
    peak: float
    gemm_eff: float  # intrinsic: MAMF fraction divided by the MAMF shape's own wave efficiency
    hbm: float
    gap: float
    nvl_bw: float
    nvl_lat: float
    ib_bw: float
    ib_lat: float
    per_node: int
    notes: tuple[str, ...]
    #: the node network the collectives run on (:func:`ampere.collectives.nccl_collective_time`): the given
    #: network's fixed overheads and hop latencies, with the model's effective rates (``nvl_bw`` inside the
    #: node, ``ib_fraction`` of each adapter's line rate)
    net: fabrics.NodeNetwork


#: Where the GEMM ceiling of the time model comes from: "sustained" (a long GEMM on random data, at the
#: power limit; the default where one is published) or "mamf" (the best of a quick shape search).
GEMM_CEILINGS = ("sustained", "mamf")


def _hardware(gpu: str | specs.GPUSpec, network: fabrics.NodeNetwork | None = None,
              ceiling: str = "sustained") -> _Hardware:
    """The model's view of ``gpu`` in a node ``network`` (default :data:`ampere.fabrics.DGX_A100`)."""
    spec = specs.get(gpu)
    net = fabrics.DGX_A100 if network is None else network
    if not isinstance(net, fabrics.NodeNetwork):
        raise TypeError(f"network must be an ampere.fabrics.NodeNetwork, got {net!r} ({type(net).__name__})")
    check.one_of("gemm_ceiling", ceiling, GEMM_CEILINGS)
    return _hardware_cached(spec, net, ceiling)


@functools.lru_cache(maxsize=64)
def _hardware_cached(spec: specs.GPUSpec, net: fabrics.NodeNetwork, ceiling: str) -> _Hardware:
    """:func:`_hardware` on checked arguments, cached (it reads published figures from ``ampere/data``)."""
    notes: list[str] = []
    precision = "fp16" if spec.supports("fp16") else "fp32"
    peak = spec.peak_flops(precision)
    a100 = specs.get("A100-SXM4-80GB")
    sustained = gemm.sustained_matmul_flops(spec) if ceiling == "sustained" else None
    found = _mamf(spec)
    if sustained is not None:
        frac, shape = sustained[0] / peak, sustained[1]
    elif found is not None:
        frac, shape = found[0] / peak, found[1] or _A100_MAMF[1]
        if ceiling == "sustained":
            notes.append(f"no published long-GEMM figure for {spec.name}: the MAMF search's best is the ceiling")
    else:
        frac, shape = INPUTS["mamf_fraction"].value, _A100_MAMF[1]
        notes.append(f"no published MAMF for {spec.name}: the A100 SXM's {frac:.1%} of peak is assumed")
    ref_wave = _wave(*shape[:2], 1, spec.sm_count)
    # NVSwitch all-reduce busbw scales with the GPU's NVLink bandwidth (A100: 230 of 300 GB/s per direction)
    a100_nvl = a100.nvlink_bytes_per_s_per_direction
    if spec.nvlink_bytes_per_s > 0:
        nvl = INPUTS["nvswitch_allreduce_busbw"].value * spec.nvlink_bytes_per_s_per_direction / a100_nvl
    else:
        nvl = spec.pcie_bytes_per_s * INPUTS["nvswitch_allreduce_busbw"].value / a100_nvl
        notes.append(f"{spec.name} has no NVLink: tensor-parallel all-reduces go over PCIe")
    if net.gpu != spec.name and not (net is fabrics.DGX_A100 and spec.name.startswith("A100-SXM4")):
        notes.append(f"the node network is {net.name}'s ({net.gpus_per_node} GPUs, {net.hcas_per_node} adapters "
                     f"of {net.hca_bytes_per_s * 8 / 1e9:.0f} Gb/s), applied to {spec.name}")
    if net.nvlink_domain < net.gpus_per_node:
        notes.append(f"{net.name}: NVLink joins {net.nvlink_domain} of {net.gpus_per_node} GPUs; the model "
                     f"treats the node as one fast domain")
    effective = _effective_network(net, nvl, INPUTS["ib_fraction"].value)
    return _Hardware(spec, peak, frac / ref_wave, INPUTS["hbm_fraction"].value * spec.hbm_bytes_per_s,
                     INPUTS["kernel_gap_s"].value, nvl, net.intra_latency_s,
                     net.inter_bytes_per_s_per_gpu * INPUTS["ib_fraction"].value,
                     net.inter_latency_s, net.gpus_per_node, tuple(notes), effective)


@functools.lru_cache(maxsize=64)
def _effective_network(net: fabrics.NodeNetwork, intra_bytes_per_s: float, ib_fraction: float) -> fabrics.NodeNetwork:
    """``net`` with the rates the collectives reach: ``intra_bytes_per_s`` inside the node (the measured NVSwitch
    busbw) and ``ib_fraction`` of each adapter's line rate; overheads and hop latencies as ``net`` has them."""
    return net.with_(intra_bytes_per_s=intra_bytes_per_s, hca_bytes_per_s=net.hca_bytes_per_s * ib_fraction)


_TILES = ((256, 128), (128, 256), (128, 128))  # the large-tile shapes cuBLAS/CUTLASS use for 16-bit GEMMs


@functools.lru_cache(maxsize=65536)
def _wave(m: int, n: int, batch: int, sms: int) -> float:
    """Best wave efficiency over the tile shapes the library's heuristics choose among:
    :func:`ampere.gemm.wave_efficiency` (chapter *Architecture of the GA100*) for a batch of GEMMs."""
    return max(gemm.wave_efficiency(m, n, tm, tn, sms=sms, batch=batch) for tm, tn in _TILES)


def gemm_time(m: int, n: int, k: int, batch: int = 1, gpu: str | specs.GPUSpec = "A100-SXM4-80GB",
              ceiling: str = "sustained") -> float:
    """Predicted time (s) of ``batch`` 16-bit GEMMs C[m,n] = A[m,k] B[k,n] on ``gpu``: the roofline.

    Chapter: "A throughput model built from hardware". Compute side: 2mnk FLOPs at the ceiling's efficiency
    (``ceiling``: "sustained", a long GEMM on random data at the power limit, where published; "mamf", the best
    of a shape search) scaled by the wave quantisation of this shape relative to the ceiling's shape. Memory side: A, B and C
    cross HBM once (2 bytes each) at the achievable HBM bandwidth. The slower side wins, plus one kernel
    gap. Small inner dimensions (attention's k = h/a) make a GEMM memory-bound.
    """
    for name, v in (("m", m), ("n", n), ("k", k), ("batch", batch)):
        check.positive_int(name, v, maximum=gemm.MAX_DIM)
    check.one_of("ceiling", ceiling, GEMM_CEILINGS)
    hw = _hardware(gpu, None, ceiling)
    return _gemm(hw, m, n, k, batch)


def _gemm(hw: _Hardware, m: int, n: int, k: int, batch: int = 1) -> float:
    flops = 2.0 * m * n * k * batch
    nbytes = 2.0 * (m * k + k * n + m * n) * batch
    compute = flops / (hw.peak * hw.gemm_eff * _wave(m, n, batch, hw.spec.sm_count))
    return max(compute, nbytes / hw.hbm) + hw.gap


def _gemm_fwd_bwd(hw: _Hardware, m: int, n: int, k: int, batch: int = 1) -> tuple[float, float]:
    """Forward Y = X W, and backward dX = dY W^T (m x k, inner n) plus dW = X^T dY (k x n, inner m)."""
    return _gemm(hw, m, n, k, batch), _gemm(hw, m, k, n, batch) + _gemm(hw, k, n, m, batch)


#: The configuration of the attention benchmark behind ``INPUTS["attention_core_ms"]``
#: (``ampere/data/tables/megatron-attention-benchmark.json``).
ATTENTION_BENCHMARK = {k: _ATTENTION["rows"][0][k] for k in ("gpu", "batch", "heads", "head_dim", "seq", "dropout")}
ATTENTION_BENCHMARK["source"] = _ATTENTION["source"]


def attention_core_roofline(gpu: str | specs.GPUSpec, batch: int, heads: int, head_dim: int, seq: int,
                            causal: bool = False, dropout: bool = True) -> dict[str, float]:
    """Roofline time (s) of the attention core: S = Q K^T, softmax, dropout, O = P V; forward and backward.

    Chapter: "A throughput model built from hardware". The two batched GEMMs by :func:`gemm_time`'s
    roofline; the softmax and dropout as the memory traffic of :data:`MEMORY_OPS` (a causal softmax
    reads only the lower triangle). No efficiency factor: this is what perfect kernels would take.
    """
    hw = _hardware(gpu)
    for name, v in (("batch", batch), ("heads", heads), ("head_dim", head_dim), ("seq", seq)):
        check.positive_int(name, v, maximum=gemm.MAX_DIM)
    causal, dropout = check.boolean("causal", causal), check.boolean("dropout", dropout)
    n = batch * heads
    if n > gemm.MAX_DIM:
        raise ValueError(f"batch x heads = {batch} x {heads} = {n} batched GEMMs; allowed: at most {gemm.MAX_DIM} "
                         "(cuBLAS counts them in a 32-bit int)")
    f1, g1 = _gemm_fwd_bwd(hw, seq, seq, head_dim, n)
    f2, g2 = _gemm_fwd_bwd(hw, seq, head_dim, seq, n)
    elems = n * seq * seq
    soft_f, soft_b = (3, 4) if causal else (4, 6)
    drop_f, drop_b = (5, 5) if dropout else (0, 0)
    fwd = f1 + f2 + (soft_f + drop_f) * elems / hw.hbm
    bwd = g1 + g2 + (soft_b + drop_b) * elems / hw.hbm
    return {"fwd": fwd, "bwd": bwd, "total": fwd + bwd}


@functools.lru_cache(maxsize=1)
def attention_efficiency() -> float:
    """Roofline time / measured time of Megatron's attention core on an A100 (an input, not a fit).

    Chapter: "A throughput model built from hardware". The unfused attention of 2021 (two batched GEMMs
    with a small inner dimension, a softmax and a dropout over the b a s^2 scores) runs well below the
    HBM roofline; FlashAttention's authors timed it [dao2022flashattention]. Every layer's attention
    time is divided by this ratio.
    """
    cfg = ATTENTION_BENCHMARK
    roof = attention_core_roofline(cfg["gpu"], cfg["batch"], cfg["heads"], cfg["head_dim"], cfg["seq"],
                                   dropout=cfg["dropout"])["total"]
    return roof / (INPUTS["attention_core_ms"].value * 1e-3)


def _flash_record() -> Any:
    recs = [r for r in results.records(benchmark="attention", kind="published")
            if r.params.get("algorithm") == "flash" and "fwd_bwd_time_ms" in r.figures]
    if not recs:
        raise ValueError("no published FlashAttention timing (benchmark 'attention', algorithm 'flash') in ampere/data")
    return recs[0]


@functools.lru_cache(maxsize=1)
def flash_attention_efficiency() -> float:
    """GEMM-roofline time / published time of a FlashAttention forward + backward (an input, not a fit).

    Chapter: "A throughput model built from hardware". FlashAttention fuses the scores, softmax, dropout
    and the product with V in one kernel that never writes the s x s scores to HBM, and recomputes them
    in the backward pass [dao2022flashattention]. Its time is set by the two batched GEMMs (forward and
    backward, plus the recomputed scores); this is their roofline on an A100 40GB over the published time
    of the paper's Figure 2 configuration (``ampere/data/published/kernels-flashattention.json``).
    """
    rec = _flash_record()
    hw = _hardware("A100-SXM4-40GB")
    b, a, s, d = (rec.params[k] for k in ("batch", "heads", "seq", "head_dim"))
    roof = _flash_roofline(hw, s, d, b * a)
    return roof / (rec.figure("fwd_bwd_time_ms") * 1e-3)


def _flash_roofline(hw: _Hardware, s: int, d: int, n: int) -> float:
    """Compute time of a fused attention, forward + backward: the scores and the product with V (4 s^2 d
    FLOPs per head), the recomputed scores (2 s^2 d) and the four gradient products (8 s^2 d) at the GEMM
    ceiling; the s x s tiles stay on chip, so no HBM side."""
    flops = 14.0 * s * s * d * n
    return flops / (hw.peak * hw.gemm_eff)


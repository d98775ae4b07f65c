"""The inputs of the throughput model, each with its source: :data:`INPUTS` (microbenchmark figures),
:data:`MEMORY_OPS` and :data:`END_OPS` (the memory-bound kernels of a layer and of the model's two ends)
and :data:`CALIBRATION_RUN` (the one run the 2021 system efficiency is fitted on).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
section "A throughput model built from hardware". Pure: published figures are read from
``ampere/data`` (the best achievable matmul through :mod:`ampere.gemm`, the attention benchmark table);
peaks and bandwidths come from :mod:`ampere.specs`, the node's network from :mod:`ampere.fabrics`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import check, fabrics, gemm, results, specs

# ===========================================================================================================
# The throughput model: its inputs
# ===========================================================================================================


@dataclass(frozen=True)
class Input:
    """One input of the throughput model: a value with its unit, where it comes from, and what it means."""

    name: str
    value: float
    unit: str
    source: str  # bib key (book/references.bib); "" for a stated assumption
    meaning: str

    def __post_init__(self) -> None:
        check.string("name", self.name, max_len=80)
        object.__setattr__(self, "value", check.finite("value", self.value))
        check.string("unit", self.unit, max_len=200)
        check.string("source", self.source, allow_empty=True, max_len=80)
        check.string("meaning", self.meaning, max_len=2000)


def _mamf(gpu: str | specs.GPUSpec) -> tuple[float, tuple[int, int, int] | None, str] | None:
    """Best achievable dense 16-bit matmul (MAMF: best of a shape search) published for ``gpu``, as
    (FLOP/s, shape or None, bib key), from :func:`ampere.gemm.mamf_flops` (``ampere/data/published/
    matmul.json``; siblings of the same silicon share a figure); None when there is none."""
    try:
        flops, shape, rec = gemm.mamf_flops(gpu, "bf16")
    except ValueError:
        return None
    return flops, shape, rec.source


_A100_MAMF = _mamf("A100-SXM4-80GB")
_A100_SUSTAINED = gemm.sustained_matmul_flops("A100-SXM4-80GB")
assert _A100_SUSTAINED is not None, "ampere/data/published/matmul.json lacks the A100's sustained (random data) matmul"
_OVERLAP = next(r for r in results.records(benchmark="comm-compute-overlap", kind="published")
                if r.gpu == "A100-SXM4-80GB")
assert _A100_MAMF is not None and _A100_MAMF[1] is not None, "ampere/data/published/matmul.json lacks the A100 MAMF"
_MAMF_SOURCE = _A100_MAMF[2]
_ATTENTION = results.table("megatron-attention-benchmark")
#: the published nccl-tests logs the NVLink chapter derives the latency terms of ampere.fabrics from
_LATENCY_SOURCE = next(r.source for r in results.records(benchmark="all-reduce", kind="published")
                       if r.id == fabrics.LATENCY_RECORDS["intra_8"])

#: The inputs of :func:`estimate`, each a microbenchmark figure (or a count from the code of the time)
#: with its source. Peaks and bandwidths themselves come from ``ampere.specs``.
INPUTS: dict[str, Input] = {i.name: i for i in (
    Input("mamf_fraction", _A100_MAMF[0] / specs.get("A100-SXM4-80GB").peak_flops("bf16"),
          "of dense fp16/bf16 peak", _MAMF_SOURCE,
          f"best achievable large matmul on an A100 SXM ({_A100_MAMF[0] / 1e12:.1f} TFLOP/s, shape "
          f"{' x '.join(map(str, _A100_MAMF[1]))}); GEMMs run at this efficiency, scaled by their "
          "wave quantisation relative to that shape"),
    Input("sustained_gemm_fraction", _A100_SUSTAINED[0] / specs.get("A100-SXM4-80GB").peak_flops("bf16"),
          "of dense fp16/bf16 peak", _A100_SUSTAINED[2].source,
          f"a long 16-bit GEMM on random data ({_A100_SUSTAINED[0] / 1e12:.0f} TFLOP/s at "
          f"{' x '.join(map(str, _A100_SUSTAINED[1]))}): the board's power limit holds it below the best of a "
          "quick shape search; training runs GEMMs back to back, so this is the GEMM ceiling wherever such a "
          "figure is published (the A100), the MAMF search's elsewhere"),
    Input("overlap_slowdown", _OVERLAP.figure("gemm_overlapped_ms") / _OVERLAP.figure("gemm_alone_ms"),
          "x (kernel time beside a collective / alone)", _OVERLAP.source,
          "a GEMM of GPT training on an A100 80GB ran this much longer while an NCCL all-gather ran beside it "
          "(the two compete for HBM bandwidth); an overlapped collective of duration c beside compute g "
          "therefore costs max(c - g, c (1 - 1/x)) instead of c"),
    Input("hbm_fraction", 1.80 / 2.039, "of datasheet HBM bandwidth", "nvforum2025a100hbm",
          "achievable HBM bandwidth of a streaming kernel on an A100 80GB SXM (1.80 of 2.039 TB/s, 88%); "
          "memory-bound kernels and the memory side of the GEMM roofline run at it"),
    Input("kernel_gap_s", 1e-6, "s per kernel", "gray2019cudagraphs",
          "gap between back-to-back kernels in one stream (about 1 us: 3.8 us per 2.9 us kernel)"),
    Input("nvswitch_allreduce_busbw", 230e9, "B/s (busbw)", "nccltests149",
          "NCCL all-reduce bus bandwidth inside a DGX A100 (NVSwitch) at large sizes; the ring model with "
          "this link speed reproduces it"),
    Input("nvlink_overhead_s", fabrics.DGX_A100.intra_overhead_s, "s per collective", _LATENCY_SOURCE,
          "fixed cost of one NCCL collective (or send) inside a node: launch, start and end synchronisation, paid "
          "once whatever the number of hops (ampere.fabrics.DGX_A100, derived there from the smallest "
          "all-reduces of 4 and 8 A100s)"),
    Input("nvlink_step_latency_s", fabrics.DGX_A100.intra_latency_s, "s per ring step", _LATENCY_SOURCE,
          "latency of one ring step (hop) over NVLink (ampere.fabrics.DGX_A100, derived from the same logs)"),
    Input("ib_bytes_per_s", fabrics.DGX_A100.inter_bytes_per_s_per_gpu, "B/s per direction per GPU",
          fabrics.DGX_A100.source,
          "one HDR InfiniBand adapter (200 Gb/s) per GPU on a DGX A100 (from ampere.fabrics.DGX_A100)"),
    Input("ib_fraction", 86 / 100, "of InfiniBand line rate", "nccltests175",
          "NCCL all-reduce busbw between two A100 nodes with 4 x HDR (100 GB/s line rate): 86 GB/s"),
    Input("ib_overhead_s", fabrics.DGX_A100.inter_overhead_s, "s per collective", _LATENCY_SOURCE,
          "fixed cost of one NCCL collective (or send) that spans nodes (ampere.fabrics.DGX_A100, derived from "
          "the smallest all-reduces of 2 and 16 nodes of 8 A100s)"),
    Input("ib_step_latency_s", fabrics.DGX_A100.inter_latency_s, "s per step", _LATENCY_SOURCE,
          "latency of one hop between nodes, InfiniBand HDR with NCCL's proxy (ampere.fabrics.DGX_A100, derived "
          "from the same logs)"),
    Input("gpus_per_node", fabrics.DGX_A100.gpus_per_node, "GPUs", fabrics.DGX_A100.source,
          "DGX A100: 8 GPUs on NVSwitch, 8 HDR adapters"),
    Input("grad_accumulation_bytes", 6, "B per parameter per microbatch", "megatronlm2021code",
          "Megatron's local DDP hook adds each microbatch's fp16 gradient into the main-gradient buffer "
          "(read 2 + read 2 + write 2 bytes)"),
    Input("grad_accumulation_bytes_fp32", 10, "B per parameter per microbatch", "megatronlm2022code",
          "with bf16 the main-gradient buffer is fp32 (arguments.py forces fp32 accumulation and all-reduce "
          "for bf16): read 4 + read 2 + write 4 bytes"),
    Input("optimizer_bytes", 60, "B per parameter per step", "megatronlm2021code",
          "fp16 optimizer step: copy grads to fp32 (6), unscale and inf check (8), gradient norm (4) and "
          "clipping (8), Adam (28: read weight, grad, two moments; write three), copy weights back to fp16 (6)"),
    Input("attention_core_ms", _ATTENTION["rows"][0]["time_ms"], "ms", _ATTENTION["source"],
          "Megatron's attention core (Q K^T, softmax, dropout, times V; forward + backward) measured on an "
          "A100 40GB for batch 16, 8 heads of size 64, sequence 2048, fp16, dropout 0.1 (Table 17); the "
          "roofline of the same work divided by this is the attention efficiency applied to every layer"),
    Input("ddp_bucket_bytes", 25e6, "B", "li2020pytorch",
          "PyTorch DDP bucket size: with torch DDP only the last bucket's all-reduce is not hidden"),
)}

#: Memory-bound kernels of one transformer layer in 2021 Megatron-LM (fused kernels as in the paper's
#: section 4.2, no sequence parallelism: the b s h tensors are replicated on every tensor rank). Each row:
#: (name, element count, forward bytes per element, backward bytes per element, why). Element counts:
#: "h" = b s h (replicated), "hp" = b s h / t, "att" = b (a/t) s^2 (attention scores). 16-bit tensors,
#: 1-byte dropout masks [megatronlm2021code].
MEMORY_OPS: tuple[tuple[str, str, float, float, str], ...] = (
    ("input LayerNorm", "h", 4, 6, "read x, write y; backward reads x and dy, writes dx"),
    ("QKV bias add", "3hp", 4, 2, "bias added outside the GEMM (read + write); backward sums the bias gradient"),
    ("QKV gradient concat", "3hp", 0, 4, "backward of splitting Q, K, V concatenates their gradients"),
    ("scale-mask-softmax (fused)", "att", 3, 4, "causal kernel reads the lower triangle, writes all; backward "
                                                 "reads y and dy over the triangle, writes dx"),
    ("attention dropout", "att", 5, 5, "read 2, write 2 + 1-byte mask; backward reads dy and mask, writes dx"),
    ("context transpose", "hp", 4, 4, "[b, a, s, d] to [s, b, h] contiguous copy, and back"),
    ("bias-dropout-add 1 (fused)", "h", 7, 7, "read x and residual, write out and mask; backward reads dy and "
                                               "mask, writes dx, re-reads for the bias gradient"),
    ("residual gradient add 1", "h", 0, 6, "the two gradients reaching the residual input are added"),
    ("post-attention LayerNorm", "h", 4, 6, "as the input LayerNorm"),
    ("bias-GeLU (fused)", "4hp", 4, 8, "read, write; backward reads x and dy, writes dx, re-reads for the bias gradient"),
    ("bias-dropout-add 2 (fused)", "h", 7, 7, "as above, after the MLP"),
    ("residual gradient add 2", "h", 0, 6, "as above"),
)

#: Without Megatron's fused kernels (``Software.fused_kernels`` False) the fused rows of :data:`MEMORY_OPS`
#: become one kernel per operation, bytes per element counted the same way: the scale, the mask and the
#: softmax each read and write the full s x s scores; bias add, GELU; bias add, dropout, residual add.
UNFUSED_OPS: dict[str, tuple[float, float]] = {
    "scale-mask-softmax (fused)": (13, 10),  # scale 4, mask 5 (2 + 1 + 2), softmax 4; backward 6 + 4
    "bias-GeLU (fused)": (8, 8),  # bias add 4, GELU 4; backward GELU 6, bias gradient 2
    "bias-dropout-add 1 (fused)": (15, 7),  # bias 4, dropout 5, residual add 6; backward dropout 5, bias 2
    "bias-dropout-add 2 (fused)": (15, 7),
}

#: Memory-bound work at the two ends of the model, same format as :data:`MEMORY_OPS`. Element counts:
#: "h" = b s h, "logit" = b s V / t (the vocabulary-parallel logits, cast to fp32 for the loss as 2021
#: Megatron did by default), "table" = V h / t (the word-embedding slice) [megatronlm2021code].
END_OPS: tuple[tuple[str, str, float, float, str], ...] = (
    ("embedding lookup, position add, dropout (first stage)", "h", 15, 10,
     "gather 2+2, add 2+2+2, dropout 2+2+1; backward: dropout 5, position gradient 2, scatter-add 3"),
    ("embedding gradient table (first stage)", "table", 0, 2, "the word-embedding gradient slice is written"),
    ("final LayerNorm (last stage)", "h", 4, 6, "as in a layer"),
    ("fp32 cross-entropy (last stage)", "logit", 38, 14,
     "cast to fp32 (2+4), max (4), subtract (8), exp (8), sum (4), normalise (8); backward: scale (8), cast "
     "back (6)"),
)

#: The one run the system-level efficiency is calibrated on (Table 1's smallest row: no tensor or
#: pipeline parallelism, so nothing but GEMMs, memory-bound kernels and an overlapped all-reduce).
CALIBRATION_RUN = "1.7B"

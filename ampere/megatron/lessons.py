"""The chapter's later lessons, computed: when tensor parallelism becomes communication-bound
(:func:`tp_efficiency`), what overlap buys (:func:`overlap_effect`), context parallelism
(:func:`context_parallel`) and expert parallelism (:func:`expert_parallel`), each for one example.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb), sections
"When tensor parallelism stops paying", "Overlap: what hiding communication buys", "Context parallelism"
and "Expert parallelism". Pure: the same hardware model as :func:`estimate`.
"""

from __future__ import annotations

from typing import Any

from .. import check, fabrics, gemm, specs
from ..transformer import TransformerShape
from .comms import overlapped, slowdown_at
from .hardware import _flash_roofline, _gemm, _hardware
from .layer_costs import layer_costs
from .sizing import _cfg
from .stacks import STACKS, software
from .throughput import Estimate, estimate

def _tokens(microbatch: int, cfg: TransformerShape) -> None:
    if microbatch * cfg.seq > gemm.MAX_DIM:
        raise ValueError(f"microbatch x seq = {microbatch} x {cfg.seq} tokens in one GEMM; allowed: at most "
                         f"{gemm.MAX_DIM} (cuBLAS dimensions are 32-bit)")


#: A node whose GPUs each sit in a node of their own: every tensor-parallel collective crosses the network.
_ACROSS_NODES = fabrics.DGX_A100.with_(name="one GPU per node (tensor parallelism across nodes)", gpus_per_node=1,
                                       nvlink_domain=1, hcas_per_node=1)


def tp_efficiency(cfg: TransformerShape, tensor: int, microbatch: int = 1, *, across_nodes: bool = False,
                  sequence_parallel: bool = True, gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> dict[str, float]:
    """Strong-scaling efficiency of one transformer layer split over ``tensor`` GPUs: one GPU's forward +
    backward time over (t x the split layer's time), and the share of the split layer spent in its
    tensor-parallel collectives. Inside a DGX A100 they run over NVSwitch; ``across_nodes=True`` puts every
    rank in its own node, so they cross InfiniBand (one HDR adapter per GPU). Chapter: "When tensor
    parallelism stops paying"."""
    cfg = _cfg(cfg)
    t = check.positive_int("tensor", tensor, maximum=256)
    b = check.positive_int("microbatch", microbatch, maximum=4096)
    _tokens(b, cfg)
    if cfg.heads % t or cfg.n_kv_heads % t:
        raise ValueError(f"tensor={t} does not divide heads={cfg.heads} and kv_heads={cfg.n_kv_heads}")
    net = _ACROSS_NODES if check.boolean("across_nodes", across_nodes) else fabrics.DGX_A100
    sequence_parallel = check.boolean("sequence_parallel", sequence_parallel)
    hw = _hardware(gpu, net)
    hw1 = _hardware(gpu)

    def total(costs: dict[str, dict[str, float]]) -> float:
        return sum(costs["fwd"].values()) + sum(costs["bwd"].values())

    one = total(layer_costs(cfg, hw1, 1, b))
    split = layer_costs(cfg, hw, t, b, sequence_parallel and t > 1)
    comm = split["fwd"]["tensor-parallel all-reduce"] + split["bwd"]["tensor-parallel all-reduce"]
    return {"tensor": t, "efficiency": one / (t * total(split)), "communication_share": comm / total(split),
            "layer_s": total(split)}


def overlap_effect(cfg: TransformerShape, gpus: int, batch: int, tensor: int, pipeline: int, microbatch: int = 1,
                   interleave: int = 1, recompute: str = "selective", *, stack: str = "megatron-2022",
                   **options: Any) -> list[dict[str, Any]]:
    """The same layout with a stack's overlap switched off, as it is, and with perfect overlap (a collective
    beside a longer kernel costs nothing): the iteration time and the exposed communication of each.
    Chapter: "Overlap: what hiding communication buys"."""
    if stack is None:
        raise TypeError(f"stack must be a software stack name or a Software, got None; allowed: {', '.join(STACKS)}")
    base = software(stack)
    if "software" in options:
        raise TypeError("overlap_effect takes the stack as stack=..., not software=...")
    none = base.with_(tp_overlap=False, dp_overlap=False, zero3_prefetch="none", label=f"{base.name}, no overlap")
    full = base.with_(tp_overlap=True, dp_overlap=True, zero3_prefetch="both", label=f"{base.name}, all overlapped")
    rows = []
    for label, sw, ideal in (("no overlap", none, False), ("as the stack does", base, False),
                             ("everything overlapped, interference counted", full, False)):
        est: Estimate = estimate(cfg, gpus, batch, tensor, pipeline, microbatch, interleave, recompute, software=sw,
                                 **options)
        rows.append({"case": label, "time_s": est.time_per_iteration_s, "mfu": est.mfu,
                     "communication_share": est.communication_share(), "estimate": est})
    return rows


def context_parallel(cfg: TransformerShape, context: int, microbatch: int = 1, *,
                     gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> dict[str, float]:
    """Context parallelism for one layer and microbatch: the sequence split over ``context`` GPUs (inside a
    node); each keeps s/c tokens of every activation, and ring attention passes the key and value blocks
    of the other c - 1 GPUs around (forward), their gradients back (backward), beside the attention
    compute. Returns bytes sent per GPU, the attention compute and the ring's time per layer, and the
    activation bytes one GPU keeps (fused attention). Chapter: "Context parallelism"."""
    from .. import memory

    cfg = _cfg(cfg)
    c = check.positive_int("context", context, maximum=8)
    b = check.positive_int("microbatch", microbatch, maximum=4096)
    _tokens(b, cfg)
    hw = _hardware(gpu)
    s = cfg.seq
    kv_bytes = 2 * 2.0 * b * (s // c) * cfg.kv_dim  # K and V of one GPU's chunk, 16-bit
    sent_fwd = (c - 1) * kv_bytes
    sent = 3 * sent_fwd  # forward: K, V; backward: K, V again and their gradients
    # 2(c - 1) ring steps (forward and backward), each one send/receive: a fixed overhead and one NVLink hop
    ring = sent / hw.nvl_bw + 2 * (c - 1) * (hw.net.intra_overhead_s + hw.net.intra_latency_s) if c > 1 else 0.0
    attention = _flash_roofline(hw, s, cfg.head_dim, b * cfg.heads) / c
    act = memory.shape_activation_bytes_per_layer(cfg, b, "none", flash_attention=True) / c
    exposed = overlapped(ring, attention, slowdown_at(hw, hw.nvl_bw))
    return {"context": c, "bytes_sent_per_gpu": sent, "attention_s": attention, "ring_s": ring,
            "exposed_s": exposed, "activation_bytes_per_gpu": act}


def expert_parallel(tokens: int, hidden: int, experts: int, top_k: int, ep: int, *,
                    ffn_hidden: int | None = None, gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> dict[str, float]:
    """Expert parallelism for one mixture-of-experts layer: ``experts`` SwiGLU experts spread over ``ep`` GPUs
    (inside a node); each of a GPU's ``tokens`` goes to its ``top_k`` experts: an all-to-all sends the
    token vectors to the experts' GPUs and another brings the results back, in the forward pass and again
    in the backward pass. Returns the bytes each GPU sends, the all-to-all time and the experts' GEMM time
    per layer (balanced routing), and the expert weights one GPU holds. Chapter: "Expert parallelism"."""
    n = check.positive_int("tokens", tokens, maximum=10**9)
    h = check.positive_int("hidden", hidden, maximum=10**6)
    e = check.positive_int("experts", experts, maximum=4096)
    k = check.positive_int("top_k", top_k, maximum=e)
    g = check.positive_int("ep", ep, maximum=8)
    if e % g:
        raise ValueError(f"ep={g} does not divide experts={e}")
    f = 4 * h if ffn_hidden is None else check.positive_int("ffn_hidden", ffn_hidden, maximum=10**7)
    if n * k > gemm.MAX_DIM:
        raise ValueError(f"tokens x top_k = {n} x {k} routed tokens; allowed: at most {gemm.MAX_DIM} (one GEMM "
                         "dimension, 32-bit in cuBLAS)")
    hw = _hardware(gpu)
    per_pass = n * k * h * 2.0 * (g - 1) / g  # 16-bit token vectors leaving the GPU, one all-to-all
    sent = 4 * per_pass  # dispatch and combine, forward and backward
    # four all-to-alls, each one NCCL operation of g - 1 steps: a fixed overhead and one NVLink hop per step
    a2a = sent / hw.nvl_bw + 4 * (hw.net.intra_overhead_s + (g - 1) * hw.net.intra_latency_s) if g > 1 else 0.0
    routed = n * k  # token-expert pairs a GPU computes, on average
    gemm_fwd = 3 * _gemm(hw, routed, f, h)  # gate, up, down per token-expert pair
    compute = 3 * gemm_fwd  # forward and the two backward GEMMs of each
    weights = e // g * 3 * h * f
    return {"ep": g, "bytes_sent_per_gpu": sent, "all_to_all_s": a2a, "expert_gemm_s": compute,
            "expert_params_per_gpu": weights, "a2a_share": a2a / (a2a + compute)}


"""The package checked against other people's code: the values Megatron-LM's FLOP counter and memory
estimator and DeepSpeed's ZeRO estimators return when run on the same configurations
(``ampere/data/tables/peer-*.json``, each with its commit and file:line), beside what ``ampere`` computes,
and every difference over 1 % with its explanation (``ampere/data/tables/peer-differences.json``: which
term, who is right, the source).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb), section
"Checked against Megatron-LM and DeepSpeed". Pure. :func:`cross_check` is what ``make test`` runs.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import memory, results
from ..transformer import TransformerShape
from .gpu_memory import memory_per_gpu
from .sizing import GPTConfig, flops_per_iteration

#: A difference larger than this (as a fraction of the peer's value) needs an explanation.
TOLERANCE = 0.01
#: How far a computed difference may move from the recorded expected one before the check fails.
EXPECTED_SLACK = 0.002


def _shape(r: dict[str, Any]) -> TransformerShape:
    """A peer row's model as the package's shape, with the peer's (padded) vocabulary."""
    if r.get("glu"):
        return GPTConfig(r["layers"], r["hidden"], r["heads"], r["vocab"], r["seq"], kv_heads=r["kv_heads"],
                         ffn_hidden=r["ffn_hidden"], glu=True, tied_embeddings=r["tied_embeddings"], biases=False,
                         norm=r.get("norm", "rmsnorm"), positions="rope")
    return GPTConfig(r["layers"], r["hidden"], r["heads"], r["vocab"], r["seq"])


def _zero_shape(r: dict[str, Any]) -> TransformerShape:
    """The DeepSpeed rows' models: the package's presets (their exact parameter counts are the peer's)."""
    from ..transformer import preset
    return preset(r["model"])


def _key(table: str, i: int, r: dict[str, Any]) -> str:
    if table == "flops":
        return f"flops:{r['model']}:t{r['tp']}:s{r['seq']}:B{r['global_batch']}"
    if table == "memory":
        return (f"memory:{i}:{r['model']}:t{r['tp']}p{r['pp']}d{r['dp']}v{r['vp'] or 1}:b{r['microbatch']}:"
                f"{'sp' if r['sp'] else 'nosp'}:{r['recompute']}:{'do' if r['distributed_optimizer'] else 'nodo'}")
    return f"zero:{r['model']}:z{r['zero_stage']}:{r['offload']}:n{r['num_gpus']}"


@functools.lru_cache(maxsize=1)
def _explanations() -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["key"], r["component"]): r for r in results.table("peer-differences")["rows"]}


def _status(key: str, component: str, diff: float) -> tuple[str, str]:
    """("within 1 %" | "explained" | "UNEXPLAINED" | "CHANGED", the explanation's term)."""
    ex = _explanations().get((key, component))
    if abs(diff) <= TOLERANCE:
        return ("within 1 %", "") if ex is None else ("STALE explanation", ex["term"])
    if ex is None:
        return "UNEXPLAINED", ""
    if abs(diff - ex["expected_difference"]) > EXPECTED_SLACK:
        return "CHANGED", ex["term"]
    return "explained", ex["term"]


def flops_rows() -> list[dict[str, Any]]:
    """Megatron-LM's ``num_floating_point_operations`` (2026 HEAD with the causal halving, and before it)
    and the paper's eq. 3 beside :func:`flops_per_iteration` in its three conventions."""
    out = []
    for r in results.table("peer-megatron-flops")["rows"]:
        cfg, B = _shape(r), r["global_batch"]
        key = _key("flops", 0, r)
        pairs = [("model vs before 2025-03-06", flops_per_iteration(cfg, B, convention="model"),
                  r["pre_causal_flop_per_iteration"]),
                 ("model-causal vs HEAD", flops_per_iteration(cfg, B, convention="model-causal"),
                  r["head_flop_per_iteration"])]
        if r.get("paper_eq3_full_recompute_flop_per_iteration"):
            pairs.append(("hardware (full) vs eq. 3", flops_per_iteration(cfg, B, "full"),
                          r["paper_eq3_full_recompute_flop_per_iteration"]))
        for comp, ours, theirs in pairs:
            diff = ours / theirs - 1
            status, term = _status(key, comp, diff)
            out.append({"key": key, "model": r["model"], "component": comp, "peer": theirs, "ampere": ours,
                        "difference": diff, "status": status, "term": term})
    return out


def memory_rows() -> list[dict[str, Any]]:
    """Megatron-LM's ``theoretical_memory_usage.py`` (first pipeline stage, the stage it evaluates) beside
    :func:`memory_per_gpu` with the "megatron" convention and a fused attention (the estimator keeps no
    s x s tensor): weights + optimizer state, and activations."""
    out = []
    for i, r in enumerate(results.table("peer-megatron-memory")["rows"]):
        cfg = _shape(r)
        mem = memory_per_gpu(cfg, r["num_gpus"], r["global_batch"], r["tp"], r["pp"], r["microbatch"], r["vp"] or 1,
                             recompute=r["recompute"], sequence_parallel=r["sp"],
                             distributed_optimizer=r["distributed_optimizer"], flash_attention=True,
                             convention="megatron")
        first = mem["stages"]["first"]
        key = _key("memory", i, r)
        for comp, ours, theirs in (("weights + optimizer", first["weights"] + first["gradients"] + first["optimizer"],
                                    r["weight_and_optimizer_bytes"]),
                                   ("activations", first["activations"], r["activation_bytes"])):
            diff = ours / theirs - 1
            status, term = _status(key, comp, diff)
            out.append({"key": key, "model": r["model"], "component": comp, "peer": theirs, "ampere": ours,
                        "difference": diff, "status": status, "term": term,
                        "config": f"t{r['tp']} p{r['pp']} d{r['dp']} v{r['vp'] or 1} b{r['microbatch']} "
                                  f"{'SP ' if r['sp'] else ''}{r['recompute']}"
                                  f"{' dist. opt.' if r['distributed_optimizer'] else ''}"})
    return out


def zero_rows() -> list[dict[str, Any]]:
    """DeepSpeed's ZeRO-2 and ZeRO-3 estimators (GPU bytes) beside :func:`ampere.memory.state_bytes_per_param`
    with the "deepspeed" convention (and its gathered largest module), for every offload setting."""
    out = []
    for r in results.table("peer-deepspeed-zero")["rows"]:
        shape = _zero_shape(r)
        P, N, stage = shape.params, r["num_gpus"], r["zero_stage"]
        offload = r["offload"]
        ours = memory.state_bytes_per_param(stage, N, "deepspeed", offload).total * P
        ours += memory.gathered_layer_bytes(stage, memory.largest_module_params(shape), "deepspeed", offload)
        key = _key("zero", 0, r)
        diff = ours / r["gpu_bytes"] - 1
        status, term = _status(key, "GPU bytes", diff)
        out.append({"key": key, "model": r["model"], "component": "GPU bytes", "peer": float(r["gpu_bytes"]),
                    "ampere": ours, "difference": diff, "status": status, "term": term,
                    "config": f"ZeRO-{stage}, offload {offload}, {N} GPUs",
                    "paper": memory.state_bytes_per_param(stage, N, "paper").total * P if offload == "none" else None})
    return out


def cross_check() -> list[dict[str, Any]]:
    """Every compared value of the three peer tables with its status: "within 1 %", "explained" (a recorded
    explanation whose expected difference still holds), or a failure: "UNEXPLAINED" (over 1 % with no
    explanation), "CHANGED" (the difference moved from the explained one), "STALE explanation" (an
    explanation for a difference now within 1 %)."""
    return flops_rows() + memory_rows() + zero_rows()


def explanations() -> list[dict[str, Any]]:
    """The recorded explanations (term, who is right, reason, source), one per term, with how many compared
    values each explains. Chapter: "Checked against Megatron-LM and DeepSpeed"."""
    terms: dict[str, dict[str, Any]] = {}
    for r in results.table("peer-differences")["rows"]:
        t = terms.setdefault(r["term"], {"term": r["term"], "who_is_right": r["who_is_right"], "reason": r["reason"],
                                         "source": r["source"], "where": r["where"], "values": 0, "differences": []})
        t["values"] += 1
        t["differences"].append(r["expected_difference"])
    return list(terms.values())

"""The lab's tiny GPT: its configuration (:class:`LabConfig`), its parameters and how they are split
over tensor ranks, the layer written functionally (the split model and the single process share every
line of math), the rounding bounds of the comparison (:func:`tolerances`) and the single-process
reference run.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
section "Run it for real, small". The training text ships here (Dickens, public domain). Imports torch
only inside the functions that build or run the model. The distributed run is in ``lab.py``, which
re-exports everything here (the old path ``ampere.megatron_lab`` is ``lab.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

#: Training text: the opening of Charles Dickens, *A Tale of Two Cities* (1859), in the public domain.
TEXT = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of "
    "foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of Light, "
    "it was the season of Darkness, it was the spring of hope, it was the winter of despair, we had "
    "everything before us, we had nothing before us, we were all going direct to Heaven, we were all going "
    "direct the other way - in short, the period was so far like the present period, that some of its "
    "noisiest authorities insisted on its being received, for good or for evil, in the superlative degree "
    "of comparison only. There were a king with a large jaw and a queen with a plain face, on the throne of "
    "England; there were a king with a large jaw and a queen with a fair face, on the throne of France. In "
    "both countries it was clearer than crystal to the lords of the State preserves of loaves and fishes, "
    "that things in general were settled for ever."
)


@dataclass(frozen=True)
class LabConfig:
    """The lab's model and run. Small enough that a CPU step takes milliseconds."""

    tensor: int = 2  # t: tensor-parallel ranks
    pipeline: int = 1  # p: pipeline stages (world size = t x p)
    hidden: int = 32  # h
    heads: int = 4  # a (divisible by t)
    layers: int = 2  # l (divisible by p)
    seq: int = 32  # s
    batch: int = 8  # B sequences per step
    microbatch: int = 4  # b (m = B / b microbatches)
    steps: int = 30  # training steps
    lr: float = 3e-3  # Adam learning rate
    seed: int = 0

    def __post_init__(self) -> None:
        from .. import check

        limits = {"tensor": 8, "pipeline": 8, "hidden": 4096, "heads": 256, "layers": 64, "seq": 512,
                  "batch": 4096, "microbatch": 4096, "steps": 10_000}
        for name, top in limits.items():
            object.__setattr__(self, name, check.positive_int(name, getattr(self, name), maximum=top))
        object.__setattr__(self, "lr", check.positive("lr", self.lr, maximum=10.0))
        object.__setattr__(self, "seed", check.nonneg_int("seed", self.seed, maximum=2**63 - 1))
        if self.hidden % self.heads:
            raise ValueError(f"hidden={self.hidden} must be divisible by heads={self.heads}")
        if self.heads % self.tensor:
            raise ValueError(f"tensor={self.tensor} does not divide heads={self.heads}")
        if self.layers % self.pipeline:
            raise ValueError(f"pipeline={self.pipeline} does not divide layers={self.layers}")
        if self.batch % self.microbatch:
            raise ValueError(f"microbatch={self.microbatch} does not divide batch={self.batch}")
        if self.seq + 1 > len(TEXT):
            raise ValueError(f"seq={self.seq} is longer than the text ({len(TEXT)} characters)")

    @property
    def world_size(self) -> int:
        return self.tensor * self.pipeline

    @property
    def microbatches(self) -> int:
        return self.batch // self.microbatch


def tp_bytes_formula(cfg: LabConfig, element_bytes: int = 4) -> float:
    """Bytes one rank sends for tensor parallelism per step: 8 b s h (t-1)/t per layer and microbatch.

    Chapter: "Run it for real, small" (the paper's section 3.2, counted in elements there). Only the
    layers of the rank's own pipeline stage count; the lab has no recomputation.
    """
    cfg = _lab_config("cfg", cfg)
    element_bytes = _element_bytes(element_bytes)
    t = cfg.tensor
    per_layer = 8 * cfg.microbatch * cfg.seq * cfg.hidden * (t - 1) / t
    return per_layer * (cfg.layers // cfg.pipeline) * cfg.microbatches * element_bytes


def pp_bytes_formula(cfg: LabConfig, element_bytes: int = 4) -> float:
    """Bytes sent across one stage boundary per microbatch and direction: b s h values (section 3.2)."""
    cfg = _lab_config("cfg", cfg)
    return cfg.microbatch * cfg.seq * cfg.hidden * _element_bytes(element_bytes)


def _lab_config(name: str, cfg: Any) -> "LabConfig":
    if not isinstance(cfg, LabConfig):
        raise TypeError(f"{name} must be a LabConfig, got {cfg!r:.60} ({type(cfg).__name__})")
    return cfg


def _element_bytes(value: Any) -> int:
    from .. import check

    return check.choice("element_bytes", value, (1, 2, 4, 8))


# -------------------------------------------------------------------------------------------------------
# The model, written functionally so that the full and the split versions share every line of math
# -------------------------------------------------------------------------------------------------------

def _vocab() -> list[str]:
    return sorted(set(TEXT))


def _init_params(cfg: LabConfig) -> dict[str, Any]:
    """Full-model parameters, identical in every process (seeded CPU generator)."""
    import torch

    g = torch.Generator().manual_seed(cfg.seed)
    V, h, s = len(_vocab()), cfg.hidden, cfg.seq

    def normal(*shape: int, std: float = 0.02) -> Any:
        return (torch.randn(*shape, generator=g) * std).requires_grad_(False)

    p: dict[str, Any] = {"wte": normal(V, h), "wpe": normal(s, h)}
    proj_std = 0.02 / math.sqrt(2 * cfg.layers)
    for i in range(cfg.layers):
        p[f"{i}.ln1_w"] = torch.ones(h)
        p[f"{i}.ln1_b"] = torch.zeros(h)
        p[f"{i}.qkv_w"] = normal(h, 3 * h)
        p[f"{i}.qkv_b"] = normal(3 * h, std=0.01)
        p[f"{i}.proj_w"] = normal(h, h, std=proj_std)
        p[f"{i}.proj_b"] = normal(h, std=0.01)
        p[f"{i}.ln2_w"] = torch.ones(h)
        p[f"{i}.ln2_b"] = torch.zeros(h)
        p[f"{i}.fc1_w"] = normal(h, 4 * h)
        p[f"{i}.fc1_b"] = normal(4 * h, std=0.01)
        p[f"{i}.fc2_w"] = normal(4 * h, h, std=proj_std)
        p[f"{i}.fc2_b"] = normal(h, std=0.01)
    p["lnf_w"] = torch.ones(h)
    p["lnf_b"] = torch.zeros(h)
    p["head_w"] = normal(h, V)
    return p


# How each parameter is split over tensor ranks: "col" (columns, by heads for QKV), "row", or None.
def _split_kind(name: str) -> str | None:
    base = name.split(".")[-1]
    return {"qkv_w": "qkv", "qkv_b": "qkv", "fc1_w": "col", "fc1_b": "col", "proj_w": "row", "fc2_w": "row"}.get(base)


def _shard(name: str, full: Any, rank: int, t: int) -> Any:
    """Rank ``rank``'s slice of parameter ``name`` (a view of ``full``'s values, cloned)."""
    kind = _split_kind(name)
    if kind is None or t == 1:
        return full.clone()
    if kind == "qkv":  # the Q, K and V blocks each keep this rank's heads
        h = full.shape[-1] // 3
        w = h // t
        return __import__("torch").cat([full[..., j * h + rank * w: j * h + (rank + 1) * w] for j in range(3)], -1).clone()
    if kind == "col":
        w = full.shape[-1] // t
        return full[..., rank * w:(rank + 1) * w].clone()
    w = full.shape[0] // t  # row split
    return full[rank * w:(rank + 1) * w].clone()


def _unshard(name: str, shards: Sequence[Any]) -> Any:
    """Reassemble a full tensor from the tensor ranks' slices (inverse of :func:`_shard`)."""
    import torch

    kind = _split_kind(name)
    t = len(shards)
    if kind is None or t == 1:
        return shards[0]
    if kind == "qkv":
        w = shards[0].shape[-1] // 3
        return torch.cat([s[..., j * w:(j + 1) * w] for j in range(3) for s in shards], -1)
    if kind == "col":
        return torch.cat(list(shards), -1)
    return torch.cat(list(shards), 0)


def _stage_names(cfg: LabConfig, stage: int) -> list[str]:
    per = cfg.layers // cfg.pipeline
    names = ["wte", "wpe"] if stage == 0 else []
    for i in range(stage * per, (stage + 1) * per):
        names += [f"{i}.{k}" for k in ("ln1_w", "ln1_b", "qkv_w", "qkv_b", "proj_w", "proj_b", "ln2_w", "ln2_b",
                                        "fc1_w", "fc1_b", "fc2_w", "fc2_b")]
    if stage == cfg.pipeline - 1:
        names += ["lnf_w", "lnf_b", "head_w"]
    return names


def causal_attention(q: Any, k: Any, v: Any) -> Any:
    """softmax(Q K^T / sqrt(d) + causal mask) V over [batch, heads, seq, head_dim] tensors, written out.

    Chapter: "Run it for real, small". Position i attends to positions <= i only; the test suite checks it
    against ``torch.nn.functional.scaled_dot_product_attention(..., is_causal=True)``.
    """
    import torch

    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor) or x.dim() < 2 or not x.is_floating_point():
            raise TypeError(f"{name} must be a floating-point torch.Tensor [..., seq, head_dim], got {x!r:.60} "
                            f"({type(x).__name__})")
    if q.shape != k.shape or k.shape[:-1] != v.shape[:-1]:
        raise ValueError(f"q, k and v must share [..., seq, head_dim] (v may differ in head_dim); got q "
                         f"{tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    s = q.shape[-2]
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()  # on q's device: CUDA refuses a CPU mask
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ v


def tolerances(cfg: "LabConfig", eps: float = 2.0**-23) -> dict[str, float]:
    """Relative tolerances of the split-vs-single-process comparison, derived from rounding, not tuned.

    Chapter: "Run it for real, small". The split model computes the same sums as the single process in
    another order (partial sums per tensor rank, then an all-reduce). For one dot product of length K the
    rounding error of any summation order is at most gamma_K = K u / (1 - K u) times sum |x_i y_i|, with
    u = eps / 2 the unit roundoff (Higham, *Accuracy and Stability of Numerical Algorithms*, eq. 3.5);
    two orders differ by at most twice that. To first order the relative errors of reductions in sequence
    add: a forward pass has D = 6 l + 1 of them (QKV, scores, times V, projection, two MLP matrices per
    layer, the head), the backward two per forward one, and N Adam steps carry the error of each step
    into the next. K is the longest reduction, max(4h, s). The returned bounds, relative to the largest
    magnitude of the reference tensor (the scale standing in for sum |x_i y_i|), are
    ``logits`` = 2 D gamma_K, ``grads`` = 3 x that, ``losses`` = steps x grads. ``eps`` defaults to fp32's
    (2^-23); the lab runs in fp32.
    """
    from .. import check

    cfg = _lab_config("cfg", cfg)
    eps = check.positive("eps", eps, maximum=2.0**-7)  # bf16's epsilon at most: a rounding bound, not a fudge
    u = eps / 2
    k = max(4 * cfg.hidden, cfg.seq)
    if k * u >= 0.5:
        raise ValueError(f"eps={eps:g}: reductions of length K = {k} with unit roundoff {u:g} have no rounding "
                         f"bound (K u >= 1/2); allowed: eps < {1 / k:g} for this configuration")
    gamma = k * u / (1 - k * u)
    depth = 6 * cfg.layers + 1
    logits = 2 * depth * gamma
    return {"K": float(k), "unit_roundoff": u, "logits": logits, "grads": 3 * logits,
            "losses": cfg.steps * 3 * logits}


def _layer(p: dict[str, Any], i: int, x: Any, heads_local: int, f: Any, g: Any) -> Any:
    """One pre-LayerNorm GPT block on this rank's heads; f and g are the tensor-parallel operators."""
    import torch.nn.functional as F

    b, s, h = x.shape
    y = F.layer_norm(x, (h,), p[f"{i}.ln1_w"], p[f"{i}.ln1_b"])
    qkv = f(y) @ p[f"{i}.qkv_w"] + p[f"{i}.qkv_b"]
    hl = qkv.shape[-1] // 3
    q, k, v = (qkv[..., j * hl:(j + 1) * hl].reshape(b, s, heads_local, hl // heads_local).transpose(1, 2)
               for j in range(3))
    ctx = causal_attention(q, k, v).transpose(1, 2).reshape(b, s, hl)
    x = x + g(ctx @ p[f"{i}.proj_w"]) + p[f"{i}.proj_b"]
    y = F.layer_norm(x, (h,), p[f"{i}.ln2_w"], p[f"{i}.ln2_b"])
    mid = F.gelu(f(y) @ p[f"{i}.fc1_w"] + p[f"{i}.fc1_b"])
    return x + g(mid @ p[f"{i}.fc2_w"]) + p[f"{i}.fc2_b"]


def _embed(p: dict[str, Any], tokens: Any) -> Any:
    return p["wte"][tokens] + p["wpe"][: tokens.shape[1]]


def _head(p: dict[str, Any], x: Any) -> Any:
    import torch.nn.functional as F

    return F.layer_norm(x, (x.shape[-1],), p["lnf_w"], p["lnf_b"]) @ p["head_w"]


def _batch(cfg: LabConfig, step: int) -> tuple[Any, Any]:
    """Inputs and targets of one step: ``batch`` random windows of the text (same in every process)."""
    import torch

    ids = torch.tensor([_vocab().index(c) for c in TEXT])
    g = torch.Generator().manual_seed(10_000 + 97 * cfg.seed + step)
    starts = torch.randint(0, len(ids) - cfg.seq - 1, (cfg.batch,), generator=g)
    window = torch.stack([ids[int(s0): int(s0) + cfg.seq + 1] for s0 in starts])
    return window[:, :-1], window[:, 1:]


def _reference(cfg: LabConfig, params: dict[str, Any], steps: int, device: Any = "cpu") -> dict[str, Any]:
    """The same model in one process: first-step logits, loss and gradients, then the loss curve.

    ``device`` is where it runs: the device type of the distributed run (cuda:0 after an NCCL run), so
    that both sides use the same kind of kernels; logits and gradients come back on the CPU.
    """
    import torch

    dev = torch.device(device)
    if dev.type == "cuda":  # full float32 like the workers (a notebook may have switched TF32 on)
        from ..device import tf32_enabled

        with tf32_enabled(False):
            return _reference_run(cfg, params, steps, dev)
    return _reference_run(cfg, params, steps, dev)


def _reference_run(cfg: LabConfig, params: dict[str, Any], steps: int, dev: Any) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    p = {k: v.to(dev).clone().requires_grad_(True) for k, v in params.items()}
    opt = torch.optim.Adam(list(p.values()), lr=cfg.lr)
    ident = lambda z: z  # noqa: E731  (no tensor parallelism: f and g are the identity)
    losses, first = [], {}
    for step in range(steps):
        x_all, y_all = _batch(cfg, step)
        x_all, y_all = x_all.to(dev), y_all.to(dev)
        opt.zero_grad()
        total = 0.0
        logits_all = []
        for mb in range(cfg.microbatches):
            sl = slice(mb * cfg.microbatch, (mb + 1) * cfg.microbatch)
            x = _embed(p, x_all[sl])
            for i in range(cfg.layers):
                x = _layer(p, i, x, cfg.heads, ident, ident)
            logits = _head(p, x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y_all[sl].reshape(-1)) / cfg.microbatches
            loss.backward()
            total += float(loss.detach())
            logits_all.append(logits.detach().cpu())
        if step == 0:
            first = {"loss": total, "logits": torch.cat(logits_all),
                     "grads": {k: v.grad.detach().cpu().clone() for k, v in p.items()}}
        losses.append(total)
        opt.step()
    return {**first, "losses": losses}

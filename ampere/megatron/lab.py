"""A tiny GPT split with tensor and pipeline parallelism and run on ``torch.distributed``.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb), section
"Run it for real, small". The same code runs with gloo on CPU processes and NCCL on GPUs, through
:func:`ampere.launch.spawn`.

* Tensor parallelism as in Megatron-LM [shoeybi2019megatron]: the QKV and first MLP matrices are split
  by columns (each rank owns whole heads), the attention output and second MLP matrices by rows; the
  conjugate operators f (identity forward, all-reduce backward) and g (all-reduce forward, identity
  backward) are the only communication, four all-reduces of b s h values per layer and microbatch.
* Pipeline parallelism: consecutive layers on consecutive ranks, activations sent forward and their
  gradients backward, microbatches in the order of :func:`ampere.megatron.schedule_ops` (1F1B).
* Every byte is counted where it is sent: the all-reduce is a ring written with point-to-point sends
  (reduce-scatter, then all-gather), so the counts are what left each process, not a formula.

The distributed run is checked against the same model in one process: outputs, gradients and the loss
curve must agree (``allclose``).

This file holds the communication (counted), the worker of each rank and the driver (:func:`run_lab`,
:func:`run_labs`, :class:`LabResult`); the tiny GPT itself, its sharding, the training text (Dickens,
public domain) and the single-process reference are in ``lab_model.py``, re-exported here.
``ampere.megatron_lab`` (the old path) is this module. Imports torch only inside functions.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from . import schedules
from .lab_model import (TEXT, LabConfig, _batch, _lab_config, _embed, _head, _init_params, _layer, _reference,  # noqa: F401
                        _reference_run, _shard, _split_kind, _stage_names, _unshard, _vocab, causal_attention,
                        pp_bytes_formula, tolerances, tp_bytes_formula)

__all__ = ["TEXT", "LabConfig", "LabResult", "run_lab", "run_labs", "tp_bytes_formula", "pp_bytes_formula",
           "causal_attention", "tolerances"]


# -------------------------------------------------------------------------------------------------------
# Communication, counted
# -------------------------------------------------------------------------------------------------------

class _Comm:
    """Point-to-point sends and a ring all-reduce built on them; every byte that leaves is counted.

    Each kind of traffic has its own process group (one per tensor-parallel group, and one per stage
    boundary and direction), so that with NCCL, where every group has its own stream, a send of
    activations never waits behind a receive of gradients (the cycle that would deadlock a 1F1B
    pipeline). Ring steps post their send and receive together (``batch_isend_irecv``).
    """

    def __init__(self, rank: int, device: Any) -> None:
        self.rank = rank
        self.device = device
        self.tp_bytes = 0  # sent by tensor-parallel all-reduces
        self.tp_calls = 0
        self.pp_bytes = 0  # sent to other pipeline stages
        self.pp_sends = 0
        self._pending: list[Any] = []

    def ring_all_reduce(self, x: Any, ranks: Sequence[int], group: Any) -> Any:
        """Sum ``x`` over ``ranks``: reduce-scatter then all-gather around a ring, 2(n-1)/n of x per rank."""
        import torch
        import torch.distributed as dist

        n = len(ranks)
        self.tp_calls += 1
        if n == 1:
            return x
        me = ranks.index(self.rank)
        right, left = ranks[(me + 1) % n], ranks[(me - 1) % n]
        flat = x.detach().reshape(-1).clone()
        if flat.numel() % n:
            raise ValueError(f"all-reduce of {flat.numel()} elements does not split into {n} equal chunks")
        chunks = list(flat.chunk(n))
        buf = torch.empty_like(chunks[0])

        def exchange(send_i: int) -> None:
            out = chunks[send_i].contiguous()
            reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, out, right, group),
                                           dist.P2POp(dist.irecv, buf, left, group)])
            for req in reqs:
                req.wait()
            self.tp_bytes += out.numel() * out.element_size()

        for step in range(n - 1):  # reduce-scatter: after n-1 steps chunk (me+1) % n is fully summed here
            exchange((me - step) % n)
            chunks[(me - step - 1) % n] += buf
        for step in range(n - 1):  # all-gather the summed chunks
            exchange((me - step + 1) % n)
            chunks[(me - step) % n].copy_(buf)
        return torch.cat(chunks).reshape(x.shape)

    def send(self, x: Any, dst: int, group: Any) -> None:
        import torch.distributed as dist

        x = x.detach().contiguous()
        self._pending.append((dist.isend(x, dst, group), x))  # keep x alive until the send completes
        self.pp_bytes += x.numel() * x.element_size()
        self.pp_sends += 1

    def recv(self, shape: Sequence[int], src: int, group: Any) -> Any:
        import torch
        import torch.distributed as dist

        buf = torch.empty(*shape, device=self.device)
        dist.recv(buf, src, group)
        return buf

    def flush(self) -> None:
        for req, _x in self._pending:
            req.wait()
        self._pending.clear()


def _groups(cfg: LabConfig, rank: int) -> dict[str, Any]:
    """Create every process group in the same order on every rank; return this rank's."""
    import torch.distributed as dist

    t, pp = cfg.tensor, cfg.pipeline
    mine: dict[str, Any] = {"tp": None, "fwd_in": None, "fwd_out": None, "bwd_in": None, "bwd_out": None}
    for stage in range(pp):
        ranks = [stage * t + r for r in range(t)]
        g = dist.new_group(ranks) if t > 1 else None
        if rank in ranks:
            mine["tp"] = g
    for k in range(pp - 1):  # boundary between stage k and k + 1, one pair per tensor rank, per direction
        for r in range(t):
            pair = [k * t + r, (k + 1) * t + r]
            fwd, bwd = dist.new_group(pair), dist.new_group(pair)
            if rank == pair[0]:
                mine["fwd_out"], mine["bwd_in"] = fwd, bwd
            if rank == pair[1]:
                mine["fwd_in"], mine["bwd_out"] = fwd, bwd
    return mine


def _tp_ops(comm: _Comm, ranks: Sequence[int], group: Any) -> tuple[Any, Any]:
    """Megatron's conjugate operators f (all-reduce in backward) and g (all-reduce in forward)."""
    import torch

    class CopyToTensorParallel(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[override]
            return x

        @staticmethod
        def backward(ctx, grad):  # type: ignore[override]
            return comm.ring_all_reduce(grad, ranks, group)

    class ReduceFromTensorParallel(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[override]
            return comm.ring_all_reduce(x, ranks, group)

        @staticmethod
        def backward(ctx, grad):  # type: ignore[override]
            return grad

    if len(ranks) == 1:
        ident = lambda z: z  # noqa: E731
        return ident, ident
    return CopyToTensorParallel.apply, ReduceFromTensorParallel.apply


# -------------------------------------------------------------------------------------------------------
# The worker (one process per rank) and the driver
# -------------------------------------------------------------------------------------------------------

def _run_one(ctx: Any, cfg: LabConfig) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    t, pp = cfg.tensor, cfg.pipeline
    tp_rank, stage = ctx.rank % t, ctx.rank // t
    tp_ranks = [stage * t + r for r in range(t)]
    dev = ctx.device
    full = _init_params(cfg)
    names = _stage_names(cfg, stage)
    p = {n: _shard(n, full[n], tp_rank, t).to(dev).requires_grad_(True) for n in names}
    comm = _Comm(ctx.rank, dev)
    groups = _groups(cfg, ctx.rank)
    f, g = _tp_ops(comm, tp_ranks, groups["tp"])
    opt = torch.optim.Adam(list(p.values()), lr=cfg.lr)
    per = cfg.layers // pp
    my_layers = range(stage * per, (stage + 1) * per)
    order = schedules.schedule_ops("1f1b", pp, cfg.microbatches)[stage]
    shape = (cfg.microbatch, cfg.seq, cfg.hidden)
    losses: list[float] = []
    first: dict[str, Any] = {}
    counts_first: dict[str, int] = {}
    t0 = time.perf_counter()
    for step in range(cfg.steps):
        x_all, y_all = _batch(cfg, step)
        x_all, y_all = x_all.to(dev), y_all.to(dev)
        opt.zero_grad()
        saved: dict[int, tuple[Any, Any]] = {}  # microbatch -> (stage input, stage output or loss)
        total = 0.0
        logits_out: dict[int, Any] = {}
        tp0, pp0 = comm.tp_bytes, comm.pp_bytes
        for op, mb, _chunk in order:
            sl = slice(mb * cfg.microbatch, (mb + 1) * cfg.microbatch)
            if op == "F":
                if stage == 0:
                    inp = None
                    x = _embed(p, x_all[sl])
                else:
                    inp = comm.recv(shape, (stage - 1) * t + tp_rank, groups["fwd_in"]).requires_grad_(True)
                    x = inp
                for i in my_layers:
                    x = _layer(p, i, x, cfg.heads // t, f, g)
                if stage == pp - 1:
                    logits = _head(p, x)
                    logits_out[mb] = logits.detach().cpu()
                    out = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y_all[sl].reshape(-1)) / cfg.microbatches
                    total += float(out.detach())
                else:
                    out = x
                    comm.send(x, (stage + 1) * t + tp_rank, groups["fwd_out"])
                saved[mb] = (inp, out)
            else:
                inp, out = saved.pop(mb)
                if stage == pp - 1:
                    out.backward()
                else:
                    out.backward(comm.recv(shape, (stage + 1) * t + tp_rank, groups["bwd_in"]))
                if inp is not None:
                    comm.send(inp.grad, (stage - 1) * t + tp_rank, groups["bwd_out"])
        comm.flush()
        if step == 0:
            # NumPy arrays, not tensors: torch would share tensors through file descriptors that die with us
            first = {"loss": total, "grads": {n: v.grad.detach().cpu().numpy().copy() for n, v in p.items()},
                     "logits": torch.cat([logits_out[i] for i in sorted(logits_out)]).numpy() if logits_out else None}
            counts_first = {"tp_bytes": comm.tp_bytes - tp0, "pp_bytes": comm.pp_bytes - pp0,
                            "tp_calls": comm.tp_calls, "pp_sends": comm.pp_sends}
        losses.append(total)
        opt.step()
    return {"rank": ctx.rank, "tp_rank": tp_rank, "stage": stage, "first": first, "losses": losses,
            "counts": counts_first, "step_s": (time.perf_counter() - t0) / cfg.steps, "backend": ctx.backend}


def _lab_worker(ctx: Any, cfgs: Sequence[LabConfig]) -> list[dict[str, Any]]:
    """One process: run every configuration in turn (one process start for several experiments)."""
    return [_run_one(ctx, cfg) for cfg in cfgs]


@dataclass
class LabResult:
    """What :func:`run_lab` found: agreement with one process, the loss curve, and the bytes counted."""

    config: LabConfig
    backend: str
    loss_first_step: float
    reference_loss_first_step: float
    max_abs_logit_diff: float
    max_abs_grad_diff: float
    max_rel_grad_diff: float
    losses: list[float]
    reference_losses: list[float]
    tp_bytes_per_rank: int  # measured in the first step (per rank, its own stage's layers)
    tp_bytes_formula: float
    pp_bytes_per_boundary_per_microbatch: float  # measured: per direction
    pp_bytes_formula: float
    wall_s: float
    step_s: float
    notes: list[str] = field(default_factory=list)
    logit_scale: float = 1.0  # largest |logit| of the reference
    grad_scale: float = 1.0  # largest |gradient| of the reference

    def __post_init__(self) -> None:
        from .. import check

        _lab_config("config", self.config)
        check.one_of("backend", self.backend, ("gloo", "nccl"))
        for f in ("max_abs_logit_diff", "max_abs_grad_diff", "max_rel_grad_diff", "tp_bytes_formula",
                  "pp_bytes_per_boundary_per_microbatch", "pp_bytes_formula", "wall_s", "step_s", "logit_scale",
                  "grad_scale"):
            setattr(self, f, check.nonneg(f, getattr(self, f)))
        self.tp_bytes_per_rank = check.nonneg_int("tp_bytes_per_rank", self.tp_bytes_per_rank)
        for f in ("loss_first_step", "reference_loss_first_step"):  # a diverged run's loss may be NaN
            setattr(self, f, _loss(f, getattr(self, f)))
        for f in ("losses", "reference_losses"):
            setattr(self, f, check.sequence(f, getattr(self, f), _loss, max_len=10_000))
        self.notes = check.sequence("notes", self.notes, check.string, min_len=0, max_len=100)

    @property
    def tolerances(self) -> dict[str, float]:
        """The rounding bounds of :func:`tolerances` for this configuration (fp32)."""
        return tolerances(self.config)

    @property
    def matches_single_process(self) -> bool:
        """Outputs, gradients and the whole loss curve agree with the single-process model within the
        rounding bounds of :func:`tolerances` (relative to the reference's largest magnitude)."""
        tol = self.tolerances
        loss_scale = max(abs(x) for x in self.reference_losses)
        loss_diff = max(abs(a - b) for a, b in zip(self.losses, self.reference_losses))
        return (len(self.losses) == len(self.reference_losses)
                and self.max_abs_logit_diff <= tol["logits"] * self.logit_scale
                and self.max_abs_grad_diff <= tol["grads"] * self.grad_scale
                and loss_diff <= tol["losses"] * loss_scale)

    @property
    def loss_decreased(self) -> bool:
        k = max(1, len(self.losses) // 5)
        return sum(self.losses[-k:]) / k < 0.8 * sum(self.losses[:k]) / k


#: Most configurations :func:`run_labs` runs in one set of processes (each trains for its ``steps``).
MAX_LABS = 16


def _loss(name: str, value: Any) -> float:
    """A loss value: a real number (NaN allowed: a diverged run reports it, and says so in ``notes``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {value!r:.60} ({type(value).__name__})")
    return float(value)


def run_lab(cfg: LabConfig | None = None, backend: str | None = None, timeout_s: float = 60.0, **kwargs: Any) -> LabResult:
    """Train the tiny GPT split over t x p processes and compare it with the same model in one process.

    Chapter: "Run it for real, small". ``cfg`` (or keyword arguments of :class:`LabConfig`) sets the
    layout; ``backend`` is gloo (CPU) or NCCL (one GPU per rank), chosen by :func:`ampere.launch.spawn`
    when None.
    """
    if cfg is not None and kwargs:
        raise TypeError(f"give cfg or LabConfig fields ({', '.join(sorted(kwargs))}), not both")
    cfg = LabConfig(**kwargs) if cfg is None else _lab_config("cfg", cfg)
    return run_labs([cfg], backend=backend, timeout_s=timeout_s)[0]


def run_labs(cfgs: Sequence[LabConfig], backend: str | None = None, timeout_s: float = 60.0) -> list[LabResult]:
    """:func:`run_lab` for several layouts of the same world size, in one set of processes."""
    from .. import launch

    from .. import check

    cfgs = check.sequence("cfgs", cfgs, _lab_config, max_len=MAX_LABS)
    worlds = sorted({c.world_size for c in cfgs})
    if len(worlds) != 1:
        raise ValueError(f"all configurations must have the same world size (tensor x pipeline); got {worlds}")
    t0 = time.perf_counter()
    per_rank = launch.spawn(_lab_worker, worlds[0], args=(cfgs,), backend=backend, timeout_s=timeout_s)
    wall = time.perf_counter() - t0
    return [_compare(cfg, [rank_results[i] for rank_results in per_rank], wall / len(cfgs))
            for i, cfg in enumerate(cfgs)]


def _compare(cfg: LabConfig, results: list[dict[str, Any]], wall: float) -> LabResult:
    import torch

    # compare like with like: after an NCCL run the reference runs on a GPU too (float32 matmuls on the
    # CPU and on cuBLAS round differently, which 30 Adam steps could amplify past the tolerances)
    ref_device = "cuda:0" if results[0]["backend"] == "nccl" else "cpu"
    ref = _reference(cfg, _init_params(cfg), cfg.steps, ref_device)
    t, pp = cfg.tensor, cfg.pipeline
    # reassemble the full gradients: each name from its stage's tensor ranks, in rank order
    grads: dict[str, Any] = {}
    for stage in range(pp):
        ranks = [r for r in results if r["stage"] == stage]
        ranks.sort(key=lambda r: r["tp_rank"])
        for name in _stage_names(cfg, stage):
            grads[name] = _unshard(name, [torch.from_numpy(r["first"]["grads"][name]) for r in ranks])
    abs_diff = max(float((grads[n] - ref["grads"][n]).abs().max()) for n in grads)
    rel_diff = max(float((grads[n] - ref["grads"][n]).abs().max() / (ref["grads"][n].abs().max() + 1e-12)) for n in grads)
    last = [r for r in results if r["stage"] == pp - 1]
    logits = torch.from_numpy(last[0]["first"]["logits"])
    logit_diff = float((logits - ref["logits"]).abs().max())
    losses = last[0]["losses"]
    tp_measured = max(r["counts"]["tp_bytes"] for r in results)
    pp_counts = [r["counts"]["pp_bytes"] for r in results if r["stage"] == 0]
    per_boundary = (pp_counts[0] / cfg.microbatches) if pp > 1 else 0.0
    notes = []
    if any(math.isnan(x) for x in losses):
        notes.append("the loss became NaN")
    return LabResult(cfg, results[0]["backend"], last[0]["first"]["loss"], ref["loss"], logit_diff, abs_diff, rel_diff,
                     losses, ref["losses"], tp_measured, tp_bytes_formula(cfg) if t > 1 else 0.0, per_boundary,
                     pp_bytes_formula(cfg) if pp > 1 else 0.0, wall, max(r["step_s"] for r in results), notes,
                     float(ref["logits"].abs().max()), max(float(ref["grads"][n].abs().max()) for n in grads))

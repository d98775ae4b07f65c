"""Real collectives on ``torch.distributed`` (gloo on CPU processes, NCCL with one GPU per rank) and
GPU-to-GPU copies: the chapter's measurement and its lab.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), sections "Real collectives on
torch.distributed" and "Measuring the links". :func:`run_collective` spawns the ranks with
:func:`ampere.launch.spawn`, which imports :func:`_collective_rank` from this module by its path; every rank
checks its result exactly, and the time of a call is the **max over ranks**. :func:`p2p_copy_bandwidth`
times copies between two GPUs. torch is imported only inside the functions that measure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .. import check
from .. import fields as _fields
from ..collectives import algorithm_bandwidth, bus_bandwidth, check_op


_ELEMENT_BYTES = 4  # float32 buffers
#: Values are small integers so every sum is exact in float32 and results are checked bit for bit.
_VALUE_MAX = 8

#: Default sizes of the gloo lab: 4 KiB ... 4 MiB (x2), 11 sizes.
LAB_SIZES_BYTES: tuple[int, ...] = tuple(4096 * 2**k for k in range(11))


#: The largest buffer per rank a run accepts (32 GiB) and the most sizes in one sweep: every size's buffers
#: are allocated before the timing starts, so both are checked before any process starts.
MAX_SIZE_BYTES = 2**35
MAX_SIZES = 64


def _check_sizes(op: str, sizes_bytes: Sequence[int], world_size: int) -> list[int]:
    if isinstance(sizes_bytes, int) and not isinstance(sizes_bytes, bool):
        sizes_bytes = [sizes_bytes]
    sizes = check.sequence("sizes_bytes", sizes_bytes,
                           lambda name, v: check.integer(name, v, minimum=1, maximum=MAX_SIZE_BYTES),
                           min_len=0, max_len=MAX_SIZES)
    if not sizes:
        raise ValueError("sizes_bytes is empty; give at least one size in bytes")
    unit = _ELEMENT_BYTES * (world_size if op in ("all_gather", "reduce_scatter") else 1)
    for s in sizes:
        if s % unit:
            raise ValueError(f"sizes_bytes contains {s}; for op={op!r} on {world_size} ranks each size must be a "
                             f"positive multiple of {unit} bytes (float32 elements"
                             + (", split evenly over the ranks)" if unit > _ELEMENT_BYTES else ")"))
    return sizes


class _Buffers:
    """Input/output tensors of one collective and one size, with reset and an exact check of the result."""

    def __init__(self, op: str, size_bytes: int, rank: int, n: int, device: Any) -> None:
        import torch

        self.op, self.rank, self.n, self.size = op, rank, n, size_bytes
        count = size_bytes // _ELEMENT_BYTES
        gen = torch.Generator().manual_seed(20200514)  # the same base data on every rank
        # drawn directly as float32 on the CPU generator: an int64 draw would need twice the host memory
        # for the GiB-sized buffers of a GPU sweep (8 ranks x 8 GiB for the 4 GiB size)
        base = torch.randint(1, _VALUE_MAX + 1, (count,), generator=gen, dtype=torch.float32)
        self.base = base.to(device)
        self.scale = float(rank + 1)  # rank r contributes (r+1) x base: sums are base x n(n+1)/2
        self.total = n * (n + 1) / 2
        if op in ("all_reduce", "reduce", "broadcast"):
            self.work = torch.empty_like(self.base)
        elif op == "all_gather":
            self.inp = self.base.view(n, -1)[rank] * self.scale
            self.work = torch.empty_like(self.base)
        elif op == "reduce_scatter":
            self.inp = self.base * self.scale
            self.work = torch.empty(count // n, dtype=torch.float32, device=device)
        self.reset()

    def reset(self) -> None:
        if self.op in ("all_reduce", "reduce"):
            self.work.copy_(self.base).mul_(self.scale)
        elif self.op == "broadcast":
            self.work.copy_(self.base) if self.rank == 0 else self.work.fill_(-1.0)
        else:
            self.work.fill_(-1.0)

    def call(self) -> None:
        import torch.distributed as dist

        if self.op == "all_reduce":
            dist.all_reduce(self.work)
        elif self.op == "broadcast":
            dist.broadcast(self.work, src=0)
        elif self.op == "reduce":
            dist.reduce(self.work, dst=0)
        elif self.op == "all_gather":
            (getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor)(self.work, self.inp)
        else:
            (getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor)(self.work, self.inp)

    def check(self) -> None:
        """Raise ValueError unless the result is exactly what the collective must produce."""
        import torch

        if self.op in ("all_reduce",) or (self.op == "reduce" and self.rank == 0):
            expected = self.base * self.total
        elif self.op == "reduce":
            return  # non-root buffers of reduce are unspecified
        elif self.op == "broadcast":
            expected = self.base
        elif self.op == "all_gather":
            factors = torch.arange(1, self.n + 1, dtype=torch.float32, device=self.base.device)
            expected = (self.base.view(self.n, -1) * factors[:, None]).reshape(-1)
        else:
            expected = self.base.view(self.n, -1)[self.rank] * self.total
        if not torch.equal(self.work, expected):
            bad = int((self.work != expected).sum())
            raise ValueError(f"rank {self.rank}: {self.op} of {self.size} bytes returned {bad} wrong elements "
                             f"of {expected.numel()}")


def _max_calls_per_sample(op: str, n: int) -> int:
    # in-place sums grow by about n per call between resets: stay far from float32 overflow
    if op in ("all_reduce", "reduce") and n > 1:
        return max(1, min(64, int(30 / math.log10(max(n, 2)))))
    return 64


def _pin_to_core(rank: int, world_size: int) -> int | None:
    """Pin a CPU rank to one core (Linux) when there are at least as many cores as ranks.

    Two processes that migrate between two shared cores thrash each other's caches; pinned, the gloo lab's
    timings are steadier. Returns the core, or None when pinning is not possible.
    """
    import os

    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    if len(cores) < world_size:
        return None
    core = cores[rank % len(cores)]
    try:
        os.sched_setaffinity(0, {core})
    except OSError:
        return None
    return core


def _measure_op(ctx: Any, op: str, sizes: list[int], samples: int, warmup: int, target_sample_s: float,
                barrier: Any, sync: Any) -> list[dict[str, Any]]:
    """Warm up, time and verify ``op`` at every size on this rank (inside a running process group)."""
    import time

    import torch
    import torch.distributed as dist

    dev = torch.device(ctx.device)
    kmax = _max_calls_per_sample(op, ctx.world_size)
    bufs, calls = [], []
    for size in sizes:
        buf = _Buffers(op, size, ctx.rank, ctx.world_size, dev)
        for _ in range(warmup):
            buf.call()
        buf.reset()
        barrier()
        t0 = time.perf_counter()
        buf.call()
        sync()
        est = torch.tensor([time.perf_counter() - t0], dtype=torch.float64, device=dev)
        dist.all_reduce(est, op=dist.ReduceOp.MAX)  # every rank must choose the same number of calls
        calls.append(max(1, min(kmax, math.ceil(target_sample_s / max(float(est.item()), 1e-9)))))
        bufs.append(buf)
    # samples are taken in rounds over all sizes, so a burst of load on a shared machine spreads over
    # every size instead of spoiling one
    times: list[list[float]] = [[] for _ in sizes]
    for _ in range(samples):
        for i, (buf, k) in enumerate(zip(bufs, calls)):
            buf.reset()
            barrier()
            t0 = time.perf_counter()
            for _ in range(k):
                buf.call()
            sync()
            times[i].append((time.perf_counter() - t0) / k)
    out = []
    for buf, k, ts in zip(bufs, calls, times):
        buf.reset()
        barrier()
        buf.call()
        sync()
        buf.check()
        out.append({"size_bytes": buf.size, "calls_per_sample": k, "samples_s": ts})
    return out


def _collectives_rank(ctx: Any, plan: list[tuple[str, list[int], int]], warmup: int,
                      target_sample_s: float) -> dict[str, Any]:
    """One rank's measurement of several collectives, ``plan`` = [(op, sizes, samples), ...], on one process
    group (runs inside ``launch.spawn`` or under torchrun)."""
    import torch
    import torch.distributed as dist

    dev = torch.device(ctx.device)
    is_cuda = dev.type == "cuda"
    # torch.cuda.synchronize waits for every stream of the device, NCCL's internal stream included, so the
    # host clock read after it covers the whole collective
    sync = (lambda: torch.cuda.synchronize(dev)) if is_cuda else (lambda: None)
    token = torch.zeros(1, device=dev)  # zeros: repeated in-place sums stay 0 (ones would grow n-fold per call)

    def barrier() -> None:  # an all-reduce of one element: works on every backend, no warnings
        dist.all_reduce(token)
        sync()

    pinned = _pin_to_core(ctx.rank, ctx.world_size) if not is_cuda else None
    barrier()  # communicator set-up happens here, not in a timed call
    ops = {op: _measure_op(ctx, op, sizes, samples, warmup, target_sample_s, barrier, sync)
           for op, sizes, samples in plan}
    name = torch.cuda.get_device_name(dev) if is_cuda else "CPU"
    return {"rank": ctx.rank, "device_name": name, "ops": ops, "pinned_core": pinned}


def _collective_rank(ctx: Any, op: str, sizes: list[int], samples: int, warmup: int,
                     target_sample_s: float) -> dict[str, Any]:
    """One rank's measurement of one collective (runs inside ``launch.spawn`` or under torchrun)."""
    out = _collectives_rank(ctx, [(op, sizes, samples)], warmup, target_sample_s)
    return {"rank": out["rank"], "device_name": out["device_name"], "records": out["ops"][op],
            "pinned_core": out["pinned_core"]}


@dataclass
class CollectiveRun:
    """What :func:`run_collective` returns (chapter: *NVLink, NVSwitch and collectives*, "Real collectives").

    ``records[i]`` holds, for ``sizes_bytes[i]``: ``samples_s`` (per call, each the **max over ranks**),
    ``median_s``, ``algbw_bytes_per_s`` and ``busbw_bytes_per_s`` (from the median) and ``verified``.
    """

    op: str
    world_size: int
    backend: str
    device_name: str
    records: list[dict[str, Any]]

    def __post_init__(self) -> None:
        check_op(self.op)
        _fields.check_annotated(self, positive=("world_size",))
        check.one_of("backend", self.backend, ("gloo", "nccl"))
        for i, r in enumerate(self.records):
            if not isinstance(r, Mapping) or "size_bytes" not in r or "samples_s" not in r:
                raise TypeError(f"records[{i}] must be a dict with size_bytes and samples_s, got {r!r:.60}")

    @property
    def sizes_bytes(self) -> list[int]:
        return [r["size_bytes"] for r in self.records]

    @property
    def times_s(self) -> list[float]:
        return [r["median_s"] for r in self.records]

    @property
    def algbw_bytes_per_s(self) -> list[float]:
        return [r["algbw_bytes_per_s"] for r in self.records]

    @property
    def busbw_bytes_per_s(self) -> list[float]:
        return [r["busbw_bytes_per_s"] for r in self.records]

    @property
    def verified(self) -> bool:
        return all(r["verified"] for r in self.records)

    def quantile_s(self, q: float) -> list[float]:
        """The ``q``-th percentile (0-100) of each size's samples, in seconds.

        The chapter fits the alpha-beta model to the 10th percentile: on a shared CPU machine the scheduler
        only ever adds time, and a low percentile is the cost of the collective itself.
        """
        import numpy as np

        q = check.real("q", q)
        if not 0 <= q <= 100:
            raise ValueError(f"q={q!r} must be a percentile between 0 and 100")
        return [float(np.percentile(r["samples_s"], q)) for r in self.records]

    def measurement(self, i: int) -> Any:
        """``ampere.timing.Measurement`` of size ``i`` (host clock, max over ranks per sample)."""
        from ..timing import Measurement

        r = self.records[i]
        return Measurement(label=f"{self.op} {r['size_bytes']} B x {self.world_size} ranks ({self.backend})",
                           samples_s=r["samples_s"], calls_per_sample=r["calls_per_sample"], mode="host",
                           device=self.device_name,
                           params={"op": self.op, "size_bytes": r["size_bytes"], "world_size": self.world_size,
                                   "backend": self.backend, "time_statistic": "median over samples of max over ranks"})


def _aggregate(op: str, world_size: int, backend: str, per_rank: list[dict[str, Any]]) -> CollectiveRun:
    import numpy as np

    records = []
    for i, first in enumerate(per_rank[0]["records"]):
        ks = {pr["records"][i]["calls_per_sample"] for pr in per_rank}
        if len(ks) != 1:  # cannot happen: the count is agreed collectively; keep the invariant explicit
            raise RuntimeError(f"ranks disagree on calls per sample: {sorted(ks)}")
        mat = np.array([pr["records"][i]["samples_s"] for pr in per_rank])  # ranks x samples
        worst = mat.max(axis=0)  # time of one sample = the slowest rank
        median = float(np.median(worst))
        algbw = algorithm_bandwidth(first["size_bytes"], median)
        records.append({"size_bytes": first["size_bytes"], "calls_per_sample": first["calls_per_sample"],
                        "samples_s": [float(x) for x in worst], "median_s": median,
                        "p25_s": float(np.percentile(worst, 25)), "p75_s": float(np.percentile(worst, 75)),
                        "algbw_bytes_per_s": algbw, "busbw_bytes_per_s": bus_bandwidth(op, algbw, world_size),
                        "verified": True})
    return CollectiveRun(op, world_size, backend, per_rank[0]["device_name"], records)


#: The most collectives :func:`run_collectives` measures on one set of processes.
MAX_PLAN_OPS = 16
#: The most samples per size (each one a barrier and a timed call).
MAX_SAMPLES = 100_000


def run_collectives(plan: Mapping[str, Sequence[int]], world_size: int, backend: str | None = None, *,
                    samples: int | Mapping[str, int] = 10, warmup: int | None = None,
                    target_sample_s: float | None = None, timeout_s: float = 60.0) -> dict[str, CollectiveRun]:
    """Run several collectives on one set of ``world_size`` processes: ``plan`` maps each op to its sizes.

    Chapter: *NVLink, NVSwitch and collectives*, section "Real collectives". Same measurement as
    :func:`run_collective` (every result verified on every rank, max over ranks, median over samples),
    with one start-up for all of them: starting the processes, importing torch and forming the process
    group cost seconds, far more than a lab's measurements on a loaded machine. ``samples`` is one count
    for every op or a mapping ``op -> count``. Returns ``{op: CollectiveRun}`` in the order of ``plan``.
    """
    if not isinstance(plan, Mapping) or not plan:
        raise TypeError(f"plan must be a non-empty mapping op -> sizes in bytes, got {plan!r:.60}")
    if len(plan) > MAX_PLAN_OPS:
        raise ValueError(f"plan has {len(plan)} collectives; allowed: at most {MAX_PLAN_OPS}")
    world_size = check.bounded_int("world_size", world_size, 1, _max_world(), why="processes on one machine")
    ops = [check_op(op) for op in plan]
    if isinstance(samples, Mapping):
        unknown = sorted(set(samples) - set(ops), key=str)
        if unknown:
            raise ValueError(f"samples names {unknown}, which are not in plan; allowed: {', '.join(ops)}")
        counts = {op: check.bounded_int(f"samples[{op!r}]", samples.get(op, 10), 1, MAX_SAMPLES) for op in ops}
    else:
        n = check.bounded_int("samples", samples, 1, MAX_SAMPLES, why="timed calls per size")
        counts = {op: n for op in ops}
    sizes = {op: _check_sizes(op, plan[op], world_size) for op in ops}
    if warmup is not None:
        warmup = check.bounded_int("warmup", warmup, 0, MAX_SAMPLES)
    if target_sample_s is not None:
        target_sample_s = check.nonneg("target_sample_s", target_sample_s, maximum=60.0)
    from .. import launch

    timeout_s = check.positive("timeout_s", timeout_s, maximum=launch.MAX_TIMEOUT_S)
    backend = launch.default_backend(world_size) if backend is None else backend
    if backend not in ("gloo", "nccl"):
        raise ValueError(f"backend={backend!r} is not supported; allowed: 'gloo', 'nccl'")
    gpu = backend == "nccl"
    if gpu:
        import torch

        visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if world_size > visible:
            raise ValueError(f"backend='nccl' needs one GPU per rank: world_size={world_size} but {visible} "
                             "CUDA GPU(s) visible; allowed: world_size <= the GPU count, or backend='gloo'")
    warmup = (5 if gpu else 2) if warmup is None else warmup
    target = (1e-3 if gpu else 0.0) if target_sample_s is None else target_sample_s
    steps = [(op, sizes[op], counts[op]) for op in ops]
    per_rank = launch.spawn(_collectives_rank, world_size, args=(steps, warmup, target), backend=backend,
                            timeout_s=timeout_s)
    return {op: _aggregate(op, world_size, backend, [{"device_name": pr["device_name"], "records": pr["ops"][op]}
                                                     for pr in per_rank]) for op in ops}


def _max_world() -> int:
    from .. import launch

    return launch.MAX_WORLD_SIZE


def run_collective(op: str, sizes_bytes: Sequence[int], world_size: int, backend: str | None = None, *,
                   samples: int = 10, warmup: int | None = None, target_sample_s: float | None = None,
                   timeout_s: float = 60.0) -> CollectiveRun:
    """Run ``op`` on ``world_size`` processes for every size, verify every result, time it.

    Chapter: *NVLink, NVSwitch and collectives*, section "Real collectives". Processes come from
    :func:`ampere.launch.spawn`: gloo on CPU processes, NCCL when there is one GPU per rank (the same
    code). Every rank checks its result exactly (a wrong result raises); the time of one call is the
    **max over ranks** of each sample, the reported time the median over ``samples`` samples; a sample
    batches as many calls as fill ``target_sample_s`` (default 1 ms on GPUs, one call on CPUs).
    A rank that fails or hangs makes the call raise ``RuntimeError`` (process groups have ``timeout_s``);
    bad input (unknown op, sizes that do not split over the ranks, ``backend="nccl"`` with fewer visible
    GPUs than ranks) raises ``ValueError`` before any process starts. Several collectives on one set of
    processes: :func:`run_collectives`.
    """
    check_op(op)
    return run_collectives({op: sizes_bytes}, world_size, backend, samples=samples, warmup=warmup,
                           target_sample_s=target_sample_s, timeout_s=timeout_s)[op]


def p2p_copy_bandwidth(src: int = 0, dst: int = 1, size_bytes: int = 256 * 2**20, **bench_kwargs: Any) -> dict[str, Any]:
    """One-way copy bandwidth from GPU ``src`` to GPU ``dst`` (bytes/s, per direction), copy engines.

    Chapter: *NVLink, NVSwitch and collectives*, section "Measuring the links". Needs two CUDA GPUs.
    ``Tensor.copy_`` between devices of contiguous tensors is one device-to-device ``cudaMemcpyAsync`` on
    the **source** device's current stream (copy engines, over NVLink when the pair has it, else PCIe), so
    the CUDA events are recorded on that stream (``torch.cuda.device(src)``); the bytes counted are the
    ``size_bytes`` that cross the link once. Compare with the per-direction line rate, never the
    bidirectional sum.
    """
    src = check.nonneg_int("src", src, maximum=MAX_PLAN_OPS * 64)
    dst = check.nonneg_int("dst", dst, maximum=MAX_PLAN_OPS * 64)
    check.integer("size_bytes", size_bytes, minimum=1, maximum=MAX_SIZE_BYTES)
    if src == dst:
        raise ValueError(f"src={src} and dst={dst} must differ (a copy between two GPUs)")
    import torch

    from .. import timing

    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        raise ValueError("p2p_copy_bandwidth needs at least 2 CUDA GPUs; this machine has "
                         f"{torch.cuda.device_count() if torch.cuda.is_available() else 0}")
    src = check.nonneg_int("src", src, maximum=torch.cuda.device_count() - 1)
    dst = check.nonneg_int("dst", dst, maximum=torch.cuda.device_count() - 1)
    if src == dst:
        raise ValueError(f"src={src} and dst={dst} must differ")
    size = _check_sizes("broadcast", [size_bytes], 1)[0]
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(size // _ELEMENT_BYTES, generator=gen).to(f"cuda:{src}")
    b = torch.empty(size // _ELEMENT_BYTES, device=f"cuda:{dst}")
    peer = torch.cuda.can_device_access_peer(src, dst)
    with torch.cuda.device(src):
        m = timing.benchmark(lambda: b.copy_(a), label=f"copy cuda:{src} -> cuda:{dst}", device=f"cuda:{src}",
                             params={"src": src, "dst": dst, "size_bytes": size, "peer_access": peer},
                             **bench_kwargs)
    if not torch.equal(b.cpu(), a.cpu()):
        raise RuntimeError(f"p2p copy cuda:{src} -> cuda:{dst} returned wrong data")
    return {"measurement": m, "bytes_per_s": m.rate(size), "peer_access": peer, "size_bytes": size}

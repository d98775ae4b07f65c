"""``python -m ampere bench collectives``: :func:`bench_main` (registered in :mod:`ampere.cli`) and its
helpers, spawned ranks or a torchrun launch.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), section "Measuring the links". Sizes,
samples, the result record and its notes (the alpha-beta fit of :mod:`.fit`); the measuring itself is
:mod:`.measure`. torch is imported only inside the functions.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import check
from ..collectives import OPS
from .fit import FIT_PERCENTILE, holdout_check
from .measure import (_ELEMENT_BYTES, CollectiveRun, _aggregate, _check_sizes, _collective_rank, p2p_copy_bandwidth,
                      run_collective)


def _default_sizes(gpu: bool, quick: bool) -> list[int]:
    if gpu:  # 4 KiB ... 4 GiB (x4): 8 A100s need GiB-sized buffers to approach 230 GB/s of busbw
        return [4096 * 4**k for k in range(8 if quick else 11)]
    return [4096 * 2**k for k in range(9 if quick else 11)]  # 4 KiB ... 1 or 4 MiB


def _parse_size(text: str) -> int:
    units = {"": 1, "B": 1, "K": 2**10, "KIB": 2**10, "M": 2**20, "MIB": 2**20, "G": 2**30, "GIB": 2**30}
    t = text.strip().upper()
    num = t.rstrip("KMGIB")
    unit = t[len(num):]
    if unit not in units or not num.isdigit():
        raise ValueError(f"size {text!r} is not understood; write bytes or a power-of-two unit: 64K, 4M, 1G")
    return int(num) * units[unit]


class _EnvContext:
    """Rank information of a torchrun launch, shaped like ``launch.RankContext``."""

    def __init__(self, rank: int, world_size: int, local_rank: int, backend: str) -> None:
        import torch

        self.rank, self.world_size, self.backend = rank, world_size, backend
        self.device = torch.device(f"cuda:{local_rank}") if backend == "nccl" else torch.device("cpu")


def _under_torchrun() -> bool:
    import os

    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench collectives``: all-reduce (or another collective) busbw vs size, and P2P.

    Chapter: *NVLink, NVSwitch and collectives*, section "Measuring the links". Two ways to run it:

    * ``python -m ampere bench collectives --world-size 8`` spawns 8 local processes (NCCL with one GPU
      each when there are 8 GPUs, gloo on CPU otherwise) and, with 2+ GPUs, measures P2P copies;
    * ``torchrun --nnodes N --nproc-per-node 8 -m ampere bench collectives`` measures across the
      launched ranks (NCCL), rank 0 writes the result. Records NCCL's version and the NCCL_* environment.
    """
    if argv is not None:
        argv = check.sequence("argv", argv, lambda name, v: check.string(name, v, allow_empty=True), min_len=0,
                              max_len=256)
    import os

    from .. import benchcli, device, results

    p = benchcli.bench_parser("collectives", "Collective bandwidth (algbw, busbw) vs message size, and GPU-GPU copies.")
    p.add_argument("--op", default="all_reduce", choices=OPS, help="collective to measure (default all_reduce)")
    p.add_argument("--world-size", type=int, default=None,
                   help="local processes to spawn (default: the number of GPUs if >= 2, else 2); ignored "
                        "under torchrun")
    p.add_argument("--backend", choices=("gloo", "nccl"), default=None, help="default: nccl with a GPU per rank")
    p.add_argument("--sizes", default=None,
                   help="comma-separated sizes per rank (e.g. 64K,1M,256M); default: a x4 sweep")
    p.add_argument("--samples", type=int, default=None,
                   help="samples per size (default 20 on GPUs and 40 on CPUs; --quick: 10 and 20)")
    p.add_argument("--p2p-bytes", default="256M", help="size of the GPU-to-GPU copies (default 256M)")
    p.add_argument("--no-p2p", action="store_true", help="skip the GPU-to-GPU copy measurement")
    args = p.parse_args(list(argv) if argv is not None else None)
    if args.samples is not None and args.samples < 1:
        p.error(f"--samples {args.samples} must be >= 1")
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")}

    if _under_torchrun():
        return _bench_torchrun(args, env)

    info = benchcli.probe(args)
    ngpu = info.gpu_count if info.backend == "cuda" else 0
    if args.world_size is not None and args.world_size < 1:
        p.error(f"--world-size {args.world_size} must be an integer >= 1 (ranks to spawn)")
    world = args.world_size if args.world_size is not None else (ngpu if ngpu >= 2 else 2)
    from .. import launch

    if args.device == "cpu" and args.backend == "nccl":
        p.error("--backend nccl needs GPUs; --device cpu runs gloo ranks on the CPU")
    backend = args.backend or ("gloo" if info.backend != "cuda" else launch.default_backend(world))
    if backend == "nccl" and world > ngpu:
        p.error(f"--backend nccl needs one GPU per rank: --world-size {world} but {ngpu} GPU(s) visible")
    samples = _default_samples(args, backend)
    try:
        sizes = _bench_sizes(args, backend, world)
        p2p_bytes = _check_sizes("broadcast", [_parse_size(args.p2p_bytes)], 1)[0]
    except ValueError as exc:
        p.error(str(exc))
    notes = []
    if backend == "nccl" and info.memory_bytes:
        sizes, dropped = _fit_in_memory(sizes, world, info.memory_bytes)
        if dropped:
            notes.append(f"sizes {dropped} dropped: their buffers would not fit in 40% of the GPU memory")
    records = []
    if ngpu >= 2 and not args.no_p2p:
        for src, dst in ((0, 1), (1, 0)):
            r = p2p_copy_bandwidth(src, dst, p2p_bytes)
            records.append({"params": {"kind": "p2p_copy", "src": src, "dst": dst, "size_bytes": r["size_bytes"],
                                       "peer_access": r["peer_access"]},
                            "measurement": r["measurement"].to_dict(),
                            "derived": {"bytes_per_s_per_direction": r["bytes_per_s"]}})
        import torch

        torch.cuda.empty_cache()  # give the copies' buffers back before the ranks allocate theirs
    elif not args.no_p2p:
        notes.append(f"P2P copies skipped: {ngpu} GPU(s) visible, 2 needed")
    if backend == "gloo" and info.is_gpu:
        notes.append("gloo on CPU processes: these collectives measure the host (loopback TCP), not the GPUs")
    run = run_collective(args.op, sizes, world, backend, samples=samples, timeout_s=300.0 if backend == "nccl" else 60.0)
    records += _run_records(run)
    notes += _fit_notes(run)
    result = results.make_result("collectives", info, {
        "op": args.op, "world_size": world, "backend": backend, "sizes_bytes": sizes, "samples": samples,
        "launcher": "ampere.launch.spawn", "nodes": 1, "nccl_version": info.nccl_version, "nccl_env": env,
        "dtype": "float32", "time_statistic": "median over samples of the max over ranks"}, records, notes)
    return benchcli.finish_bench(result, args, _summary(run))


def _default_samples(args: Any, backend: str) -> int:
    if args.samples:
        return int(args.samples)
    if backend == "nccl":
        return 10 if args.quick else 20
    return 20 if args.quick else 40


def _bench_sizes(args: Any, backend: str, world: int) -> list[int]:
    """Sizes of the sweep, each a whole number of float32 elements per rank (valid for every op).

    A size given with ``--sizes`` that is not a multiple of 4 x world-size bytes is refused with the
    nearest valid sizes (never silently rounded); the default sweep is made of valid sizes.
    """
    unit = _ELEMENT_BYTES * world
    if not args.sizes:
        return [max(unit, s - s % unit) for s in _default_sizes(backend == "nccl", args.quick)]
    sizes = [_parse_size(s) for s in args.sizes.split(",")]
    for s in sizes:
        if s <= 0 or s % unit:
            below, above = s - s % unit, s - s % unit + unit
            near = f"{below} or {above}" if below > 0 else f"{above}"
            raise ValueError(f"--sizes {s}: each size must be a positive multiple of {unit} bytes (float32 "
                             f"elements split over {world} ranks); nearest valid: {near}")
    return sizes


def _fit_in_memory(sizes: list[int], world: int, memory_bytes: float) -> tuple[list[int], list[int]]:
    """Drop the largest sizes until every buffer of the sweep (about 2.5 x each size) fits in 40% of memory."""
    kept = sorted(sizes)
    dropped = []
    while kept and 2.5 * sum(kept) > 0.4 * memory_bytes:
        dropped.append(kept.pop())
    return kept, sorted(dropped)


def _run_records(run: CollectiveRun) -> list[dict[str, Any]]:
    return [{"params": {"kind": "collective", "op": run.op, "size_bytes": r["size_bytes"],
                        "world_size": run.world_size, "backend": run.backend},
             "measurement": run.measurement(i).to_dict(),
             "derived": {"algbw_bytes_per_s": r["algbw_bytes_per_s"], "busbw_bytes_per_s": r["busbw_bytes_per_s"],
                         "verified": r["verified"]}} for i, r in enumerate(run.records)]


def _fit_notes(run: CollectiveRun) -> list[str]:
    if run.world_size < 2 or len(run.records) < 4:
        return []
    h = holdout_check(run.sizes_bytes, run.quantile_s(FIT_PERCENTILE), run.op, run.world_size)
    f = h["fit"]
    return [(f"alpha-beta fit to the p{FIT_PERCENTILE} times of every other size: alpha = "
             f"{f.latency_s * 1e6:.1f} us, B = {f.link_bytes_per_s / 1e9:.2f} GB/s per direction; held-out sizes "
             f"predicted within {h['max_abs_rel_error']:.0%}")]


def _summary(run: CollectiveRun) -> str:
    lines = [(f"{run.op} on {run.world_size} ranks ({run.backend}, {run.device_name}); time = median of max over "
              "ranks; busbw per nccl-tests"), f"{'size':>12s} {'time':>12s} {'algbw GB/s':>11s} {'busbw GB/s':>11s}"]
    for r in run.records:
        lines.append(f"{r['size_bytes']:12d} {r['median_s'] * 1e6:10.1f}us {r['algbw_bytes_per_s'] / 1e9:11.3f} "
                     f"{r['busbw_bytes_per_s'] / 1e9:11.3f}")
    return "\n".join(lines + _fit_notes(run))


def _bench_torchrun(args: Any, env: dict[str, str]) -> int:
    import datetime as _dt
    import os
    import sys

    import torch
    import torch.distributed as dist

    from .. import benchcli, device, launch, results

    rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    # NCCL when this node has one GPU per local rank (and AMPERE_DEVICE=cpu is not set), as in spawn mode
    backend = args.backend or launch.default_backend(local_world)
    if backend == "nccl":
        visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if local >= visible:
            print(f"error: --backend nccl needs one GPU per local rank: LOCAL_RANK={local} but {visible} GPU(s) "
                  "visible on this node", file=sys.stderr)
            return 2
        torch.cuda.set_device(local)
    samples = _default_samples(args, backend)
    sizes = _bench_sizes(args, backend, world)
    notes: list[str] = []
    dist.init_process_group(backend, timeout=_dt.timedelta(seconds=300))
    try:
        if backend == "nccl":
            # every rank must sweep the same sizes: fit them to the smallest GPU of the job
            mem = torch.tensor([float(torch.cuda.get_device_properties(local).total_memory)], device=f"cuda:{local}")
            dist.all_reduce(mem, op=dist.ReduceOp.MIN)
            sizes, dropped = _fit_in_memory(sizes, world, float(mem.item()))
            if dropped:
                notes.append(f"sizes {dropped} dropped: their buffers would not fit in 40% of the GPU memory")
        ctx = _EnvContext(rank, world, local, backend)
        mine = _collective_rank(ctx, args.op, sizes, samples, 5 if backend == "nccl" else 2,
                                1e-3 if backend == "nccl" else 0.0)
        import socket

        mine["host"] = socket.gethostname()
        gathered: list[Any] = [None] * world
        dist.all_gather_object(gathered, mine)
    finally:
        dist.destroy_process_group()
    if rank != 0:
        return 0
    run = _aggregate(args.op, world, backend, gathered)
    hosts = sorted({g["host"] for g in gathered})
    info = device.probe(local if backend == "nccl" else 0)
    result = results.make_result("collectives", info, {
        "op": args.op, "world_size": world, "backend": backend, "sizes_bytes": sizes, "samples": samples,
        "launcher": "torchrun", "nodes": len(hosts), "local_world_size": int(os.environ.get("LOCAL_WORLD_SIZE", "0")),
        "nccl_version": info.nccl_version, "nccl_env": env, "dtype": "float32",
        "time_statistic": "median over samples of the max over ranks"}, _run_records(run), notes + _fit_notes(run))
    return benchcli.finish_bench(result, args, _summary(run))

"""``python -m ampere bench hbm`` (:func:`bench_main`, registered in ``ampere.cli.BENCHES``): the bandwidth
kernels, the L2 sweep, the strided and offset copies and the capacity report, recorded as one result, with a
one-screen summary.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb). torch is imported only by the measuring functions
it calls (:mod:`ampere.hbm.measure`).
"""

from __future__ import annotations

from typing import Any, Sequence

from .acceptance import check_acceptance
from .common import GiB, KiB, MiB
from .l2_model import find_knee, sweep_footprints
from .measure import (KERNELS, L2_SWEEP_CHUNK_BYTES, Capacity, measure_bandwidth, measure_capacity, measure_l2_sweep,
                      measure_strided_copy)
from .records import bandwidth_rows, sweep_rows


def _summary(bw: list[dict[str, Any]], sweep: list[dict[str, Any]], capacity: Capacity | None,
             device_label: str, spec_name: str | None = None, strided: list[dict[str, Any]] | None = None) -> str:
    lines = [f"HBM benchmark on {device_label}"]
    for row in bandwidth_rows(bw):
        pct = f"{row.pct_of_datasheet:.1f}% of datasheet" if row.pct_of_datasheet is not None else "no datasheet"
        cp = f", copy throughput {row.copied_bytes_per_s / 1e9:.0f} GB/s" if row.copied_bytes_per_s else ""
        lines.append(f"  {row.kernel:6s} {row.engine:6s} {row.bytes_per_s / 1e9:9.1f} GB/s "
                     f"(reads+writes){cp}; {pct}")
    if sweep:
        f, y, l2 = sweep_rows(sweep)
        lines.append(f"  L2 sweep: {len(f)} footprints, {f[0] / KiB:.0f} KiB .. {f[-1] / MiB:.0f} MiB")
        if l2 and len(f) >= 3:
            k = find_knee(f, y, l2)
            if k.visible:
                lines.append(f"  L2 knee at {k.knee_bytes / MiB:.1f} MiB = {k.ratio_to_l2:.2f} x the "
                             f"reported L2 ({l2 / MiB:.0f} MiB); within 25%: {k.within}")
            else:
                lines.append("  no visible L2 knee")
    for r in strided or []:
        p, d = r["params"], r["derived"]
        lines.append(f"  strided copy, stride {p['stride']:2d}, offset {p['offset_bytes']:2d} B: "
                     f"{d['ratio_to_aligned']:.2f} x the aligned copy (sector model {d['model_efficiency']:.2f})")
    for c in check_acceptance(bw + sweep, spec_name):
        if c.applies:
            lines.append(f"  acceptance: {c.check}: {'PASS' if c.passed else 'FAIL'} ({c.detail})")
    if capacity and capacity.total_bytes:
        lines.append(f"  capacity: driver reports {capacity.total_bytes / GiB:.2f} GiB total, "
                     f"{capacity.free_bytes / GiB:.2f} GiB free")
    return "\n".join(lines)


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench hbm``: bandwidth kernels, the L2 sweep and the capacity report, recorded.

    Chapter: *HBM and the memory hierarchy*. A full run takes well under 3 minutes on an A100/H100/H200;
    ``--quick`` about 20 s. Without CUDA (or with ``--device cpu``) the whole code path runs on the CPU with
    tiny arrays (4 MiB with ``--quick``, 8 MiB otherwise) and a short sweep, in a few seconds; such a result
    says ``backend: cpu`` and is not comparable with a GPU.
    """
    from .. import benchcli, check, device as _device, results

    argv = check.sequence("argv", [] if argv is None else argv,
                          lambda n, v: check.string(n, v, allow_empty=True), min_len=0, max_len=1000)
    p = benchcli.bench_parser("hbm", "DRAM bandwidth (read, write, copy, scale, triad) and the L2 working-set sweep")
    p.add_argument("--kernels", default=",".join(KERNELS),
                   help=f"comma-separated kernels (default: all of {','.join(KERNELS)})")
    p.add_argument("--array-mib", type=int, default=None, help="MiB per array (default: 1024, quick: >= 256)")
    p.add_argument("--sweep-points", type=int, default=None, help="footprints of the L2 sweep (default 24, quick 12)")
    p.add_argument("--no-sweep", action="store_true", help="skip the L2 working-set sweep")
    p.add_argument("--no-bandwidth", action="store_true", help="skip the bandwidth kernels")
    p.add_argument("--no-coalescing", action="store_true", help="skip the strided and offset copies")
    args = p.parse_args(argv)
    kernels = [k for k in args.kernels.split(",") if k]
    unknown = [k for k in kernels if k not in KERNELS]
    if unknown or not kernels:
        p.error(f"--kernels {args.kernels!r}: unknown kernel(s) {unknown}; allowed: {', '.join(KERNELS)}")
    if args.array_mib is not None and args.array_mib < 1:
        p.error(f"--array-mib must be >= 1, got {args.array_mib}")
    if args.sweep_points is not None and args.sweep_points < 3:
        p.error(f"--sweep-points must be >= 3, got {args.sweep_points}")

    info = benchcli.probe(args)
    dev = _device.torch_device(info)
    gpu = dev.type == "cuda"
    notes = []
    if not gpu:
        notes.append("no CUDA GPU used: the CPU's memory was measured with tiny arrays (the code path, not a GPU "
                     "figure)")
        print(f"note: {notes[-1]}")
    array_bytes = args.array_mib * MiB if args.array_mib else (None if gpu else (4 if args.quick else 8) * MiB)
    bw = [] if args.no_bandwidth else measure_bandwidth(
        dev, quick=args.quick, kernels=kernels, array_bytes=array_bytes,
        **({} if gpu else {"min_samples": 5, "min_time_s": 0.01, "max_time_s": 0.5}))
    sweep: list[dict[str, Any]] = []
    if not args.no_sweep:
        footprints = None
        if args.sweep_points or not gpu:
            l2 = info.l2_bytes or (40 * MiB if gpu else 4 * MiB)
            footprints = sweep_footprints(l2, points=args.sweep_points or (12 if args.quick else 24),
                                          start_bytes=256 * KiB if gpu else 64 * KiB,
                                          stop_factor=4.0 if gpu else 2.0, align=L2_SWEEP_CHUNK_BYTES)
        sweep = measure_l2_sweep(dev, quick=args.quick, footprints=footprints,
                                 **({} if gpu else {"total_bytes": 16 * MiB, "min_samples": 5, "min_time_s": 0.01,
                                                    "max_time_s": 0.3}))
    strided = [] if args.no_coalescing else measure_strided_copy(
        dev, quick=args.quick, **({} if gpu else {"min_samples": 3, "min_time_s": 0.005, "max_time_s": 0.2}))
    capacity = measure_capacity(dev)
    records = bw + sweep + strided + [{"params": {"experiment": "capacity"}, "derived": capacity.to_dict()}]
    if sweep:
        f, y, l2 = sweep_rows(sweep)
        if l2 and len(f) >= 3:
            records.append({"params": {"experiment": "l2_knee"}, "derived": find_knee(f, y, l2).to_dict()})
    records.append({"params": {"experiment": "acceptance"},
                    "derived": {"checks": [c.to_dict() for c in check_acceptance(bw + sweep, info.spec_name)]}})
    result = results.make_result(
        "hbm", info,
        parameters={"quick": args.quick, "kernels": kernels, "array_bytes": array_bytes,
                    "sweep": not args.no_sweep, "coalescing": not args.no_coalescing, "bytes_convention": "reads + writes (STREAM); copy N/t also given"},
        records=records, notes=notes)
    return benchcli.finish_bench(result, args, _summary(bw, sweep, capacity, info.label(), info.spec_name, strided))

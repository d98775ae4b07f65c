"""The benchmark ``python -m ampere bench sparsity`` (:func:`bench_main`) and the report's short mode.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "Real 2:4 speedups". :func:`_run` picks the
shapes (:data:`CPU_SHAPES` for the CPU code path), probes the backends, runs :func:`.measure.linear_sweep` and
assembles the result; :func:`short_run` is what ``python -m ampere report`` calls.

No torch or matplotlib import here: the measuring is done by :mod:`.measure` and :mod:`.backends`.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Callable, Sequence

from .. import check
from .backends import BackendCheck, probe_backend
from .measure import CPU_SHAPES, QUICK_SHAPES, SWEEP_SHAPES, linear_sweep
from .roofline import LinearShape
from .sweep_results import _sweep_summary, verdict


#: Tiny shapes of the CPU code path (``bench sparsity --device cpu``): the whole sweep, in well under a second.


def _run(quick: bool, dtypes: Sequence[str] | None = None, info: Any = None,
         progress: Callable[[dict[str, Any]], None] | None = None,
         check_: BackendCheck | None = None, cpu_path: bool = False) -> dict[str, Any]:
    from .. import device as _device
    from .. import results

    info = check.device_info("info", info) or _device.probe()
    found = check_ or probe_backend(info)
    if info.backend != "cuda" and cpu_path:
        # The whole code path on the CPU: the gather product stands in for the sparse tensor cores.
        shapes, dtypes = CPU_SHAPES, ["float32"]
        params = {"quick": quick, "dtypes": dtypes, "shapes": [asdict(s) for s in shapes],
                  "backend_check": asdict(found), "code_path": "cpu (reference gather product, not a GPU)"}
        records, notes = linear_sweep(shapes, dtypes, backends=("reference",), device="cpu", warmup_s=0.01,
                                      min_time_s=0.01, max_time_s=0.2, alg_search=False,
                                      unstructured_shape=LinearShape(64, 128, 128, "CSR comparison"),
                                      progress=progress, info=info)
        return results.make_result("sparsity", info, params, records,
                                   ["CPU code path: times of a gather product and CSR on this CPU, not of sparse "
                                    "tensor cores", *notes])
    dtypes = list(dtypes or (["float16"] if quick else ["float16", "bfloat16"]))
    shapes = QUICK_SHAPES if quick else SWEEP_SHAPES
    params = {"quick": quick, "dtypes": dtypes, "shapes": [asdict(s) for s in shapes],
              "backend_check": asdict(found)}
    if not found.works:
        return results.make_result("sparsity", info, params, [], [found.summary()])
    records, notes = linear_sweep(shapes, dtypes, backends=found.working, warmup_s=0.3 if quick else 1.0,
                                  min_time_s=0.1 if quick else 0.2, max_time_s=2.0 if quick else 3.0,
                                  alg_search=not quick,
                                  unstructured_shape=None if quick else LinearShape(4096, 4096, 4096, "CSR comparison"),
                                  progress=progress, info=info)
    return results.make_result("sparsity", info, params, records, [found.summary(), *notes])


def short_run(info: Any = None) -> dict[str, Any]:
    """The short mode for ``python -m ampere report``: two shapes, fp16, every working backend.

    Always returns a valid ``sparsity`` result (no records and a note when nothing can be measured).
    About 10-20 s on an A100/H100.

    Chapter: *2:4 structured sparsity*, "Real 2:4 speedups".
    """
    return _run(True, info=info)


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench sparsity``: the chapter's sweep, recorded as a result JSON (<= 3 min on a GPU).

    ``--device cpu`` (or no GPU) runs the same code path on tiny shapes with the reference gather product
    (the result says so and is never written into ``ampere/data``). Chapter: *2:4 structured sparsity*.
    """
    from .. import benchcli

    p = benchcli.bench_parser("sparsity", "2:4 sparse vs dense F.linear for Linear-layer shapes: speedup, numerics, "
                                     "conversion time (torch semi-structured sparsity).")
    p.add_argument("--dtypes", nargs="+", default=None, choices=["float16", "bfloat16"],
                   help="dtypes (default: float16 and bfloat16; --quick: float16)")
    args = p.parse_args(check.argv("argv", argv))
    info = benchcli.probe(args)
    found = probe_backend(info)
    print(found.summary())
    if info.backend == "cuda" and not found.works:
        print("No working 2:4 backend on this GPU: nothing to measure (the chapter shows the model, the recorded "
              "and the published results).")
        return 0

    def show(rec: dict[str, Any]) -> None:
        d = rec.get("derived", {})
        extra = f"  speedup {d['speedup_vs_dense']:.2f}x" if "speedup_vs_dense" in d else ""
        print(f"  {rec['kind']:12s} {rec['backend']:17s} {rec['dtype']:9s} {rec['tokens']}x{rec['in_features']}"
              f"->{rec['out_features']}: {rec['measurement']['median_s'] * 1e3:.3f} ms{extra}", flush=True)

    result = _run(args.quick, args.dtypes, info, progress=show, check_=found, cpu_path=info.backend != "cuda")
    print(_sweep_summary(result))
    print("\n".join(verdict(result)))
    return benchcli.finish_bench(result, args, f"sparsity sweep on {info.label()}: {len(result['records'])} records")

"""The chapter's tables and views: the hierarchy and occupancy tables (rows for ``ab.show_table``), and one
call per measuring section (:func:`show_matmul`, :func:`show_attention`, :func:`show_profile`): measured here
on a GPU with Triton, else results recorded on real GPUs, else the model beside published figures.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``). torch is imported only inside the views that
measure or profile.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Mapping, Sequence

from .. import check, specs
from .attention import attention_hbm_bytes, attention_model_ms
from .bench import BENCHMARK
from .figures import CHAPTER_GPUS
from .occupancy import occupancy, sm_limits
from .published import published_attention, published_sram_estimate
from .rules import _info
from .shared_memory import shared_memory_bandwidth
from .triton_kernels import flash_attention, matmul, naive_attention, triton_available

#: The catalogue GPU the FlashAttention paper's "A100" is modelled as: its Figure 1 quotes 40 GB of HBM at
#: 1.5 TB/s, the A100 40GB's figures.
PAPER_A100 = "A100-SXM4-40GB"


def hierarchy_rows(gpus: Sequence[str] = (*CHAPTER_GPUS, "H200-SXM-141GB"),
                   l2_read: Mapping[str, tuple[float, str]] | None = None,
                   l2_reported: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """Capacity and bandwidth of each level a kernel sees, from :mod:`ampere.specs` (rows for ``ab.show_table``).
    Shared memory: the bandwidth derived from the banks (:func:`shared_memory_bandwidth`) beside the published
    estimate where there is one. ``l2_read`` maps a GPU to (bytes/s, source text) of a measured L2 read
    bandwidth: the chapter passes ``hbm.published_l2_plateau``'s, the one rule both chapters use.
    ``l2_reported`` maps a GPU to the L2 size CUDA reports on a real card, shown where it differs from the
    catalogue's (the chapter passes ``hbm.devicequery_check``'s).
    Chapter: *Programming the A100's SM*, "The hierarchy from a kernel's point of view"."""
    from .. import views

    gpus = check.gpus("gpus", gpus, max_len=64)

    def by_gpu(name: str, value: Any, item: Any) -> dict[str, Any]:
        out = {}
        for g, v in check.mapping(name, {} if value is None else value).items():
            out[specs.get(check.gpu(name, g)).name] = item(f"{name}[{g!r}]", v)
        return out

    def read_figure(n: str, v: Any) -> tuple[float, str]:
        pair = check.sequence(n, v, min_len=2, max_len=2)
        return check.positive(f"{n}[0]", pair[0], maximum=1e18), check.string(f"{n}[1]", pair[1], max_len=200)

    l2_read = by_gpu("l2_read", l2_read, read_figure)
    l2_reported = by_gpu("l2_reported", l2_reported, lambda n, v: check.positive_int(n, v, maximum=1 << 40))
    rows = []
    for g in gpus:
        s = specs.get(g)
        lim = sm_limits(g)
        l2bw = s.l2_bytes_per_s
        measured = ""
        if s.name in l2_read:
            bw, src = l2_read[s.name]
            measured = f"; {bw / 1e12:.1f} TB/s measured ({src})"
        smem = (f"{shared_memory_bandwidth(s) / 1e12:.1f} TB/s ({lim.shared_banks} banks x {lim.shared_bank_bytes} B x "
                f"{s.sm_count} SMs x {s.boost_clock_hz / 1e9:.2f} GHz)")
        est = published_sram_estimate(s)
        if est:
            smem += f"; estimated at {est[0] / 1e12:g} TB/s by {views.cite_label(est[1].source)}"
        rows += [
            {"GPU": s.name, "level": "registers", "capacity": f"{s.register_file_bytes_per_sm // 1024} KiB per SM "
             f"({lim.max_registers_per_thread} per thread at most)", "bandwidth": "operands of every instruction"},
            {"GPU": s.name, "level": "shared memory / L1",
             "capacity": f"{s.l1_shared_bytes_per_sm // 1024} KiB per SM, up to {s.max_shared_bytes_per_sm // 1024}"
                         f" KiB shared ({lim.max_shared_bytes_per_block // 1024} KiB per block)",
             "bandwidth": smem},
            {"GPU": s.name, "level": "L2", "capacity": f"{s.l2_bytes / 2**20:.0f} MiB per GPU" if
             l2_reported.get(s.name, s.l2_bytes) == s.l2_bytes else
             f"{l2_reported[s.name] / 2**20:.0f} MiB per GPU as CUDA reports it "
             f"({s.l2_bytes / 2**20:.0f} MiB in the catalogue)",
             "bandwidth": (f"{l2bw / 1e12:.1f} TB/s (theoretical)" if l2bw else "not published by NVIDIA") + measured},
            {"GPU": s.name, "level": "HBM", "capacity": f"{s.memory_bytes / 2**30:.0f} GiB ({s.cuda_visible_bytes / 1e9:.1f} GB "
                                                        "exposed to CUDA)",
             "bandwidth": f"{s.hbm_bytes_per_s / 1e12:.2f} TB/s (datasheet)"},
        ]
    return rows


def occupancy_rows(threads_per_block: int, registers_per_thread: int, shared_bytes_per_block: int,
                   gpus: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """:func:`occupancy` of one kernel on every catalogue GPU (or on ``gpus``), as table rows; a GPU whose
    limits the configuration exceeds gets a "cannot launch" row saying which. The arguments are checked
    first against bounds no GPU reaches (threads 1 to 65536, registers 0 to 65536, shared bytes 0 to 1 GiB).
    Chapter: *Programming the A100's SM*, "Occupancy and latency hiding"."""
    check.bounded_int("threads_per_block", threads_per_block, 1, 1 << 16)
    check.bounded_int("registers_per_thread", registers_per_thread, 0, 1 << 16)
    check.bounded_int("shared_bytes_per_block", shared_bytes_per_block, 0, 1 << 30)
    rows = []
    for g in specs.names() if gpus is None else check.gpus("gpus", gpus):
        try:
            o = occupancy(g, threads_per_block, registers_per_thread, shared_bytes_per_block)
        except ValueError as exc:
            rows.append({"GPU": g, "blocks per SM": "-", "warps": "-", "occupancy": "-",
                         "limited by": f"cannot launch: {str(exc).split(';')[-1].strip()}"})
            continue
        rows.append({"GPU": g, "blocks per SM": o.blocks_per_sm, "warps": f"{o.active_warps} / {o.max_warps}",
                     "occupancy": f"{100 * o.fraction:.0f} %", "limited by": o.limiter})
    return rows


def _recorded(kind: str) -> list[Any]:
    from .. import results

    return [r for r in results.records(benchmark=BENCHMARK, kind="measured") if r.params.get("kind") == kind]


def show_matmul(info: Any) -> None:
    """The Triton matmul against cuBLAS: measured here on a GPU with Triton, else the results recorded on real
    GPUs, else the best published bf16 matmuls (cuBLAS through PyTorch), each beside the dense peak. Chapter: *Programming the A100's SM*, "A Triton
    tiled matmul"."""
    from .. import results, tables, views

    info = _info(info)
    points: list[Any] = []
    if getattr(info, "backend", "cpu") == "cuda" and triton_available() and info.spec is not None:
        import torch

        from .. import timing

        prec, dt = ("bf16", torch.bfloat16) if info.bf16_tensor else ("fp16", torch.float16)
        peak = info.spec.peak_flops(prec) / 1e12 if info.spec.supports(prec) else None
        n = 4096
        g = torch.Generator().manual_seed(0)
        a = torch.randn(n, n, generator=g).to("cuda", dt)
        b = torch.randn(n, n, generator=g).to("cuda", dt)
        runs = [("cuBLAS (torch.matmul)", lambda: a @ b)]
        for st in (1, 2, 3, 4):
            runs.append((f"Triton 128x128x64, 8 warps, {st} stage{'s' if st > 1 else ''}",
                         lambda st=st: matmul(a, b, block_m=128, block_n=128, block_k=64, num_warps=8, num_stages=st)))
        for what, fn in runs:
            try:
                fn()
            except Exception as exc:  # a configuration this GPU cannot hold (shared memory) is skipped, said so
                tables.show_md(f"{what}: skipped on {info.spec.name} ({type(exc).__name__}).")
                continue
            meas = timing.benchmark(fn, device="cuda", warmup_s=0.5, max_time_s=1.5)
            points.append(views.Point(f"{what}, {prec} {n}^3", info.spec.name, model=peak,
                                      real=2.0 * n ** 3 / meas.median_s / 1e12, unit="TFLOP/s", kind="measured",
                                      source="measured here"))
    else:
        for rec in _recorded("matmul-torch") + _recorded("matmul-triton"):
            p = rec.params
            what = ("cuBLAS" if p.get("kind") == "matmul-torch" else
                    f"Triton {p.get('block_m')}x{p.get('block_n')}x{p.get('block_k')}, {p.get('num_stages')} st.")
            peak = specs.get(rec.gpu).peak_flops("bf16") / 1e12 if rec.gpu in specs.names() else None
            points.append(views.point(rec, "tflop_per_s", f"{what}, {p.get('m')}^3", peak, "TFLOP/s"))
    if not points:  # the bar a Triton kernel is held to: the best published cuBLAS matmuls
        for g in CHAPTER_GPUS:
            peak = specs.get(g).peak_flops("bf16") / 1e12
            recs = [r for r in results.records(benchmark="matmul", gpu=g, kind="published")
                    if "bf16_tflop_per_s" in r.figures]
            if recs:
                best = max(recs, key=lambda r: r.figures["bf16_tflop_per_s"])
                points.append(views.point(best, "bf16_tflop_per_s", "best bf16 matmul (cuBLAS)", peak, "TFLOP/s"))
            else:
                points.append(views.Point("dense bf16 peak", g, model=peak, real=None, unit="TFLOP/s"))
    views.show(points, title="Triton tiled matmul and cuBLAS against the dense bf16 peak", model_label="dense peak")


def attention_points() -> tuple[list[Any], list[Any]]:
    """The FlashAttention paper's published forward + backward pair (GPT-2 medium's attention on an A100),
    each beside the model of the same work: (time points in ms, HBM traffic points in GB). The model runs
    the paper's configuration on the A100 40GB (:data:`PAPER_A100`): Algorithms 0 and 3 for standard
    attention, 1 and 4 for FlashAttention with the GPU's largest shared memory per SM as M.
    Chapter: *Programming the A100's SM*, "FlashAttention in Triton"."""
    from .. import views

    spec = specs.get(PAPER_A100)
    times, traffic = [], []
    for rec in published_attention():
        p = rec.params
        algo = "standard" if p["algorithm"] == "standard" else "flash1"
        name = "standard" if algo == "standard" else "FlashAttention"
        passes = "forward+backward" if "backward" in str(p.get("passes", "")) else "forward"
        what = f"{name}, {p['model']}, N={p['seq']}, {'fwd+bwd' if passes != 'forward' else 'fwd'}"
        ms = attention_model_ms(spec, p["batch"], p["heads"], p["seq"], p["head_dim"], algo, passes=passes)
        gb = p["batch"] * p["heads"] * attention_hbm_bytes(p["seq"], p["head_dim"], spec.max_shared_bytes_per_sm,
                                                            algo, passes=passes) / 1e9
        times.append(views.point(rec, "fwd_bwd_time_ms", what, ms, "ms"))
        traffic.append(views.point(rec, "hbm_traffic_gb", what, gb, "GB"))
    return times, traffic


def show_attention(info: Any, batch: int = 4, heads: int = 16, seq: int = 4096, head_dim: int = 64) -> None:
    """Triton FlashAttention against naive attention and PyTorch's SDPA, each beside the roofline model of the
    same forward pass: measured here on a GPU, else the recorded results, else the FlashAttention paper's
    published forward + backward times and HBM traffic beside the model of that same work
    (:func:`attention_points`). Chapter: *Programming the A100's SM*, "FlashAttention in Triton"."""
    from .. import tables, views

    info = _info(info)
    batch = check.positive_int("batch", batch, maximum=1 << 10)
    heads = check.positive_int("heads", heads, maximum=1 << 10)
    seq = check.positive_int("seq", seq, maximum=1 << 17)
    head_dim = check.choice("head_dim", head_dim, (16, 32, 64, 128))
    points: list[Any] = []
    algos = {"naive": "standard", "flash": "flash2", "sdpa": "flash2"}  # SDPA on sm80: a FlashAttention-2 kernel
    if getattr(info, "backend", "cpu") == "cuda" and triton_available() and info.spec is not None:
        import torch
        import torch.nn.functional as F

        from .. import timing

        g = torch.Generator().manual_seed(0)
        dt = torch.bfloat16 if info.bf16_tensor else torch.float16
        q, k, v = (torch.randn(batch, heads, seq, head_dim, generator=g).to("cuda", dt) for _ in range(3))
        for what, algo, fn in (("naive (S and P in HBM)", "naive", lambda: naive_attention(q, k, v)),
                               ("Triton FlashAttention", "flash",
                                lambda: flash_attention(q, k, v, block_m=128, block_n=64, num_warps=8)),
                               ("PyTorch SDPA", "sdpa", lambda: F.scaled_dot_product_attention(q, k, v))):
            meas = timing.benchmark(fn, device="cuda", warmup_s=0.3, max_time_s=1.5)
            points.append(views.Point(f"{what}, fwd, N={seq}", info.spec.name,
                                      model=attention_model_ms(info.spec, batch, heads, seq, head_dim, algos[algo]),
                                      real=meas.median_s * 1e3, unit="ms", kind="measured", source="measured here"))
    else:
        names = {"attention-naive": ("naive", "naive"), "attention-triton-flash": ("Triton flash", "flash"),
                 "attention-sdpa": ("SDPA", "sdpa")}
        for kind, (what, algo) in names.items():
            for rec in _recorded(kind):
                p = rec.params
                model = (attention_model_ms(rec.gpu, p["batch"], p["heads"], p["seq"], p["head_dim"], algos[algo])
                         if rec.gpu in specs.names() else None)
                points.append(views.point(rec, "time_ms", f"{what}, fwd, N={p.get('seq')}", model, "ms"))
    if points:
        views.show(points, title=f"Attention forward, d={head_dim}: roofline model and real times",
                   model_label="roofline model", digits=3, log=True)
        return
    times, traffic = attention_points()
    views.show(times, title="Attention of GPT-2 medium, forward + backward: model and published",
               model_label="roofline model", digits=1, log=False)
    tables.show_md("HBM traffic of the same work:\n\n"
                   + views.table(traffic, model_label="model", real_label="published", digits=1))


@contextlib.contextmanager
def _native_stderr_quiet() -> Any:
    """Silence file descriptor 2 while the profiler starts and stops: its native library prints its
    start/stop lines there (not warnings), and a notebook would show them under the table."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def show_profile(info: Any) -> None:
    """The top kernels of one FlashAttention forward and one naive attention under ``torch.profiler``: the
    CUDA kernels on a GPU; without one, the CPU operators of the naive attention on the machine running the
    page (labelled so). Chapter: *Programming the A100's SM*, "Profiling"."""
    from .. import tables

    info = _info(info)
    import torch
    from torch.profiler import ProfilerActivity, profile

    g = torch.Generator().manual_seed(0)
    if getattr(info, "backend", "cpu") == "cuda" and triton_available():
        dt = torch.bfloat16 if info.bf16_tensor else torch.float16
        q, k, v = (torch.randn(4, 16, 4096, 64, generator=g).to("cuda", dt) for _ in range(3))
        flash_attention(q, k, v, block_m=128, block_n=64, num_warps=8)
        naive_attention(q, k, v)
        torch.cuda.synchronize()
        with _native_stderr_quiet(), profile(activities=[ProfilerActivity.CUDA]) as prof:
            flash_attention(q, k, v, block_m=128, block_n=64, num_warps=8)
            naive_attention(q, k, v)
            torch.cuda.synchronize()
        what, unit, attr = ("CUDA kernels of one Triton FlashAttention forward and one naive attention "
                            "(batch 4, 16 heads, N = 4096, d = 64), measured here"), "GPU", "device_time_total"
    else:  # the same tool on the CPU: the operators of the naive attention, where S and P are materialised
        q, k, v = (torch.randn(1, 4, 512, 64, generator=g) for _ in range(3))
        naive_attention(q, k, v)
        with _native_stderr_quiet(), profile(activities=[ProfilerActivity.CPU]) as prof:
            naive_attention(q, k, v)
        what, unit, attr = ("operators of one naive attention (batch 1, 4 heads, N = 512, d = 64, float32), "
                            "profiled on the CPU that ran this page"), "CPU", "self_cpu_time_total"
    rows = []
    for ev in sorted(prof.key_averages(), key=lambda e: -getattr(e, attr, 0.0))[:6]:
        rows.append({"kernel or operator": ev.key[:60], "calls": ev.count,
                     f"{unit} time (ms)": getattr(ev, attr, 0.0) / 1e3})
    tables.show_md(f"Top {len(rows)} {what}:\n\n"
                   + tables.markdown_table(rows, formats={f"{unit} time (ms)": ".3f"}))

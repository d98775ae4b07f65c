"""The chapter's Markdown tables: the lab's runs, the three systems, their crossovers, the decomposition of
an all-reduce into reduce-scatter + all-gather.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), sections "Real collectives on
torch.distributed", "Why this decides data-parallel scaling" and "Fitting the model to the lab". Pure
Python: no torch, no matplotlib.
"""

from __future__ import annotations

from typing import Any

from .. import specs
from .fit import FIT_PERCENTILE
from .measure import CollectiveRun
from .scaling import BERT_GLOBAL_BATCH_TOKENS, crossover_gpus, data_parallel_step, systems


def lab_rows(run: CollectiveRun, percentile: float = FIT_PERCENTILE) -> list[dict[str, Any]]:
    """Rows of the gloo lab's table: size, median and low-percentile time, algbw, busbw (chapter section
    "Real collectives on torch.distributed")."""
    low = run.quantile_s(percentile)
    return [{"size (KiB)": r["size_bytes"] // 1024, "median (µs)": f"{r['median_s'] * 1e6:.0f}",
             f"p{percentile:g} (µs)": f"{q * 1e6:.0f}", "algbw (GB/s)": f"{r['algbw_bytes_per_s'] / 1e9:.3f}",
             "busbw (GB/s)": f"{r['busbw_bytes_per_s'] / 1e9:.3f}"} for r, q in zip(run.records, low)]


def system_rows() -> list[dict[str, Any]]:
    """The three systems of the scaling section, for a table."""
    return [{"system": name, "GPU": s.gpu,
             "FP16 dense peak (TFLOP/s)": f"{specs.get(s.gpu).peak_flops('fp16') / 1e12:.0f}",
             "inside a node, GB/s per GPU": f"{s.intra_bytes_per_s / 1e9:.0f}",
             "between nodes, GB/s per node": f"{s.inter_bytes_per_s / 1e9:.0f}", "how": s.note}
            for name, s in systems().items()]


def crossover_rows(gpus: int = 32) -> list[dict[str, Any]]:
    """Compute, all-reduce and crossovers of each system at ``gpus`` GPUs (section "Why this decides")."""
    strong = {"global_tokens": BERT_GLOBAL_BATCH_TOKENS}
    rows = []
    for name, s in systems().items():
        r = data_parallel_step(s, gpus, **strong)
        rows.append({"system": name, f"compute at {gpus} GPUs (ms)": f"{r.compute_s * 1e3:.1f}",
                     f"all-reduce at {gpus} GPUs (ms)": f"{r.all_reduce_s * 1e3:.1f}",
                     "all-reduce / compute": f"{r.comm_to_compute:.2f}",
                     "crossover, FP16 grads": crossover_gpus(s, **strong) or "never",
                     "crossover, FP32 grads": crossover_gpus(s, grad_bytes_per_param=4, **strong) or "never",
                     "crossover, weak scaling": crossover_gpus(s, tokens_per_gpu=4096) or "never"})
    return rows


def show_decomposition(all_reduce: CollectiveRun, reduce_scatter: CollectiveRun, all_gather: CollectiveRun,
                       percentile: float = FIT_PERCENTILE) -> None:
    """Table: reduce-scatter + all-gather against the all-reduce of the same sizes (low-percentile times).

    Chapter section "Fitting the model to the lab": in the model the two halves *are* an all-reduce.
    """
    from ..tables import markdown_table, show_md

    ar = dict(zip(all_reduce.sizes_bytes, all_reduce.quantile_s(percentile)))
    rs = dict(zip(reduce_scatter.sizes_bytes, reduce_scatter.quantile_s(percentile)))
    ag = dict(zip(all_gather.sizes_bytes, all_gather.quantile_s(percentile)))
    sizes = [s for s in rs if s in ag and s in ar]
    if not sizes:
        raise ValueError("the three runs share no size; run them on the same sizes")
    show_md(markdown_table([{"size (KiB)": s // 1024, "reduce-scatter (µs)": f"{rs[s] * 1e6:.0f}",
                             "all-gather (µs)": f"{ag[s] * 1e6:.0f}", "sum (µs)": f"{(rs[s] + ag[s]) * 1e6:.0f}",
                             "all-reduce (µs)": f"{ar[s] * 1e6:.0f}"} for s in sizes]))

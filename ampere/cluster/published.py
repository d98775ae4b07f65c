"""Published results of DGX A100 systems: Selene on the TOP500 and Green500, MLPerf Training.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), sections "Selene
on the TOP500" and "MLPerf in the A100 era". :func:`selene` reads NVIDIA's Selene in the TOP500 and Green500
lists [top500selene] (with helpers that compare Rmax and Rpeak with the GPUs' FP64 peak), :func:`mlperf` the
MLPerf Training results of the A100 era (and one H100 score), both from ``ampere/data/published``; nothing
is typed here. Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import check, fabrics, results, specs
from .. import fields as _fields
from .node import dgx_a100


#: FP64 FLOP per cycle per core of an AMD Zen 2 core (two 256-bit FMA pipes: 2 x 4 x 2). An assumption
#: of this chapter used only to split Selene's Rpeak between CPUs and GPUs.
EPYC_7742_FP64_FLOP_PER_CYCLE = 16


@dataclass(frozen=True)
class Top500Entry:
    """One listing of a DGX A100 system (chapter section "Selene on the TOP500")."""

    system: str
    list_name: str  # "TOP500 June 2020"
    nodes: int
    rmax_flops: float  # HPL result
    rpeak_flops: float | None  # theoretical peak declared in the list (None: not retrieved)
    power_w: float | None  # power during the HPL run
    top500_rank: int | None
    green500_rank: int | None
    green500_flops_per_w: float | None  # as published (None: derive from rmax / power)
    source: str
    gpus_per_node: int = 8

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("nodes", "rmax_flops", "rpeak_flops", "power_w", "top500_rank",
                                              "green500_rank", "green500_flops_per_w", "gpus_per_node"),
                              maxima={"nodes": fabrics.MAX_GPUS, "top500_rank": 500, "green500_rank": 500,
                                      "gpus_per_node": fabrics.MAX_GPUS_PER_NODE},
                              allow_empty=False)

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    def gpu_fp64_peak_flops(self, gpu: str = "A100-SXM4-80GB") -> float:
        """GPUs x FP64 tensor-core peak at the boost clock (19.5 TFLOP/s each; same for 40 and 80 GB)."""
        return self.gpus * specs.get(gpu).peak_flops("fp64_tc")

    def cpu_fp64_peak_flops(self, flop_per_cycle: int = EPYC_7742_FP64_FLOP_PER_CYCLE) -> float:
        """The CPUs' FP64 peak: nodes x cores x base clock x ``flop_per_cycle`` (16 for Zen 2, an assumption)."""
        flop_per_cycle = check.bounded_int("flop_per_cycle", flop_per_cycle, 1, 1024, why="FP64 FLOP per core per cycle")
        node = dgx_a100("A100-SXM4-40GB")
        return self.nodes * node.cpu_cores * node.cpu_base_clock_hz * flop_per_cycle

    @property
    def hpl_efficiency(self) -> float | None:
        """Rmax / Rpeak, as the list defines efficiency."""
        return None if self.rpeak_flops is None else self.rmax_flops / self.rpeak_flops

    def fraction_of_gpu_peak(self, gpu: str = "A100-SXM4-80GB") -> float:
        """Rmax over the GPUs' FP64 tensor-core peak at boost clock."""
        return self.rmax_flops / self.gpu_fp64_peak_flops(gpu)

    def implied_gpu_clock_hz(self, include_cpus: bool = True, gpu: str = "A100-SXM4-80GB") -> float | None:
        """The GPU clock that would make ``GPUs x FP64-tensor rate x clock (+ CPU peak)`` equal Rpeak.

        An inference, not a published figure: the basis of the declared Rpeak is not documented.
        """
        check.boolean("include_cpus", include_cpus)
        spec = specs.get(gpu)
        if self.rpeak_flops is None:
            return None
        gpu_part = self.rpeak_flops - (self.cpu_fp64_peak_flops() if include_cpus else 0.0)
        per_clock = self.gpus * spec.sm_count * spec.fma_per_clk_per_sm["fp64_tc"] * 2
        return gpu_part / per_clock

    @property
    def flops_per_w(self) -> float | None:
        """Green500 metric: the published value, else Rmax / power."""
        if self.green500_flops_per_w is not None:
            return self.green500_flops_per_w
        return None if self.power_w is None else self.rmax_flops / self.power_w

    @property
    def reported_cores(self) -> int:
        """TOP500 "cores" of a DGX A100 system: CPU cores + GPU SMs (128 + 8 x 108 = 992 per node)."""
        node = dgx_a100("A100-SXM4-40GB")
        return self.nodes * (node.cpu_cores + self.gpus_per_node * node.gpu.sm_count)


def selene() -> tuple[Top500Entry, ...]:
    """Selene in the TOP500 lists of June and November 2020 [top500selene], from the HPL records of
    ``ampere/data/published/hpl.json``. Chapter section "Selene on the TOP500"."""
    out = []
    for r in results.records(benchmark="hpl", kind="published"):
        if not r.gpu.startswith("Selene"):
            continue
        f, p = r.figures, r.params
        out.append(Top500Entry(
            "Selene", p["list"], nodes=p["nodes"], rmax_flops=f["rmax_pflop_per_s"] * 1e15,
            rpeak_flops=f["rpeak_pflop_per_s"] * 1e15 if "rpeak_pflop_per_s" in f else None,
            power_w=f["power_kw"] * 1e3 if "power_kw" in f else None, top500_rank=p.get("top500_rank"),
            green500_rank=p.get("green500_rank"),
            green500_flops_per_w=f["efficiency_gflop_per_w"] * 1e9 if "efficiency_gflop_per_w" in f else None,
            source=r.source))
    return tuple(sorted(out, key=lambda e: e.nodes))


def green500_top() -> "results.Record":
    """Rank 1 of the Green500, November 2020: a smaller "NVIDIA DGX SuperPOD" [green5002020nov] (its node
    count is not used here, see the chapter's exercise)."""
    return next(r for r in results.records(benchmark="hpl", kind="published") if r.id == "green500-2020-11-rank1")


def mlperf(round_: str | None = None, benchmark: str | None = None, gpu: str | None = None
           ) -> list["results.Record"]:
    """Published MLPerf Training figures of ``ampere/data/published/mlperf.json``, filtered by round
    ("v0.7", ...), MLPerf benchmark ("BERT", ...) and GPU. Chapter section "MLPerf in the A100 era".

    The A100 rounds come from NVIDIA's technical blogs (max-scale and per-accelerator records, "up to"
    gains between rounds); the H100 row is an official single-node score.
    """
    rows = results.records(benchmark="mlperf-training", kind="published", gpu=gpu)
    if round_ is not None:
        rounds = sorted({r.params.get("round") for r in rows})
        check.one_of("round_", round_, rounds)
        rows = [r for r in rows if r.params.get("round") == round_]
    if benchmark is not None:
        known = sorted({r.params["benchmark"] for r in results.records(benchmark="mlperf-training", kind="published")
                        if r.params.get("benchmark")})
        check.one_of("benchmark", benchmark, known)
        rows = [r for r in rows if r.params.get("benchmark") == benchmark]
    return rows

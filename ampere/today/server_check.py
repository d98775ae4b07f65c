"""The 8-card A100 PCIe server, timed by the planner and by the NVLink chapter's model of the same box: the
same network (``ampere.fabrics.A100_PCIE_SERVER``), the same gradient all-reduce, the same data-parallel
efficiency.

Chapter: *The A100 today* (book/a100-today.ipynb), "One planner, the node's real network". Pure Python: no
torch, no matplotlib.

The NVLink chapter (``ampere.interconnect.data_parallel_step``) times data-parallel training of BERT-Large
with 4096 tokens per GPU as compute plus an all-reduce of FP16 gradients that nothing hides. The planner
times any layout with the Megatron chapter's model. Told the same (a BERT-Large-sized stack, pure data
parallelism over the eight cards, FP16 gradients reduced after the backward pass), the two must agree on
the all-reduce and on the efficiency once the compute is the same; :func:`pcie_server_check` computes both.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .. import check

#: BERT-Large's stack (24 layers, hidden 1024, 16 heads, 30,522-token vocabulary, 512-token sequences,
#: devlin2019bert) as the Megatron model's GPT-style shape: the NVLink chapter's model of data parallelism.
BERT_LARGE_SHAPE = dict(layers=24, hidden=1024, heads=16, vocab=30522, seq=512)
#: Tokens per GPU per step in the NVLink chapter's weak-scaling case.
TOKENS_PER_GPU = 4096


@dataclass(frozen=True)
class ServerCheck:
    """The 8 x A100 PCIe server under the planner's model and the NVLink chapter's (see the module docstring).
    Times in seconds; efficiencies are compute time over step time."""

    box: str
    gpus: int
    params: float
    compute_s: float  # the planner's step without its data-parallel all-reduce
    planner_all_reduce_s: float
    chapter_all_reduce_s: float
    planner_efficiency: float
    chapter_efficiency: float  # the NVLink chapter's model given the planner's compute time
    chapter_headline_efficiency: float  # the NVLink chapter's own case: BERT-Large at 40 % of the peak
    sxm_efficiency: float  # the planner on the DGX A100 (NVSwitch), same workload

    def __post_init__(self) -> None:
        check.string("box", self.box, max_len=200)
        object.__setattr__(self, "gpus", check.bounded_int("gpus", self.gpus, 2, 8, why="cards of one server"))
        object.__setattr__(self, "params", check.positive("params", self.params, maximum=1e15))
        object.__setattr__(self, "compute_s", check.positive("compute_s", self.compute_s, maximum=1e6))
        for name in ("planner_all_reduce_s", "chapter_all_reduce_s"):
            object.__setattr__(self, name, check.nonneg(name, getattr(self, name), maximum=1e6))
        for name in ("planner_efficiency", "chapter_efficiency", "chapter_headline_efficiency", "sxm_efficiency"):
            object.__setattr__(self, name, check.fraction(name, getattr(self, name), allow_zero=False))

    def rows(self) -> list[dict[str, str]]:
        """The comparison as table rows (model, all-reduce ms, efficiency)."""
        return [
            {"model": "planner (Megatron model on the server's network)",
             "all-reduce of the gradients": f"{1e3 * self.planner_all_reduce_s:.1f} ms",
             "data-parallel efficiency": f"{self.planner_efficiency:.0%}"},
            {"model": "NVLink chapter, with the planner's compute time",
             "all-reduce of the gradients": f"{1e3 * self.chapter_all_reduce_s:.1f} ms",
             "data-parallel efficiency": f"{self.chapter_efficiency:.0%}"},
            {"model": "NVLink chapter, its own case (40 % of the peak)",
             "all-reduce of the gradients": f"{1e3 * self.chapter_all_reduce_s:.1f} ms",
             "data-parallel efficiency": f"{self.chapter_headline_efficiency:.0%}"},
            {"model": "planner on a DGX A100 (NVSwitch), same workload", "all-reduce of the gradients": "-",
             "data-parallel efficiency": f"{self.sxm_efficiency:.0%}"},
        ]


def _estimate(gpu: str, node: object, gpus: int) -> object:
    from .. import megatron, transformer

    cfg = transformer.gpt(**BERT_LARGE_SHAPE, name="BERT-Large-sized")
    seqs = gpus * TOKENS_PER_GPU // cfg.seq
    return megatron.estimate(cfg, gpus, seqs, 1, 1, seqs // gpus, 1, "none", gpu, software="megatron-core",
                             ddp="local", zero_stage=0, precision="fp16", reduce_bytes=2, network=node)


@functools.lru_cache(maxsize=None)
def _check(gpus: int) -> ServerCheck:
    from .. import fabrics, interconnect, specs
    from .network import _network

    box = fabrics.A100_PCIE_SERVER
    spec = specs.get(box.gpu)
    net = _network(spec, gpus)
    est = _estimate(spec.name, net.megatron_node(), gpus)
    ar = est.breakdown["data-parallel all-reduce"]
    compute = est.time_per_iteration_s - ar
    n = est.config.params
    achieved = 6 * n * TOKENS_PER_GPU / (compute * spec.peak_flops("fp16"))
    step = interconnect.data_parallel_step(box, gpus, params=n, tokens_per_gpu=TOKENS_PER_GPU,
                                           achieved_fraction=min(1.0, achieved))
    headline = interconnect.data_parallel_step(box, gpus, tokens_per_gpu=TOKENS_PER_GPU)
    sxm_net = _network(specs.get("A100-SXM4-80GB"), gpus)
    sxm = _estimate("A100-SXM4-80GB", sxm_net.megatron_node(), gpus)
    sxm_ar = sxm.breakdown["data-parallel all-reduce"]
    return ServerCheck(box.name, gpus, n, compute, ar, step.all_reduce_s, compute / est.time_per_iteration_s,
                       step.efficiency, headline.efficiency,
                       (sxm.time_per_iteration_s - sxm_ar) / sxm.time_per_iteration_s)


def pcie_server_check(gpus: int = 8) -> ServerCheck:
    """Data-parallel training on ``gpus`` (2 to 8) cards of the 8 x A100 PCIe server, by the planner and by the
    NVLink chapter (:class:`ServerCheck`). Chapter: *The A100 today*, "One planner, the node's real network"."""
    return _check(check.bounded_int("gpus", gpus, 2, 8, why="cards of one server"))

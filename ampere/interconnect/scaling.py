"""Data-parallel scaling: step time = compute + the part of the gradient all-reduce that is not hidden.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), section "Why this decides data-parallel
scaling": :func:`data_parallel_step` and :func:`crossover_gpus` on the three systems of :func:`systems`
(presets of :mod:`ampere.fabrics`), with the all-reduce of :mod:`ampere.collectives`. Pure Python: no torch,
no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .. import check, collectives, fabrics, results, specs
from .. import fields as _fields


#: BERT-Large: 24 layers, hidden 1024, 16 heads, 340 M parameters [devlin2019bert]
#: (``ampere/data/tables/gradient-models.json``).
BERT_LARGE_PARAMS = next(float(r["params"]) for r in results.table("gradient-models")["rows"]
                         if r["model"] == "BERT-Large")  # source: devlin2019bert
#: BERT pre-training batch: 256 sequences x 512 tokens = 128 k tokens per step [devlin2019bert].
BERT_GLOBAL_BATCH_TOKENS = 256 * 512  # source: devlin2019bert

#: A multi-GPU machine as the data-parallel model sees it: a node network of :mod:`ampere.fabrics`.
System = fabrics.NodeNetwork


def systems() -> dict[str, fabrics.NodeNetwork]:
    """The three boxes the chapter compares: presets of :mod:`ampere.fabrics` under the chapter's labels.

    Chapter: *NVLink, NVSwitch and collectives*, section "Why this decides data-parallel scaling".
    """
    return {"DGX-1 (V100, NVLink 2)": fabrics.DGX_1_V100.with_(name="DGX-1 (V100, NVLink 2)"),
            "DGX A100 (NVLink 3, NVSwitch)": fabrics.DGX_A100.with_(name="DGX A100 (NVLink 3, NVSwitch)"),
            "8x A100 PCIe (no NVLink)": fabrics.A100_PCIE_SERVER.with_(name="8x A100 PCIe (no NVLink)")}


@dataclass(frozen=True)
class DataParallelStep:
    """One point of the data-parallel model; times in seconds."""

    gpus: int
    tokens_per_gpu: float
    compute_s: float  # forward + backward on one GPU
    all_reduce_s: float  # gradient all-reduce, whole
    exposed_s: float  # the part not hidden behind the backward pass
    step_s: float  # compute + exposed communication

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("gpus", "tokens_per_gpu", "compute_s", "step_s"),
                              maxima={"gpus": fabrics.MAX_GPUS})

    @property
    def efficiency(self) -> float:
        """Scaling efficiency: time a perfectly scaling system would take / this step time."""
        return self.compute_s / self.step_s

    @property
    def comm_to_compute(self) -> float:
        return self.all_reduce_s / self.compute_s


def data_parallel_step(system: System | str, gpus: int, params: float = BERT_LARGE_PARAMS,
                       tokens_per_gpu: float | None = None, global_tokens: float | None = None,
                       grad_bytes_per_param: float = 2.0, precision: str = "fp16",
                       achieved_fraction: float = 0.4, overlap: float = 0.0,
                       inter_algorithm: str = "ring") -> DataParallelStep:
    """Step time of data-parallel training: compute + the non-overlapped gradient all-reduce.

    Chapter: *NVLink, NVSwitch and collectives*, section "Why this decides data-parallel scaling".

    * compute = 6 x params x tokens per GPU / (achieved_fraction x dense peak of ``precision``): forward
      2 FLOP and backward 4 FLOP per parameter and token (the attention-score term, 2% for BERT-Large at
      128 tokens, is ignored);
    * the gradient all-reduce moves ``params x grad_bytes_per_param`` bytes (2: FP16 gradients of mixed
      precision) with the system's ring or hierarchical all-reduce;
    * ``overlap`` in [0, 1] is the fraction of the backward pass (2/3 of compute) behind which the
      all-reduce can hide, as DDP's gradient buckets do; 0 means no overlap.

    Give either ``tokens_per_gpu`` (weak scaling: the per-GPU batch is fixed) or ``global_tokens``
    (strong scaling: the global batch is split over the GPUs).
    """
    known = systems()
    sysm = known[system] if isinstance(system, str) and system in known else system
    if not isinstance(sysm, fabrics.NodeNetwork):
        raise ValueError(f"system={system!r} is not known; allowed: an ampere.fabrics.NodeNetwork or one of "
                         f"{', '.join(known)}")
    inter_algorithm = check.one_of("inter_algorithm", inter_algorithm, collectives.ALGORITHMS)
    gpus = check.positive_int("gpus", gpus)
    if (tokens_per_gpu is None) == (global_tokens is None):
        raise ValueError("give exactly one of tokens_per_gpu (weak scaling) or global_tokens (strong scaling)")
    tokens = (check.positive("tokens_per_gpu", tokens_per_gpu) if tokens_per_gpu is not None
              else check.positive("global_tokens", global_tokens) / gpus)
    params = check.positive("params", params)
    frac = check.fraction("achieved_fraction", achieved_fraction, allow_zero=False)
    ov = check.fraction("overlap", overlap)
    peak = specs.get(sysm.gpu).peak_flops(precision)
    compute = 6 * params * tokens / (frac * peak)
    comm = collectives.all_reduce_time(params * check.nonneg("grad_bytes_per_param", grad_bytes_per_param), gpus,
                                       sysm, inter_algorithm) if gpus > 1 else 0.0
    exposed = max(0.0, comm - ov * (2 / 3) * compute)
    return DataParallelStep(gpus, tokens, compute, comm, exposed, compute + exposed)


#: The most GPU counts :func:`crossover_gpus` tries (a bound on the work of one call).
MAX_CANDIDATES = 64


def crossover_gpus(system: System | str, candidates: Sequence[int] = tuple(2**k for k in range(1, 13)),
                   **kwargs: Any) -> int | None:
    """Smallest GPU count in ``candidates`` where the all-reduce takes longer than the compute, or None.

    Chapter: *NVLink, NVSwitch and collectives*, the seed's "beyond 16-32 V100s" claim. ``kwargs`` go to
    :func:`data_parallel_step` (give ``global_tokens`` for strong scaling).
    """
    counts = check.sequence("candidates", candidates, lambda name, v: check.positive_int(name, v, maximum=fabrics.MAX_GPUS),
                            max_len=MAX_CANDIDATES)
    for n in counts:
        if data_parallel_step(system, n, **kwargs).comm_to_compute > 1:
            return n
    return None

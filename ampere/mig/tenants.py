"""The isolation model's inputs: the tenants' workloads, the model's assumptions, one request's service time.

Chapter: *Multi-Instance GPU*, section "Isolation, in a model" (book/mig.ipynb). Pure Python (no torch, no
matplotlib). The sharing modes and scenarios (:data:`MODES`, :data:`SCENARIOS`), one tenant's requests
(:class:`Workload`), the assumptions of :class:`SimConfig` (every one stated in the chapter), the chapter's
seven tenants (:func:`default_tenants`) and the roofline service time of one request (:func:`service_time`).
The simulator that runs them is :mod:`ampere.mig.sim`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import check, specs
from . import geometry

__all__ = ["MODES", "SCENARIOS", "Workload", "SimConfig", "default_tenants", "service_time"]


#: Ways to share one GPU (plus "dedicated": one whole GPU per tenant, the baseline).
MODES = ("dedicated", "mig", "timeslice", "mps", "mps-limited")
#: The seventh tenant: a well-behaved copy of the others, a bully of HBM bandwidth, or a bully of PCIe.
SCENARIOS = ("quiet", "hbm-bully", "pcie-bully")


@dataclass(frozen=True)
class Workload:
    """One tenant's requests, all alike. A request first copies its input over PCIe, then runs its kernels.

    Kernel time on ``s`` SMs with ``b`` bytes/s of HBM bandwidth is the roofline ``max(F / (min(s, p) r),
    B / b)`` with ``r`` the per-SM rate: a request cannot use more SMs than its parallelism ``p``.
    """

    name: str
    flops: float  # FLOP per request (dense tensor-core math)
    hbm_bytes: float  # HBM traffic per request, bytes
    pcie_bytes: float  # host-to-device bytes per request, copied before the kernels run
    parallel_sms: int  # SMs one request can keep busy; more do not speed it up
    rate_per_s: float | None  # Poisson arrivals per second; None = closed loop (always a request waiting)
    noisy: bool = False  # the neighbour whose effect on the others we measure

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Workload.name must be a non-empty string; got {self.name!r}")
        for name in ("flops", "hbm_bytes", "pcie_bytes"):
            object.__setattr__(self, name, check.nonneg(f"Workload.{name}", getattr(self, name)))
        if self.flops == 0 and self.hbm_bytes == 0:
            raise ValueError("Workload.flops and Workload.hbm_bytes are both 0: a request must do some work")
        object.__setattr__(self, "parallel_sms", check.bounded_int("Workload.parallel_sms", self.parallel_sms, 1, 1024,
                                                                   why="SMs of one GPU"))
        if self.rate_per_s is not None:
            try:
                rate = check.positive("Workload.rate_per_s", self.rate_per_s)
            except ValueError as exc:
                raise ValueError(f"{exc} (or None for a closed loop)") from None
            object.__setattr__(self, "rate_per_s", rate)
        object.__setattr__(self, "noisy", check.boolean("Workload.noisy", self.noisy))


@dataclass(frozen=True)
class SimConfig:
    """Assumptions of the isolation model. Defaults are the chapter's; every one is stated there."""

    gpu: str = "A100-SXM4-40GB"
    precision: str = "fp16"  # tensor-core precision of the requests' math
    compute_efficiency: float = 0.5  # fraction of peak tensor throughput a request's kernels reach
    hbm_efficiency: float = 0.8  # fraction of datasheet HBM bandwidth reached
    pcie_efficiency: float = 0.8  # fraction of the PCIe x16 per-direction rate reached
    timeslice_s: float = 2e-3  # time-slice length (NVIDIA does not document it: an assumption)
    switch_s: float = 25e-6  # GPU idle time per context switch (an assumption)
    mps_sm_fraction: float = 1 / 7  # CUDA_MPS_ACTIVE_THREAD_PERCENTAGE / 100 in mode "mps-limited"
    mig_profile: str | None = None  # None: the GPU's smallest one-slice profile (1g.5gb on A100-40GB)
    clock_scale: float = 1.0  # SM clock relative to boost (below 1: a power-capped GPU)
    duration_s: float = 3.0  # simulated time
    warmup_s: float = 0.3  # requests arriving before this are not counted

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpu", check.gpu("SimConfig.gpu", self.gpu))
        check.one_of("SimConfig.precision", self.precision, specs.get(self.gpu).precisions())
        for name in ("compute_efficiency", "hbm_efficiency", "pcie_efficiency", "mps_sm_fraction", "clock_scale"):
            object.__setattr__(self, name, check.fraction(f"SimConfig.{name}", getattr(self, name), allow_zero=False))
        object.__setattr__(self, "timeslice_s", check.bounded("SimConfig.timeslice_s", self.timeslice_s, 1e-5, 1.0,
                                                              why="a GPU time slice"))
        object.__setattr__(self, "duration_s", check.bounded("SimConfig.duration_s", self.duration_s, 1e-3, 600.0,
                                                             why="simulated seconds: the event loop is bounded"))
        for name in ("switch_s", "warmup_s"):
            object.__setattr__(self, name, check.nonneg(f"SimConfig.{name}", getattr(self, name)))
        if not self.switch_s < self.timeslice_s:
            raise ValueError(f"SimConfig.switch_s={self.switch_s!r} must be >= 0 and below timeslice_s")
        if not self.warmup_s < self.duration_s:
            raise ValueError(f"SimConfig.warmup_s={self.warmup_s!r} must be >= 0 and below duration_s")
        if self.mig_profile is not None and specs.get(self.gpu).mig_max_instances:
            check.one_of("SimConfig.mig_profile", self.mig_profile, [p.name for p in geometry.profiles(self.gpu)])

    @property
    def spec(self) -> specs.GPUSpec:
        return specs.get(self.gpu)

    @property
    def flops_per_sm(self) -> float:
        """Achieved FLOP/s of one SM: peak / SMs x efficiency x clock scale."""
        s = self.spec
        return s.peak_flops(self.precision) / s.sm_count * self.compute_efficiency * self.clock_scale

    @property
    def hbm_bytes_per_s(self) -> float:
        return self.spec.hbm_bytes_per_s * self.hbm_efficiency

    @property
    def pcie_bytes_per_s(self) -> float:
        return self.spec.pcie_bytes_per_s * self.pcie_efficiency


def _config(config: SimConfig | None) -> SimConfig:
    if config is None:
        return SimConfig()
    if not isinstance(config, SimConfig):
        raise TypeError(f"config must be a SimConfig or None; got {config!r}")
    return config


def default_tenants(scenario: str = "quiet", config: SimConfig | None = None,
                    victim: Workload | None = None, n: int = 7) -> tuple[Workload, ...]:
    """Seven tenants: ``n - 1`` identical inference services and a seventh that depends on ``scenario``.

    The default service is ResNet-50-sized image classification, batch 8 (assumed: 8.2 GFLOP per image,
    200 MB of HBM traffic per batch, fp16 images of 224 x 224 x 3 over PCIe), whose kernels keep about half
    an A100 (54 SMs) busy, at 100 batches/s. The bullies are closed loops that use every SM: ``hbm-bully``
    streams 2 GB through HBM per request, ``pcie-bully`` copies 512 MB from the host per request.
    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    check.one_of("scenario", scenario, SCENARIOS)
    n = check.bounded_int("n", n, 2, 64, why="tenants of one GPU (MIG has at most 7, MPS at most 48 clients)")
    cfg = _config(config)
    if victim is not None and not isinstance(victim, Workload):
        raise TypeError(f"victim must be a Workload or None; got {victim!r}")
    all_sms = cfg.spec.sm_count
    v = victim or Workload("service", flops=8 * 8.2e9, hbm_bytes=2e8, pcie_bytes=8 * 3 * 224 * 224 * 2,
                           parallel_sms=54, rate_per_s=100.0)
    out = [Workload(f"t{i + 1}", v.flops, v.hbm_bytes, v.pcie_bytes, v.parallel_sms, v.rate_per_s)
           for i in range(n - 1)]
    if scenario == "quiet":
        out.append(Workload(f"t{n}", v.flops, v.hbm_bytes, v.pcie_bytes, v.parallel_sms, v.rate_per_s))
    elif scenario == "hbm-bully":
        out.append(Workload(f"t{n} (HBM bully)", flops=1e9, hbm_bytes=2e9, pcie_bytes=0.0, parallel_sms=all_sms,
                            rate_per_s=None, noisy=True))
    else:
        out.append(Workload(f"t{n} (PCIe bully)", flops=1e8, hbm_bytes=5.12e8, pcie_bytes=5.12e8,
                            parallel_sms=all_sms, rate_per_s=None, noisy=True))
    return tuple(out)


def service_time(w: Workload, sms: float, hbm_bytes_per_s: float, pcie_bytes_per_s: float,
                 config: SimConfig | None = None, flops_per_sm: float | None = None) -> float:
    """Seconds for one request of ``w`` alone on ``sms`` SMs with the given bandwidths (copy, then kernels).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    cfg = _config(config)
    if not isinstance(w, Workload):
        raise TypeError(f"w must be a Workload; got {w!r}")
    sms = check.at_most("sms", check.positive("sms", sms), 1e4, "SMs of one GPU")
    hbm_bytes_per_s = check.positive("hbm_bytes_per_s", hbm_bytes_per_s)
    pcie_bytes_per_s = check.positive("pcie_bytes_per_s", pcie_bytes_per_s)
    r = cfg.flops_per_sm if flops_per_sm is None else check.positive("flops_per_sm", flops_per_sm)
    kernels = max(w.flops / (min(sms, w.parallel_sms) * r), w.hbm_bytes / hbm_bytes_per_s)
    return w.pcie_bytes / pcie_bytes_per_s + kernels

"""The isolation model: seven inference tenants sharing one GPU under MIG, time-slicing and MPS.

Chapter: *Multi-Instance GPU*, section "Isolation, in a model" (book/mig.ipynb). Pure Python and NumPy (no
torch, no matplotlib): a discrete-event simulation of tenants whose requests copy their input over PCIe and
then run roofline-timed kernels on the SMs and HBM bandwidth their sharing mode gives them. MIG instances
come from :mod:`ampere.mig.geometry` (SMs and memory slices of a profile, a valid layout for the tenants);
every other number is an assumption of :class:`SimConfig` or :func:`default_tenants` (both in
:mod:`ampere.mig.tenants`), stated in the chapter.

The old path ``ampere.mig_sim`` is this module: it re-exports the inputs of :mod:`ampere.mig.tenants`, so
its ``__all__`` is the whole isolation model.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Sequence

from .. import check
from ..fields import check_fields
from . import geometry
from .tenants import MODES, SCENARIOS, SimConfig, Workload, _config, default_tenants, service_time

__all__ = ["MODES", "SCENARIOS", "Workload", "SimConfig", "TenantStats", "VictimSummary", "SimResult",
           "IsolationRow", "default_tenants", "service_time", "simulate", "isolation_study"]


@dataclass(frozen=True)
class TenantStats:
    """One tenant's outcome. Latency = completion - arrival, for requests arriving after the warm-up."""
    FIELD_RULES = {}  # the checks of fields.check_fields


    name: str
    noisy: bool
    offered_per_s: float | None
    throughput_per_s: float
    p50_ms: float
    p99_ms: float
    mean_ms: float
    completed: int
    backlog: int  # requests still queued at the end
    saturated: bool  # an open-loop tenant served well below its arrival rate: its queue grows without bound

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass(frozen=True)
class VictimSummary:
    """The well-behaved tenants of one simulation, pooled: latency percentiles and throughputs."""
    FIELD_RULES = {"choices": {"mode": MODES}}  # the checks of fields.check_fields


    mode: str
    victim_p50_ms: float
    victim_p99_ms: float
    victim_throughput_per_s: float
    noisy_throughput_per_s: float | None  # the bully's own rate (None: no bully)
    saturated: bool  # some victim's queue grows without bound

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass
class SimResult:
    """Everything one simulation produced (latency arrays kept for exact comparisons between runs)."""

    mode: str
    tenants: tuple[TenantStats, ...]
    latencies_s: tuple[Any, ...]  # numpy array per tenant (counted requests only)
    config: SimConfig
    mig_layout: tuple[tuple[str, int], ...] | None = None

    def _names(self, names: Sequence[str] | None) -> set[str] | None:
        if names is None:
            return None
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            raise TypeError(f"names must be a list of tenant names or None; got {names!r}")
        known = {t.name for t in self.tenants}
        unknown = sorted(set(names) - known)
        if unknown:
            raise ValueError(f"names {unknown} are not tenants of this run; tenants: {', '.join(sorted(known))}")
        return set(names)

    def victims(self, names: Sequence[str] | None = None) -> list[TenantStats]:
        """The well-behaved tenants (``names`` picks some of them by name)."""
        names = self._names(names)
        return [t for t in self.tenants if not t.noisy and (names is None or t.name in names)]

    def victim_latencies_s(self, names: Sequence[str] | None = None) -> Any:
        """The counted latencies (seconds) of the well-behaved tenants (or of ``names``), pooled."""
        import numpy as np

        names = self._names(names)
        arrays = [lat for t, lat in zip(self.tenants, self.latencies_s)
                  if not t.noisy and (names is None or t.name in names)]
        return np.concatenate(arrays) if arrays else np.zeros(0)

    def victim_summary(self, names: Sequence[str] | None = None) -> VictimSummary:
        """Pooled latency percentiles and total throughput of the well-behaved tenants (or of ``names``)."""
        import numpy as np

        lat = self.victim_latencies_s(names)
        p50, p99 = (float(np.percentile(lat, q)) * 1e3 for q in (50, 99)) if lat.size else (math.nan, math.nan)
        noisy = [t for t in self.tenants if t.noisy]
        vict = self.victims(names)
        return VictimSummary(mode=self.mode, victim_p50_ms=p50, victim_p99_ms=p99,
                             victim_throughput_per_s=sum(t.throughput_per_s for t in vict),
                             noisy_throughput_per_s=sum(t.throughput_per_s for t in noisy) if noisy else None,
                             saturated=any(t.saturated for t in vict))


def _arrivals(rate: float, horizon: float, rng: Any) -> list[float]:
    import numpy as np

    out: list[float] = []
    t = 0.0
    chunk = max(16, int(rate * horizon * 1.2) + 16)
    while t < horizon:
        gaps = rng.exponential(1.0 / rate, size=chunk)
        times = t + np.cumsum(gaps)
        out.extend(float(x) for x in times if x < horizon)
        t = float(times[-1])
    return out


def simulate(tenants: Sequence[Workload], mode: str, config: SimConfig | None = None, seed: int = 0) -> SimResult:
    """Discrete-event model of ``tenants`` sharing one GPU under ``mode`` (see :data:`MODES`).

    * ``dedicated``: every tenant has a whole GPU and its own PCIe link (the seven-cards baseline).
    * ``mig``: every tenant has one instance of ``config.mig_profile`` (SMs and memory slices fixed, so
      HBM bandwidth = memory slices / 8); the PCIe link is shared by all instances.
    * ``timeslice``: one tenant at a time owns the whole GPU, round-robin, ``config.timeslice_s`` per turn,
      ``config.switch_s`` lost per switch; a tenant yields early when it runs out of work.
    * ``mps``: all tenants run at once; SMs, HBM and PCIe are shared in proportion to what each asks for
      (no arbitration between clients). ``mps-limited`` caps each client at ``config.mps_sm_fraction`` of the
      SMs (``CUDA_MPS_ACTIVE_THREAD_PERCENTAGE``) and leaves bandwidth unpartitioned.

    Arrivals are Poisson, drawn per tenant from ``numpy.random.RandomState([seed, index])`` (a stream NumPy
    keeps stable across versions), so a tenant sees the same arrivals in every mode and scenario. Each
    tenant serves one request at a time (FIFO).
    Chapter: *Multi-Instance GPU*, section "Isolation, in a model".
    """
    import numpy as np

    cfg = _config(config)
    check.one_of("mode", mode, MODES)
    seed = check.nonneg_int("seed", seed)
    def workload(name: str, w: Any) -> Workload:
        if not isinstance(w, Workload):
            raise TypeError(f"{name} must be a Workload, got {w!r:.60} ({type(w).__name__})")
        return w

    tenants = tuple(check.sequence("tenants", tenants, workload, max_len=64))
    n = len(tenants)
    spec = cfg.spec
    N = spec.sm_count
    r = cfg.flops_per_sm
    BW = cfg.hbm_bytes_per_s
    PCIE = cfg.pcie_bytes_per_s
    layout = None
    inst_sms = inst_bw = 0.0
    if mode == "mig":
        pname = cfg.mig_profile or geometry.smallest_profile(spec).name
        prof = geometry.profile(spec, pname)
        if prof.sm_count is None:
            raise ValueError(f"mig_profile={pname!r} on {spec.name} has no sourced SM count; "
                             "the model needs one (use an A100)")
        layout = geometry.place(spec, [pname] * n)
        inst_sms, inst_bw = float(prof.sm_count), BW * float(prof.memory_fraction)
    sm_cap = float(N) if mode != "mps-limited" else max(1.0, math.floor(N * cfg.mps_sm_fraction))

    def gpu_rate(w: Workload, s: float, b: float) -> float:
        t_k = max(w.flops / (min(s, w.parallel_sms) * r) if w.flops else 0.0, w.hbm_bytes / b if w.hbm_bytes else 0.0)
        return 1.0 / t_k

    cache: dict[tuple[int, ...], list[float]] = {}

    def alloc(phase: Sequence[int]) -> list[float]:
        """Progress rate per tenant (bytes/s in the copy phase, fraction/s in the kernel phase)."""
        key = tuple(phase)
        if key in cache:
            return cache[key]
        rates = [0.0] * n
        copying = [i for i in range(n) if phase[i] == 0]
        computing = [i for i in range(n) if phase[i] == 1]
        if mode == "dedicated":
            for i in copying:
                rates[i] = PCIE
            for i in computing:
                rates[i] = gpu_rate(tenants[i], N, BW)
        else:  # one shared PCIe link: processor-shared among the copies in flight
            for i in copying:
                rates[i] = PCIE / len(copying)
            if mode == "mig":
                for i in computing:
                    rates[i] = gpu_rate(tenants[i], inst_sms, inst_bw)
            elif computing:  # mps, mps-limited: shares in proportion to demand
                want = [min(float(tenants[i].parallel_sms), sm_cap) for i in computing]
                total = sum(want)
                sms = [x * min(1.0, N / total) for x in want]
                demand = []
                for i, s in zip(computing, sms):
                    w = tenants[i]
                    t_c = w.flops / (min(s, w.parallel_sms) * r) if w.flops else 0.0
                    demand.append(min(BW, w.hbm_bytes / t_c) if t_c > 0 else BW)
                total_demand = sum(demand)
                scale = min(1.0, BW / total_demand) if total_demand > 0 else 1.0
                for i, s, d in zip(computing, sms, demand):
                    rates[i] = gpu_rate(tenants[i], s, d * scale)
        cache[key] = rates
        return rates

    # per-tenant state
    # legacy RandomState: its streams are frozen across NumPy versions, so stored outputs stay reproducible
    arrivals = [(_arrivals(w.rate_per_s, cfg.duration_s, np.random.RandomState([seed, i]))
                 if w.rate_per_s is not None else []) for i, w in enumerate(tenants)]
    nxt = [0] * n
    queue: list[deque[float]] = [deque() for _ in range(n)]
    phase = [-1] * n
    rem = [0.0] * n
    done_lat: list[list[float]] = [[] for _ in range(n)]
    done_count = [0] * n
    counted_arrivals = [sum(1 for a in arr if a >= cfg.warmup_s) for arr in arrivals]

    def start(i: int) -> None:
        w = tenants[i]
        if w.pcie_bytes > 0:
            phase[i], rem[i] = 0, w.pcie_bytes
        else:
            phase[i], rem[i] = 1, 1.0

    t = 0.0
    for i, w in enumerate(tenants):
        if w.rate_per_s is None:  # closed loop: a request is always waiting
            queue[i].append(0.0)
            start(i)

    # time-slicing state
    owner: int | None = None
    last_owner: int | None = None
    switch_end = 0.0
    slice_end = math.inf
    eps = 1e-12

    def pick_next(after: int | None) -> int | None:
        order = range(n) if after is None else [(after + 1 + k) % n for k in range(n)]
        for j in order:
            if phase[j] != -1:
                return j
        return None

    def settle(now: float) -> None:
        nonlocal owner, last_owner, switch_end, slice_end
        if owner is not None and phase[owner] != -1:
            return
        nxt_owner = pick_next(owner if owner is not None else last_owner)
        if nxt_owner is None:
            if owner is not None:
                last_owner = owner
            owner, slice_end = None, math.inf
            return
        prev = owner if owner is not None else last_owner
        owner = nxt_owner
        switch_end = now + (cfg.switch_s if prev is not None and prev != owner else 0.0)
        slice_end = switch_end + cfg.timeslice_s

    while True:
        if mode == "timeslice":
            settle(t)
            rates = [0.0] * n
            if owner is not None and t >= switch_end - eps:
                w = tenants[owner]
                rates[owner] = PCIE if phase[owner] == 0 else gpu_rate(w, N, BW)
            t_pol = switch_end if (owner is not None and t < switch_end - eps) else slice_end
        else:
            rates = alloc(phase)
            t_pol = math.inf
        t_done, who = math.inf, -1
        for i in range(n):
            if phase[i] != -1 and rates[i] > 0:
                tt = t + rem[i] / rates[i]
                if tt < t_done:
                    t_done, who = tt, i
        t_arr, src = math.inf, -1
        for i in range(n):
            if nxt[i] < len(arrivals[i]) and arrivals[i][nxt[i]] < t_arr:
                t_arr, src = arrivals[i][nxt[i]], i
        t_next = min(t_done, t_arr, t_pol)
        if t_next >= cfg.duration_s:
            break
        dt = t_next - t
        if dt > 0:
            for i in range(n):
                if phase[i] != -1 and rates[i] > 0:
                    rem[i] = max(0.0, rem[i] - rates[i] * dt)
        t = t_next
        if t_next == t_done:
            i = who
            if phase[i] == 0:
                phase[i], rem[i] = 1, 1.0
            else:
                arrived = queue[i].popleft()
                if arrived >= cfg.warmup_s:
                    done_lat[i].append(t - arrived)
                if t >= cfg.warmup_s:
                    done_count[i] += 1
                if tenants[i].rate_per_s is None:
                    queue[i].append(t)
                if queue[i]:
                    start(i)
                else:
                    phase[i], rem[i] = -1, 0.0
        elif t_next == t_arr:
            i = src
            nxt[i] += 1
            queue[i].append(t)
            if phase[i] == -1:
                start(i)
        else:  # time-slicing: a switch finished, or a slice expired
            if t >= slice_end - eps and owner is not None:
                others = any(phase[j] != -1 for j in range(n) if j != owner)
                if others:
                    last_owner = owner
                    nxt_owner = pick_next(owner)
                    owner = nxt_owner
                    switch_end = t + cfg.switch_s
                    slice_end = switch_end + cfg.timeslice_s
                else:
                    slice_end = t + cfg.timeslice_s

    span = cfg.duration_s - cfg.warmup_s
    stats = []
    lats = []
    for i, w in enumerate(tenants):
        lat = np.asarray(done_lat[i], dtype=np.float64)
        lats.append(lat)
        thr = done_count[i] / span
        p50, p99, mean = ((float(np.percentile(lat, 50)) * 1e3, float(np.percentile(lat, 99)) * 1e3,
                           float(lat.mean()) * 1e3) if lat.size else (math.nan, math.nan, math.nan))
        backlog = len(queue[i]) - (1 if w.rate_per_s is None else 0)
        # a stable queue ends with a handful of requests waiting; a saturated one with a growing pile
        saturated = w.rate_per_s is not None and backlog > max(10, 0.05 * counted_arrivals[i])
        stats.append(TenantStats(w.name, w.noisy, w.rate_per_s, thr, p50, p99, mean, int(lat.size), backlog,
                                 saturated))
    return SimResult(mode, tuple(stats), tuple(lats), cfg, layout)


@dataclass(frozen=True)
class IsolationRow:
    """One sharing mode under one scenario: the six services' pooled latencies and the ratio to quiet."""
    FIELD_RULES = {"choices": {"mode": MODES, "scenario": SCENARIOS}}  # the checks of fields.check_fields


    mode: str
    scenario: str
    victim_p50_ms: float
    victim_p99_ms: float
    victim_throughput_per_s: float
    noisy_throughput_per_s: float | None
    saturated: bool
    p99_vs_quiet: float  # victims' p99 over the same mode's quiet scenario (NaN without a quiet run first)

    def __post_init__(self) -> None:
        check_fields(self)


def isolation_study(config: SimConfig | None = None, modes: Sequence[str] = MODES,
                    scenarios: Sequence[str] = SCENARIOS, seed: int = 0,
                    victim: Workload | None = None) -> list[IsolationRow]:
    """Every ``mode`` x ``scenario``: pooled victim p50/p99, throughputs, and the p99 ratio to ``quiet``.

    The same six services are compared in every scenario (the seventh tenant is the one that changes).
    Chapter: *Multi-Instance GPU*, section "Isolation, in a model".
    """
    cfg = _config(config)
    modes = check.names("modes", modes, MODES)
    scenarios = check.names("scenarios", scenarios, SCENARIOS)
    rows = []
    for mode in modes:
        base = None
        for sc in scenarios:
            tenants = default_tenants(sc, cfg, victim)
            same_six = [w.name for w in tenants[:-1]]  # compare the same tenants in every scenario
            v = simulate(tenants, mode, cfg, seed).victim_summary(same_six)
            if sc == "quiet":
                base = v.victim_p99_ms
            rows.append(IsolationRow(mode=mode, scenario=sc, victim_p50_ms=v.victim_p50_ms,
                                     victim_p99_ms=v.victim_p99_ms,
                                     victim_throughput_per_s=v.victim_throughput_per_s,
                                     noisy_throughput_per_s=v.noisy_throughput_per_s, saturated=v.saturated,
                                     p99_vs_quiet=v.victim_p99_ms / base if base else math.nan))
    return rows

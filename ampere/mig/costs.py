"""What serving seven small models costs: one A100 cut with MIG, or a card per model. Pure Python.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb), section "What it costs". No torch,
no matplotlib: the dated cloud prices of :mod:`ampere.pricing` and the service time of the isolation model
(:mod:`ampere.mig.tenants`) on each model's share of the GPU.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

from .. import check, pricing, specs
from ..fields import check_fields
from .geometry import COMPUTE_SLICES, profile, smallest_profile
from .tenants import SimConfig, Workload, default_tenants, service_time

__all__ = ["ServingOption", "serving_costs"]


# ---------------------------------------------------------------------------------------------------------
# Economics: seven small models on one A100, or on seven cards
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServingOption:
    """One way to serve ``models`` small models, with its hourly cost range and per-model capacity."""
    FIELD_RULES = {"positive": ("per_model_hbm_bytes_per_s", "per_model_memory_bytes", "service_ms", "capacity_per_s"), "bounds": {"per_model_sms": (1, 1024)}}  # the checks of fields.check_fields


    label: str
    cards: str  # what is rented
    gpu: str  # catalogue name of the GPU rented
    mig_profile: str | None  # the instance each model gets (None: a whole card per model)
    usd_per_h: tuple[float, float]  # whole deployment, low..high
    per_model_usd_per_h: tuple[float, float]
    per_model_sms: int
    per_model_hbm_bytes_per_s: float
    per_model_memory_bytes: float
    service_ms: float  # one request alone on its share
    capacity_per_s: float  # requests/s per model at the utilisation cap
    feasible: bool  # capacity covers the demand
    usd_per_million: tuple[float, float]  # cost of a million requests at the given demand
    price_sources: tuple[str, ...]  # bib keys of the prices
    price_as_of: str

    def __post_init__(self) -> None:
        check_fields(self)


def _quote(name: str, q: Any) -> pricing.PriceQuote:
    if not isinstance(q, pricing.PriceQuote):
        raise TypeError(f"{name} must be an ampere.pricing.PriceQuote, got {q!r:.60} ({type(q).__name__})")
    return q


def serving_costs(demand_per_s: float = 100.0, models: int = 7, max_utilization: float = 0.7,
                  workload: Workload | None = None, config: SimConfig | None = None,
                  prices: Sequence[pricing.PriceQuote] | None = None) -> list[ServingOption]:
    """Serve ``models`` copies of ``workload`` at ``demand_per_s`` each: one A100 cut with MIG, or a card each.

    Options: a whole A100 80GB per model; one A100 80GB cut into ``models`` one-slice instances (1g.10gb);
    the same on hyperscaler 8-GPU instances, priced per GPU, one option per GPU model rented (an A100
    40GB instance is cut into 1g.5gb, an 80GB one into 1g.10gb: the one-slice profile of the GPU rented);
    and a small card per model (RTX A6000, RTX A2000). Capacity per model is ``max_utilization /
    service_time`` with the isolation model's service time on each model's share. Cost per million requests
    = hourly cost / (models x demand x 3600) x 1e6. Chapter: *Multi-Instance GPU*, section "What it costs".
    """
    demand_per_s = check.positive("demand_per_s", demand_per_s)
    models = check.positive_int("models", models, maximum=COMPUTE_SLICES)
    max_utilization = check.fraction("max_utilization", max_utilization, allow_zero=False)
    if workload is not None and not isinstance(workload, Workload):
        raise TypeError(f"workload must be a Workload or None; got {workload!r}")
    base = config if config is not None else SimConfig()
    if not isinstance(base, SimConfig):
        raise TypeError(f"config must be a SimConfig or None; got {config!r}")
    quotes = pricing.quotes() if prices is None else check.sequence("prices", prices, _quote, max_len=1000)
    w = workload or default_tenants("quiet", base)[0]

    def option(label: str, cards: str, gpu: str, count: int, per_gpu: tuple[float, float], sources: Sequence[str],
               as_of: str, mig: str | None) -> ServingOption:
        cfg = SimConfig(**{**asdict(base), "gpu": gpu, "mig_profile": None})
        spec = cfg.spec
        if mig:
            p = profile(spec, mig)
            sms, bw, mem = p.sm_count or 0, cfg.hbm_bytes_per_s * float(p.memory_fraction), \
                spec.memory_bytes * float(p.memory_fraction)
        else:
            sms, bw, mem = spec.sm_count, cfg.hbm_bytes_per_s, spec.memory_bytes
        t = service_time(w, sms, bw, cfg.pcie_bytes_per_s, cfg)
        cap = max_utilization / t
        cost = (per_gpu[0] * count, per_gpu[1] * count)
        per_million = (cost[0] / (models * demand_per_s * 3600) * 1e6, cost[1] / (models * demand_per_s * 3600) * 1e6)
        return ServingOption(label, cards, gpu, mig, cost, (cost[0] / models, cost[1] / models), int(sms), bw, mem,
                             t * 1e3, cap, cap >= demand_per_s, per_million, tuple(dict.fromkeys(sources)), as_of)

    single = {q.gpu: q for q in quotes if q.gpus == 1}
    rows = []
    a100 = single.get("A100-SXM4-80GB")
    if a100:
        one = smallest_profile(a100.gpu).name
        rows.append(option(f"{models} x A100 80GB, one model each", f"{models} GPUs", a100.gpu, models,
                           a100.per_gpu, [a100.source], a100.as_of, None))
        rows.append(option(f"1 x A100 80GB, {models} x {one} (MIG)", "1 GPU", a100.gpu, 1, a100.per_gpu,
                           [a100.source], a100.as_of, one))
    eights: dict[str, list[Any]] = {}
    for q in quotes:
        if q.gpus == 8 and specs.get(q.gpu).mig_max_instances:
            eights.setdefault(q.gpu, []).append(q)
    for gpu, qs in sorted(eights.items()):
        one = smallest_profile(gpu).name
        lo, hi = min(q.per_gpu[0] for q in qs), max(q.per_gpu[1] for q in qs)
        size = specs.get(gpu).name.rsplit("-", 1)[-1]  # the product's own name: "40GB", "80GB"
        rows.append(option(f"1/8 of an 8 x A100 {size} instance, {models} x {one} (MIG)", "1 GPU of 8", gpu, 1,
                           (lo, hi), [q.source for q in qs], qs[0].as_of, one))
    for gpu in ("RTX-A6000", "RTX-A2000-12GB"):
        q = single.get(gpu)
        if q:
            rows.append(option(f"{models} x {q.label.split(' (')[0]}, one model each", f"{models} GPUs", gpu, models,
                               q.per_gpu, [q.source], q.as_of, None))
    return rows

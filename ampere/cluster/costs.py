"""Power, energy and money: cloud offers, owning a DGX A100, a training run's time and energy, and what a
throughput gap costs.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), sections "Renting
or owning", "Energy of a training run" and "The reference-architecture gap". The 8-GPU cloud offers come
from :mod:`ampere.pricing` (:func:`cloud_offers`); :class:`Ownership` holds every assumption of owning a DGX
as an input; :func:`throughput_gap_cost` prices an 8-12 % throughput gap between a deployment and NVIDIA's
reference architecture [seed004]. Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import check, fabrics, pricing
from .. import fields as _fields
from .checks import _check_float, _check_int
from .node import DGX_A100_320GB_LIST_PRICE_USD, DGX_A100_MAX_POWER_W


HOURS_PER_WEEK = 168.0
HOURS_PER_YEAR = 365.25 * 24.0


def cloud_offers() -> tuple[pricing.PriceQuote, ...]:
    """The 8-GPU A100 cloud instances the chapter prices against (section "Renting"): the seed article's
    table, "public indicative prices, 2023, on demand, US" [seed000], read from :mod:`ampere.pricing`.
    Prices change; every function here takes the price as an argument."""
    return pricing.quotes(source="seed000", gpus=8)


#: Bounds against unit mistakes: the most power one node may draw (1 MW; a DGX A100 draws 6.5 kW at
#: most) and the largest PUE (facility over IT power; 1.1 to 2 in practice).
MAX_NODE_POWER_W = 1e6
MAX_PUE = 10.0


@dataclass(frozen=True)
class Ownership:
    """Assumptions of the cost of owning one DGX A100 (chapter section "Owning"). Every field is an input.

    Defaults: the launch price [anandtech2020ampere] (the seed says "about $200,000" [seed001]), straight-
    line amortisation over 4 years, 6.5 kW maximum [nvidia2020dgxa100wp] of which 70 % on average while
    busy, $0.10 per kWh, a PUE of 1.4 and no other operating cost. The last four are assumptions.
    """

    capex_usd: float = DGX_A100_320GB_LIST_PRICE_USD
    lifetime_years: float = 4.0
    max_power_w: float = DGX_A100_MAX_POWER_W
    busy_power_fraction: float = 0.7  # average power while busy / maximum power
    electricity_usd_per_kwh: float = 0.10
    pue: float = 1.4  # facility power / IT power
    opex_usd_per_year: float = 0.0  # support contract, hosting, staff
    gpus: int = 8

    def __post_init__(self) -> None:
        _check_float(self.capex_usd, "capex_usd")
        _check_float(self.lifetime_years, "lifetime_years", lo_open=True, hi=100.0)
        _check_float(self.max_power_w, "max_power_w", hi=MAX_NODE_POWER_W)
        _check_float(self.busy_power_fraction, "busy_power_fraction", 0.0, 1.0)
        _check_float(self.electricity_usd_per_kwh, "electricity_usd_per_kwh", hi=100.0)
        _check_float(self.pue, "pue", 1.0, MAX_PUE)
        _check_float(self.opex_usd_per_year, "opex_usd_per_year")
        _check_int(self.gpus, "gpus", maximum=fabrics.MAX_GPUS_PER_NODE)

    @property
    def fixed_usd_per_hour(self) -> float:
        """Amortisation plus fixed operating cost, per wall-clock hour of the node."""
        return self.capex_usd / (self.lifetime_years * HOURS_PER_YEAR) + self.opex_usd_per_year / HOURS_PER_YEAR

    @property
    def energy_usd_per_busy_hour(self) -> float:
        """Electricity of one busy hour of the node, facility overhead (PUE) included."""
        return self.max_power_w * self.busy_power_fraction * self.pue / 1e3 * self.electricity_usd_per_kwh


def ownership_usd_per_gpu_hour(own: Ownership = Ownership(), utilization: float = 0.8) -> float:
    """Cost of one *busy* GPU-hour on an owned DGX A100 busy a fraction ``utilization`` of the time.

    Chapter: *DGX A100 and the SuperPOD*, section "Owning". Fixed costs accrue every hour; energy only
    while busy (idle power is neglected): ``(fixed / u + energy) / gpus``.
    """
    if not isinstance(own, Ownership):
        raise TypeError(f"own must be an Ownership, got {own!r:.60}")
    u = _check_float(utilization, "utilization", 0.0, 1.0, lo_open=True)
    return (own.fixed_usd_per_hour / u + own.energy_usd_per_busy_hour) / own.gpus


def break_even_utilization(cloud_usd_per_gpu_hour: float, own: Ownership = Ownership()) -> float:
    """Utilisation above which owning is cheaper per busy GPU-hour than renting at the given price, as a
    ratio that is **not clipped**: a value above 1 means owning never breaks even, ``inf`` that energy alone
    costs more than the cloud. :func:`break_even` says which in words; use it for a page.

    Solves ``ownership_usd_per_gpu_hour(own, u) = price``. Chapter: *DGX A100 and the SuperPOD*, "Owning".
    """
    if not isinstance(own, Ownership):
        raise TypeError(f"own must be an Ownership, got {own!r}")
    price = _check_float(cloud_usd_per_gpu_hour, "cloud_usd_per_gpu_hour", lo_open=True)
    margin = price * own.gpus - own.energy_usd_per_busy_hour
    return float("inf") if margin <= 0 else own.fixed_usd_per_hour / margin


@dataclass(frozen=True)
class BreakEven:
    """Renting at ``price_usd_per_gpu_hour`` against owning (chapter section "Owning"): the break-even
    utilisation and the verdict, never a number clipped to 100 %."""

    price_usd_per_gpu_hour: float
    utilization: float  # unclipped ratio; > 1: owning never breaks even; inf: energy alone costs more
    own_usd_per_gpu_hour_at_full_use: float  # owning's cost of a busy GPU-hour at 100 % utilisation

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("price_usd_per_gpu_hour", "own_usd_per_gpu_hour_at_full_use"),
                              infinite=("utilization",))

    @property
    def breaks_even(self) -> bool:
        """True when some utilisation up to 100 % makes owning cheaper."""
        return self.utilization <= 1.0

    @property
    def verdict(self) -> str:
        """One sentence: "owning is cheaper above 50 % utilisation" or why it never is."""
        if self.utilization == float("inf"):
            return "owning never breaks even: its electricity alone costs more than renting"
        if not self.breaks_even:
            extra = 100 * (self.own_usd_per_gpu_hour_at_full_use / self.price_usd_per_gpu_hour - 1)
            return (f"owning never breaks even: busy every hour of the year it still costs {extra:.1f} % more "
                    "than renting")
        return f"owning is cheaper above {100 * self.utilization:.0f} % utilisation"


def break_even(cloud_usd_per_gpu_hour: float, own: Ownership = Ownership()) -> BreakEven:
    """:func:`break_even_utilization` with its verdict (section "Owning"): says "never" when the
    break-even utilisation is above 100 %, instead of a number that rounds to "100 %"."""
    u = break_even_utilization(cloud_usd_per_gpu_hour, own)
    return BreakEven(price_usd_per_gpu_hour=float(cloud_usd_per_gpu_hour), utilization=u,
                     own_usd_per_gpu_hour_at_full_use=ownership_usd_per_gpu_hour(own, 1.0))


def round_sig(value: float, digits: int = 2) -> float:
    """``value`` rounded to ``digits`` significant figures (2: 2,872,618 -> 2,900,000). Money in the chapter is
    shown this way: prices, utilisations and gaps are known to about two figures, not to the dollar."""
    v = check.real("value", value)
    n = _check_int(digits, "digits", maximum=15)
    if v == 0:
        return 0.0
    return round(v, n - 1 - math.floor(math.log10(abs(v))))


def cloud_offer(instance: str) -> pricing.PriceQuote:
    """The 2023 8-GPU offer of :func:`cloud_offers` for an instance name (``"p4d.24xlarge"``)."""
    offers = {q.instance: q for q in cloud_offers()}
    check.one_of("instance", instance, sorted(offers))
    return offers[instance]


def training_time_s(params: float, tokens: float, gpus: int, achieved_flops_per_gpu: float,
                    flop_per_param_token: float = 8.0) -> float:
    """End-to-end training time ``flop_per_param_token x T x P / (n X)`` [narayanan2021megatron].

    Chapter: *DGX A100 and the SuperPOD*, section "Energy of a training run". 8 = 2 (forward) + 4
    (backward) + 2 (recomputed forward) FLOPs per parameter and token; use 6 without recomputation.
    """
    p = _check_float(params, "params", lo_open=True)
    t = _check_float(tokens, "tokens", lo_open=True)
    n = _check_int(gpus, "gpus")
    x = _check_float(achieved_flops_per_gpu, "achieved_flops_per_gpu", lo_open=True)
    f = _check_float(flop_per_param_token, "flop_per_param_token", lo_open=True)
    return f * t * p / (n * x)


def training_energy_j(nodes: int, seconds: float, power_per_node_w: float = DGX_A100_MAX_POWER_W,
                      pue: float = 1.0) -> float:
    """Energy in joules of ``nodes`` nodes drawing ``power_per_node_w`` for ``seconds`` (x PUE)."""
    n = _check_int(nodes, "nodes", maximum=fabrics.MAX_GPUS)
    s = _check_float(seconds, "seconds")
    p = _check_float(power_per_node_w, "power_per_node_w", hi=MAX_NODE_POWER_W)
    q = _check_float(pue, "pue", 1.0, MAX_PUE)
    return n * p * s * q


@dataclass(frozen=True)
class GapCost:
    """What a throughput gap costs (chapter section "The reference-architecture gap")."""

    gap: float
    gpus: int
    usd_per_gpu_hour: float
    lost_gpu_hours_per_week: float  # capacity that produced nothing: gpus x 168 h x gap
    lost_cluster_hours_per_week: float  # the same, in hours of the whole cluster: 168 h x gap
    extra_time_fraction: float  # to finish the same work: gap / (1 - gap) more time
    usd_per_week: float
    usd_per_year: float

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("gpus",), maxima={"gap": 0.999999})


def throughput_gap_cost(gap: float, gpus: int = 1000, usd_per_gpu_hour: float | None = None) -> GapCost:
    """The reference-architecture gap calculator: a cluster delivering ``1 - gap`` of the throughput of
    an identical, well-configured one [seed004].

    Chapter: *DGX A100 and the SuperPOD*, section "The reference-architecture gap". The lost capacity is
    ``gpus x hours x gap`` GPU-hours, valued at ``usd_per_gpu_hour`` (default: the seed's p4d price per
    GPU, 2023). To finish a fixed amount of work the run lasts ``1 / (1 - gap)`` times longer.
    """
    g = _check_float(gap, "gap", 0.0, 1.0, hi_open=True)
    n = _check_int(gpus, "gpus")
    if usd_per_gpu_hour is None:
        usd_per_gpu_hour = cloud_offer("p4d.24xlarge").usd_per_gpu_hour
    price = _check_float(usd_per_gpu_hour, "usd_per_gpu_hour")
    lost = n * HOURS_PER_WEEK * g
    return GapCost(gap=g, gpus=n, usd_per_gpu_hour=price, lost_gpu_hours_per_week=lost,
                   lost_cluster_hours_per_week=HOURS_PER_WEEK * g, extra_time_fraction=g / (1 - g),
                   usd_per_week=lost * price, usd_per_year=lost * price * HOURS_PER_YEAR / HOURS_PER_WEEK)

"""The GA100 die and the products cut from it: which TPCs are enabled, the L2 the die would have, and
why a 128-SM die is sold with 108 SMs (harvesting yield).

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "From a die to a product", "The 40 MiB L2,
and why it matters" and "Why sell a 128-SM die as a 108-SM part?". Pure Python: no torch, no matplotlib
(the die is drawn by :mod:`ampere.architecture.figures`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import check, specs

#: Bounds of a die layout: no NVIDIA die so far has more than 8 GPCs of 9 TPCs (GH100: 8 x 9); the limits
#: leave room and keep a layout small.
_MAX_GPCS, _MAX_TPCS_PER_GPC = 16, 16
#: Units a harvesting yield sums over (the binomial sum loops over every unit): far above any die's SM count.
_MAX_UNITS = 10_000

@dataclass(frozen=True)
class DieLayout:
    """Which TPCs of a die are enabled on a product. ``tpcs[g][t]`` is True when TPC ``t`` of GPC ``g`` works.

    NVIDIA does not publish which units are fused off, and it differs from die to die (that is the point
    of harvesting): the pattern is illustrative, the counts are exact.

    Chapter: *Architecture of the GA100*, "From a die to a product".
    """

    spec_name: str
    tpcs: tuple[tuple[bool, ...], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec_name", check.gpu("DieLayout.spec_name", self.spec_name))
        gpcs = check.sequence("DieLayout.tpcs", self.tpcs, lambda name, row: tuple(
            check.sequence(name, row, check.boolean, max_len=_MAX_TPCS_PER_GPC)), max_len=_MAX_GPCS)
        object.__setattr__(self, "tpcs", tuple(gpcs))

    @property
    def gpcs(self) -> int:
        return len(self.tpcs)

    @property
    def enabled_tpcs(self) -> int:
        return sum(sum(g) for g in self.tpcs)

    @property
    def enabled_sms(self) -> int:
        return 2 * self.enabled_tpcs

    @property
    def enabled_gpcs(self) -> int:
        return sum(1 for g in self.tpcs if any(g))


def die_layout(gpu: str | specs.GPUSpec) -> DieLayout:
    """An enabled/disabled map of the TPCs of ``gpu``'s die with exactly ``sm_count`` SMs enabled.

    For the GA100 the whitepaper's product configuration is used: 7 of 8 GPCs, each with 7 or 8 of its
    8 TPCs (7 x 8 x 2 - 4 = 108 SMs). Other dies lose whole TPCs spread over the GPCs from the last one.

    Chapter: *Architecture of the GA100*, "From a die to a product".
    """
    spec = specs.get(gpu)
    g, t = spec.die_gpcs, spec.die_tpcs_per_gpc
    missing_tpcs = spec.die_sms // 2 - spec.sm_count // 2
    if spec.sm_count % 2 or missing_tpcs < 0:
        raise ValueError(f"gpu={spec.name!r}: {spec.sm_count} SMs cannot be laid out on {g}x{t} TPC pairs")
    enabled = [[True] * t for _ in range(g)]
    order: list[tuple[int, int]] = []
    if spec.chip == "GA100":
        order += [(g - 1, j) for j in range(t)]  # one whole GPC fused off
        order += [(g - 1 - k, t - 1) for k in range(1, g)]  # then one TPC per remaining GPC, from the end
    else:
        order += [(g - 1 - (k % g), t - 1 - (k // g)) for k in range(g * t)]
    for gi, ti in order[:missing_tpcs]:
        enabled[gi][ti] = False
    return DieLayout(spec.name, tuple(tuple(row) for row in enabled))


def full_die_l2_bytes(gpu: str | specs.GPUSpec = "A100-SXM4-80GB", slices_per_controller: int = 8,
                      slice_bytes: int = 512 * 1024) -> tuple[int, int]:
    """(L2 bytes of the product, L2 bytes of the full die) counted from the whitepaper's slice rule: eight
    512 KB L2 slices per memory controller. The A100 has 10 controllers (5 HBM2 stacks x 2) for 40 MiB;
    the full GA100 has 12 (6 stacks) [nvidia2020ampere], so by the same rule 48 MiB. The whitepaper prints
    the 40 MB of the product, not an L2 size of the full die: the second number is this derivation.

    Chapter: *Architecture of the GA100*, "The 40 MiB L2, and why it matters".
    """
    spec = specs.get(gpu)
    per = (check.bounded_int("slices_per_controller", slices_per_controller, 1, 64, why="the GA100 has 8")
           * check.bounded_int("slice_bytes", slice_bytes, 1, 2**30, why="the GA100's slices are 512 KB"))
    stacks = spec.memory_stacks or 0
    if not stacks or spec.chip != "GA100":
        raise ValueError(f"gpu={spec.name!r}: the slice rule is the GA100 whitepaper's; give a GA100 product")
    controllers_per_stack = 2  # 512-bit controllers, two per 1024-bit HBM2 stack (10 for 5 stacks)
    product = stacks * controllers_per_stack * per
    die_sites = stacks + 1  # the GA100 has six HBM sites, the A100 uses five (see draw_die)
    return product, die_sites * controllers_per_stack * per


# ---------------------------------------------------------------------------------------------------
# Why 108 of 128: harvesting
# ---------------------------------------------------------------------------------------------------


def harvest_yield(units: int, needed: int, unit_defect_probability: float) -> float:
    """Probability that at least ``needed`` of ``units`` independent units work (binomial tail).

    With ``units=128, needed=108`` this is the fraction of dies sellable as an A100 if each SM (with its
    share of the die) fails independently with ``unit_defect_probability``; ``needed=units`` is a die
    with no spare. Chapter: *Architecture of the GA100*, "Why 108 of 128".
    """
    units, needed, q = _harvest_args(units, needed, unit_defect_probability)
    return min(1.0, float(sum(_binomial(units, k, q) for k in range(needed, units + 1))))


def _harvest_args(units: int, needed: int, unit_defect_probability: float) -> tuple[int, int, float]:
    units = check.bounded_int("units", units, 0, _MAX_UNITS, why="the binomial sum loops over every unit")
    needed = check.nonneg_int("needed", needed)
    if needed > units:
        raise ValueError(f"needed={needed} must be at most units={units} (no die has more working units than units)")
    return units, needed, check.fraction("unit_defect_probability", unit_defect_probability)


def _binomial(n: int, k: int, q: float) -> float:
    """P(exactly k of n units work) when each fails with probability q; 0.0 where the float underflows."""
    if q == 0.0 or q == 1.0:
        return float(k == (n if q == 0.0 else 0))
    log_p = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log1p(-q) + (n - k) * math.log(q)
    return math.exp(log_p) if log_p > -745 else 0.0


def harvest_shortfall(units: int, needed: int, unit_defect_probability: float) -> float:
    """Probability that fewer than ``needed`` of ``units`` work: ``1 - harvest_yield``, summed directly.

    Summing the small tail avoids the cancellation of ``1 - 0.9999...`` in floating point.

    Chapter: *Architecture of the GA100*, "Why sell a 128-SM die as a 108-SM part?".
    """
    units, needed, q = _harvest_args(units, needed, unit_defect_probability)
    return min(1.0, float(sum(_binomial(units, k, q) for k in range(0, needed))))

"""Prices: the quotes of ``ampere.pricing`` as low-high ranges per GPU-hour (seed 003's 2026 rentals, seed
000's 2023 hyperscaler instances), the reader's own prices, and the hours a budget buys.

Chapter: *The A100 today* (book/a100-today.ipynb), "What it costs". Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from .. import check, specs


#: Highest price the calculator accepts, in $/GPU-hour (a bound on user input, far above any rental).
MAX_PRICE = 1e5


@dataclass(frozen=True)
class PriceRange:
    """A rental price range in US dollars per GPU-hour, with where and when it comes from.

    Built from the quotes of ``ampere.pricing`` (:func:`seed_prices`) or from the reader's own numbers
    (``source="user input"``). Chapter: *The A100 today*, "What it costs".
    """

    low: float  # $/GPU-hour, cheapest offer in the range
    high: float  # $/GPU-hour, most expensive offer in the range
    source: str  # bib key of book/references.bib, or "user input"
    as_of: str  # the date the prices refer to, as the source gives it
    note: str = ""

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            object.__setattr__(self, name, check.positive(f"price {name}", getattr(self, name),
                                                          maximum=MAX_PRICE))
        if self.low > self.high:
            raise ValueError(f"price low={self.low!r} is above high={self.high!r}")
        for name in ("source", "as_of"):
            object.__setattr__(self, name, check.string(f"price {name}", getattr(self, name), max_len=400))
        object.__setattr__(self, "note", check.string("price note", self.note, allow_empty=True, max_len=400))

    @property
    def mid(self) -> float:
        """The middle of the range, $/GPU-hour."""
        return (self.low + self.high) / 2

    def at(self, where: str) -> float:
        """The ``"low"``, ``"mid"`` or ``"high"`` end of the range."""
        return getattr(self, check.one_of("where", where, ("low", "mid", "high")))

    def label(self) -> str:
        """"0.96-2.29 $/h (2026)" for a table cell."""
        return f"{self.low:.2f}-{self.high:.2f} $/h ({self.as_of})"


def _range(quotes: Sequence[Any], note: str) -> PriceRange:
    """The per-GPU range spanned by ``ampere.pricing`` quotes (cheapest low end to dearest high end)."""
    if not quotes:
        raise ValueError("no price quotes to build a range from")
    dates = sorted({q.date for q in quotes})
    sources = sorted({q.source for q in quotes})
    return PriceRange(min(q.low for q in quotes), max(q.high for q in quotes), ", ".join(sources),
                      "-".join(dict.fromkeys((dates[0], dates[-1]))), note)


@functools.lru_cache(maxsize=None)
def _seed_prices() -> Mapping[str, PriceRange]:
    from .. import pricing

    return MappingProxyType({q.gpu: _range([q], q.kind) for q in pricing.quotes(source="seed003")})


def seed_prices() -> dict[str, PriceRange]:
    """The 2026 cloud rental ranges of the comparison article (seed 003), per GPU-hour, from ``ampere.pricing``.

    The article prices the A100 80GB, RTX A6000 and RTX A2000 12GB; no source of the book prices the
    H100 or H200 (pass them with :func:`price_table`). Chapter: *The A100 today*, "What it costs".
    """
    return dict(_seed_prices())


def hyperscaler_prices_2023() -> dict[str, PriceRange]:
    """The 2023 on-demand prices of 8 x A100 80GB hyperscaler instances (seed 000), divided by 8.

    The instance price includes CPUs, RAM and networking, so this is not the price of the GPU alone.
    Chapter: *The A100 today*, "What it costs".
    """
    from .. import pricing

    qs = pricing.quotes(gpu="A100-SXM4-80GB", source="seed000", date="2023", gpus=8)
    return {"A100-SXM4-80GB": _range(qs, "8-GPU on-demand instances (US) divided by 8, CPU/RAM/network included")}


def hours_for_budget(budget_dollars: float, gpu: str, prices: Mapping[str, PriceRange] | None = None
                     ) -> tuple[float, float]:
    """GPU-hours a budget buys on ``gpu``: (at the high price, at the low price), by ``ampere.pricing``'s
    one budget arithmetic. ``prices`` defaults to :func:`seed_prices`. Seed 003's "hours for $100" column.
    """
    from .. import pricing

    budget = check.positive("budget_dollars", budget_dollars, maximum=1e10)
    table = seed_prices() if prices is None else _prices_arg("prices", prices)
    p = _price(table, specs.get(check.gpu("gpu", gpu)).name)
    if p is None:
        raise ValueError(f"gpu={gpu!r} has no price in the table; priced: {', '.join(table)}")
    return pricing.hours_for_budget(budget, p.low, p.high)


def price_table(overrides: Mapping[str, Any] | None = None,
                base: Mapping[str, PriceRange] | None = None) -> dict[str, PriceRange]:
    """``base`` prices (default: :func:`seed_prices`) updated with ``overrides``.

    ``overrides`` maps a catalogue GPU name to a :class:`PriceRange` or a (low, high) pair in $/GPU-hour
    (user input). Unknown GPU names raise ``ValueError``. Chapter: *The A100 today*, "What it costs".
    """
    out = dict(seed_prices() if base is None else _prices_arg("base", base))
    if overrides is not None and not isinstance(overrides, Mapping):
        raise TypeError(f"overrides must be a mapping of GPU name to price, got {overrides!r}")
    for gpu, value in (overrides or {}).items():
        name = specs.get(check.gpu("overrides", gpu)).name
        if isinstance(value, PriceRange):
            out[name] = value
        elif isinstance(value, (tuple, list)):
            out[name] = _user_price(value, f"price for {name!r}")
        else:
            raise ValueError(f"price for {name!r} is {value!r}; give a PriceRange or (low, high) in $/GPU-hour")
    return out


def _user_price(value: Sequence[Any], what: str) -> PriceRange:
    """A (low, high) pair given by the user, as a PriceRange; anything else raises ValueError naming ``what``."""
    if len(value) != 2 or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value):
        raise ValueError(f"{what} is {tuple(value)!r}; give (low, high) in $/GPU-hour as two numbers")
    try:
        return PriceRange(float(value[0]), float(value[1]), "user input", "as given")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} is {tuple(value)!r}: {exc}") from None


def _prices_arg(name: str, prices: Any) -> dict[str, PriceRange]:
    """A table of prices given by the caller: a mapping of catalogue GPU names to :class:`PriceRange`."""
    table = check.mapping(name, prices)
    out = {}
    for gpu, value in table.items():
        if not isinstance(value, PriceRange):
            raise TypeError(f"{name}[{gpu!r}] must be a PriceRange, got {value!r}")
        out[specs.get(check.gpu(name, gpu)).name] = value
    return out


def _price(prices: Mapping[str, PriceRange] | None, name: str) -> PriceRange | None:
    return None if prices is None else prices.get(name)


def price_rows() -> list[dict[str, str]]:
    """The price ranges the chapter uses, one row per GPU and source, with where they come from.

    Chapter: *The A100 today*, "What it costs".
    """
    from .. import views

    rows = []
    for label, table in (("2026 cloud rental, single GPU", seed_prices()),
                         ("2023 hyperscaler on-demand, 8-GPU instance / 8", hyperscaler_prices_2023())):
        for gpu, p in table.items():
            rows.append({"GPU": gpu, "$/GPU-hour": f"{p.low:.2f}-{p.high:.2f}", "what": label,
                         "note": p.note, "source": views.cite_label(p.source)})
    return rows

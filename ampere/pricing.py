"""Cloud price quotes as data, and the one budget arithmetic of the book.

Chapters: *DGX A100 and the SuperPOD* ("Renting"), *Multi-Instance GPU* ("What it costs") and *The A100
today* ("What it costs"). The quotes live in ``ampere/data/tables/cloud-prices.json``, each with the seed
article that prints it (bib key), where in it, and its date; this module turns the rows into
:class:`PriceQuote` dataclasses. Prices move: every function that uses one takes it as an argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import check, results, specs

__all__ = ["PriceQuote", "quotes", "quote", "hours_for_budget"]

TABLE = "cloud-prices"
#: The most GPUs in one priced unit (an instance or a node): a bound against typing mistakes.
MAX_GPUS_PER_UNIT = 1024


@dataclass(frozen=True)
class PriceQuote:
    """A rental price as a source prints it: a low-high range (equal ends for one instance), in US dollars
    per hour of the priced unit (``gpus`` GPUs), dated. Chapter: *DGX A100 and the SuperPOD*, "Renting"."""

    id: str
    label: str  # what is rented, for a table cell
    provider: str
    instance: str  # instance type ("" for a per-GPU range over several providers)
    gpu: str  # catalogue name of the GPU (ampere.specs)
    gpus: int  # GPUs in the priced unit (8 for an 8-GPU instance)
    low_usd_per_h: float
    high_usd_per_h: float
    date: str  # when the source quotes the price (ISO prefix: "2023")
    kind: str  # "on demand, US", "cloud range", ...
    source: str  # bib key
    where: str = ""  # where in the source
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpu", specs.get(self.gpu).name)
        object.__setattr__(self, "gpus", check.positive_int("gpus", self.gpus, maximum=MAX_GPUS_PER_UNIT))
        low = check.positive("low_usd_per_h", self.low_usd_per_h)
        high = check.positive("high_usd_per_h", self.high_usd_per_h)
        if high < low:
            raise ValueError(f"high_usd_per_h={high:g} is below low_usd_per_h={low:g} for {self.id!r}")
        object.__setattr__(self, "low_usd_per_h", low)
        object.__setattr__(self, "high_usd_per_h", high)
        for name in ("id", "label", "provider", "instance", "date", "kind", "source", "where", "note"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a string, got {getattr(self, name)!r}")

    @property
    def as_of(self) -> str:
        """The date of the quote (alias of ``date`` for tables)."""
        return self.date

    @property
    def per_gpu(self) -> tuple[float, float]:
        """``(low, high)`` in $ per GPU-hour."""
        return (self.low_usd_per_h / self.gpus, self.high_usd_per_h / self.gpus)

    @property
    def low(self) -> float:
        """Cheapest end, $ per GPU-hour."""
        return self.per_gpu[0]

    @property
    def high(self) -> float:
        """Dearest end, $ per GPU-hour."""
        return self.per_gpu[1]

    @property
    def usd_per_gpu_hour(self) -> float:
        """Middle of the range, $ per GPU-hour (the price itself for a single instance)."""
        return (self.low + self.high) / 2

    def hours_for_budget(self, budget_usd: float) -> tuple[float, float]:
        """GPU-hours ``budget_usd`` buys at this quote: ``(at the high price, at the low price)``."""
        return hours_for_budget(budget_usd, self.low, self.high)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "PriceQuote":
        """A row of ``cloud-prices.json`` (the JSON boundary)."""
        return cls(id=row["id"], label=row["label"], provider=row["provider"], instance=row.get("instance", ""),
                   gpu=row["gpu"], gpus=row["gpus"], low_usd_per_h=row["low_usd_per_hour"],
                   high_usd_per_h=row["high_usd_per_hour"], date=str(row["date"]), kind=row["kind"],
                   source=row["source"], where=row.get("where", ""), note=row.get("note", ""))


_CACHE: list[tuple[PriceQuote, ...]] = []


def _all() -> tuple[PriceQuote, ...]:
    if not _CACHE:
        _CACHE.append(tuple(PriceQuote.from_dict(r) for r in results.table(TABLE)["rows"]))
    return _CACHE[0]


def quotes(gpu: str | None = None, provider: str | None = None, source: str | None = None,
           date: str | None = None, gpus: int | None = None) -> tuple[PriceQuote, ...]:
    """The price quotes of ``cloud-prices.json``, filtered: ``gpu`` (catalogue name), ``provider``,
    ``source`` (bib key), ``date`` (prefix: "2023"), ``gpus`` (GPUs per priced unit).

    Chapters: *DGX A100 and the SuperPOD*, *Multi-Instance GPU*, *The A100 today*.
    """
    out = _all()
    if gpu is not None:
        name = specs.get(gpu).name
        out = tuple(q for q in out if q.gpu == name)
    if provider is not None:
        out = tuple(q for q in out if q.provider == check.one_of("provider", provider,
                                                                   sorted({q.provider for q in _all()})))
    if source is not None:
        out = tuple(q for q in out if q.source == check.one_of("source", source, sorted({q.source for q in _all()})))
    if date is not None:
        if not isinstance(date, str):
            raise TypeError(f"date must be a string such as '2023', got {date!r}")
        if not date:
            raise ValueError("date must be a non-empty prefix such as '2023', got ''")
        out = tuple(q for q in out if q.date.startswith(date))
    if gpus is not None:
        n = check.positive_int("gpus", gpus, maximum=MAX_GPUS_PER_UNIT)
        out = tuple(q for q in out if q.gpus == n)
    return out


def quote(quote_id: str) -> PriceQuote:
    """The quote with this id (e.g. ``"seed000-aws-p4d"``)."""
    ids = [q.id for q in _all()]
    check.one_of("quote_id", quote_id, ids)
    return next(q for q in _all() if q.id == quote_id)


def hours_for_budget(budget_usd: float, low_usd_per_h: float, high_usd_per_h: float | None = None
                     ) -> tuple[float, float]:
    """Hours a budget buys at the high and at the low price: ``(budget / high, budget / low)``.

    Chapters: *Multi-Instance GPU*, *The A100 today* (seed 003's "hours for $100" column). Give one price
    (``high_usd_per_h=None``) for a single figure; both results are then equal.
    """
    b = check.positive("budget_usd", budget_usd)
    low = check.positive("low_usd_per_h", low_usd_per_h)
    high = low if high_usd_per_h is None else check.positive("high_usd_per_h", high_usd_per_h)
    if high < low:
        raise ValueError(f"high_usd_per_h={high:g} is below low_usd_per_h={low:g}; give the cheaper price first")
    return b / high, b / low

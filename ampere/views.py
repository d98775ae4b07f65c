"""Model beside real numbers: the one way every measuring section of the book shows its evidence.

Chapter: every measuring chapter ("Measure, model, record" in CONTRIBUTING.md). A chapter's view function
(``architecture.show_matmul(INFO)``, ``hbm.show_bandwidth(INFO)``, ...) measures when the GPU in front of
the reader can, and otherwise gathers the best real numbers there are — results recorded by contributors
on real GPUs, then published measurements — and hands them to :func:`show` as :class:`Point` rows:

    points = [views.Point("bf16 matmul, best shape", "A100-SXM4-80GB", model=312.0, real=250.0,
                          unit="TFLOP/s", kind="published", source=views.source_text(rec))]
    views.show(points, title="Achievable matmul vs the dense peak", model_label="dense peak")

Every real number carries its provenance — ``measured here`` (this machine, now), ``recorded`` (a result
in ``ampere/data``, with GPU, date and torch) or ``published`` (a source of ``book/references.bib``,
shown by its author-year label and the table or figure it comes from, never by its bibliography key) —
and its ratio to the model. The figure and the Markdown table say the same thing twice: one for the eye,
one for the record. Nothing here imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from . import check
from .results import Record

__all__ = ["Point", "KINDS", "source_text", "cite_label", "point", "best", "table", "plot", "show",
           "ratio_text"]

#: Provenance of a real number, best first (what a reader can trust most about *their* machine).
KINDS = ("measured", "recorded", "published")

_MARKERS = {"model": ("D", "none"), "measured": ("o", None), "recorded": ("s", None), "published": ("^", None)}


@dataclass(frozen=True)
class Point:
    """One comparison: a model's prediction and a real number for the same quantity on the same GPU."""

    what: str                 # the quantity and configuration: "bf16 matmul 8192^3", "copy, 4 GiB"
    gpu: str                  # catalogue name (or device / system name)
    model: float | None       # the model's prediction, in ``unit`` (None: no model for this row)
    real: float | None        # the real number, in ``unit`` (None: a model-only row)
    unit: str                 # "TFLOP/s", "GB/s", "ms"
    kind: str = "published"   # "measured" (here, now), "recorded" (ampere/data) or "published"
    source: str = ""          # provenance text: "measured here", "recorded on ..., date, torch", "Bekman 2024, ..."

    def __post_init__(self) -> None:
        check.string("Point.what", self.what, allow_empty=True)
        check.string("Point.gpu", self.gpu)
        check.string("Point.unit", self.unit, allow_empty=True)
        check.string("Point.source", self.source, allow_empty=True)
        check.one_of("Point.kind", self.kind, KINDS)
        for name in ("model", "real"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, check.real(f"Point.{name}", v))
        if self.model is None and self.real is None:
            raise ValueError(f"Point {self.what!r}: needs a model value, a real value, or both")
        if self.real is not None and not self.source:
            raise ValueError(f"Point {self.what!r}: a real number needs its source")

    @property
    def ratio(self) -> float | None:
        """real / model (None when either is missing or the model is zero)."""
        if self.model is None or self.real is None or self.model == 0:
            return None
        return self.real / self.model


def _record(name: str, value: Any) -> Record:
    if not isinstance(value, Record):
        raise TypeError(f"{name} must be a results.Record, got {value!r} ({type(value).__name__})")
    return value


def _point(name: str, value: Any) -> Point:
    if not isinstance(value, Point):
        raise TypeError(f"{name} must be a views.Point, got {value!r} ({type(value).__name__})")
    return value


#: the most rows a comparison shows: in a table, and in a figure (one row of dots each)
MAX_TABLE_ROWS = 10_000
MAX_PLOT_ROWS = 200


def _points(points: Any, limit: int = MAX_TABLE_ROWS) -> list[Point]:
    """A non-empty list of :class:`Point` (never a bare string, a Point alone or an empty list), at most
    ``limit`` of them."""
    return check.sequence("points", points, _point, max_len=limit)


def _sources() -> dict[str, dict[str, str]]:
    from . import results

    try:
        return {row["key"]: row for row in results.table("sources")["rows"]}
    except ValueError:
        return {}


_SOURCES: dict[str, dict[str, str]] | None = None


def cite_label(key: str) -> str:
    """The author-year label of a bibliography key as the site shows it ("Bekman 2024"), from
    ``ampere/data/tables/sources.json`` (generated from ``book/references.bib``)."""
    global _SOURCES
    key = check.string("key", key)
    if _SOURCES is None:
        _SOURCES = _sources()
    row = _SOURCES.get(key)
    return row["label"] if row else key


def source_text(rec: Record) -> str:
    """Provenance of a record for a table cell or a legend, without bibliography keys."""
    rec = _record("rec", rec)
    if rec.kind == "measured":
        return rec.label()
    return cite_label(rec.source) + (f", {rec.where}" if rec.where else "")


def point(rec: Record, figure: str, what: str, model: float | None, unit: str, *, scale: float = 1.0,
          gpu: str | None = None) -> Point:
    """A :class:`Point` from one figure of a record (multiplied by ``scale`` into ``unit``)."""
    rec = _record("rec", rec)
    figure = check.string("figure", figure)
    model = check.optional(check.finite, "model", model)
    scale = check.positive("scale", scale)
    gpu = check.optional(check.string, "gpu", gpu)
    check.string("what", what, allow_empty=True)
    check.string("unit", unit, allow_empty=True)
    value = rec.figure(figure)
    if isinstance(value, (list, tuple)):
        raise ValueError(f"figure {figure!r} of {rec.id!r} is a list; pick one value")
    return Point(what=what, gpu=gpu or rec.gpu, model=model, real=float(value) * scale, unit=unit,
                 kind="recorded" if rec.kind == "measured" else "published", source=source_text(rec))


def best(records: Iterable[Record]) -> list[Record]:
    """Records ordered as the book prefers them: recorded on a real GPU first, then published."""
    records = check.sequence("records", records, _record, min_len=0)
    return sorted(records, key=lambda r: (r.kind != "measured", r.gpu, r.date))


def _fmt(v: float | None, digits: int | None) -> str:
    """``digits`` decimals, or (None) four significant digits: 123.4, 1,234, 12.3, 0.87."""
    if v is None:
        return ""
    if v != 0 and (abs(v) >= 10 ** 6 or abs(v) < 10 ** -3):
        return f"{v:.{max(digits or 3, 1)}e}"
    return f"{v:,.4g}" if digits is None else f"{v:,.{digits}f}"


def ratio_text(r: float | None) -> str:
    """"0.87×" (or an empty cell)."""
    r = check.optional(check.finite, "r", r)
    return "" if r is None else f"{r:.2f}×"


def table(points: Sequence[Point], *, model_label: str = "model", real_label: str = "real",
          digits: int | None = None) -> str:
    """The Markdown table of ``points``: GPU, quantity, model, real, real/model, source. Numbers get
    ``digits`` decimals, or four significant digits by default."""
    from .tables import markdown_table

    points = _points(points)
    model_label = check.string("model_label", model_label)
    real_label = check.string("real_label", real_label)
    digits = check.optional(check.bounded_int, "digits", digits, 0, 12, why="decimals shown")
    unit = {p.unit for p in points}
    u = f" ({unit.pop()})" if len(unit) == 1 else ""
    rows = [{"GPU": p.gpu, "quantity": p.what + ("" if u else f" ({p.unit})"),
             f"{model_label}{u}": _fmt(p.model, digits), f"{real_label}{u}": _fmt(p.real, digits),
             f"{real_label} / {model_label}": ratio_text(p.ratio), "source": p.source if p.real is not None else ""}
            for p in points]
    return markdown_table(rows)


def _auto_log(points: Sequence[Point]) -> bool:
    """A log axis when the values span more than a decade."""
    values = [v for p in points for v in (p.model, p.real) if v is not None and v > 0]
    return bool(values) and max(values) / min(values) > 10


def plot(ax: Any, points: Sequence[Point], *, model_label: str = "model", log: bool | None = None) -> None:
    """A dot plot: one row per point, the model as an open diamond, the real number filled, coloured by GPU,
    shaped by provenance; a line joins them so the gap reads at a glance. ``log=None``: logarithmic when the
    values span more than a decade."""
    from . import plots

    ax = plots.axes("ax", ax, "plot")
    points = _points(points, MAX_PLOT_ROWS)
    model_label = check.string("model_label", model_label)
    log = check.optional(check.boolean, "log", log)
    ys = list(range(len(points)))[::-1]
    seen: set[str] = set()
    for y, p in zip(ys, points):
        colour = plots.gpu_color(p.gpu)
        if p.model is not None and p.real is not None:
            ax.plot([p.model, p.real], [y, y], color=colour, lw=1.2, alpha=0.5)
        if p.model is not None:
            lab = model_label if "model" not in seen else None
            seen.add("model")
            ax.plot([p.model], [y], marker="D", mfc="white", mec=colour, ms=7, ls="none", label=lab)
        if p.real is not None:
            marker = _MARKERS[p.kind][0]
            lab = {"measured": "measured here", "recorded": "recorded on a real GPU",
                   "published": "published"}[p.kind] if p.kind not in seen else None
            seen.add(p.kind)
            ax.plot([p.real], [y], marker=marker, color=colour, ms=7, ls="none", label=lab)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{p.gpu}\n{p.what}" if len(p.gpu) + len(p.what) > 34 else f"{p.gpu}: {p.what}"
                        for p in points], fontsize=8)
    units = {p.unit for p in points}
    ax.set_xlabel(units.pop() if len(units) == 1 else "value")
    if _auto_log(points) if log is None else log:
        ax.set_xscale("log")
    ax.set_ylim(-0.7, len(points) - 0.3)
    ax.legend(loc="best", fontsize=8)


def show(points: Sequence[Point], *, title: str, model_label: str = "model", real_label: str = "real",
         digits: int | None = None, log: bool | None = None, size: str = "full") -> None:
    """Display the figure and the Markdown table of ``points`` (in a notebook; prints the table elsewhere).

    ``log=None`` chooses a logarithmic axis when the values span more than a decade."""
    from . import plots
    from .tables import show_md

    points = _points(points, MAX_PLOT_ROWS)
    check.string("title", title, allow_empty=True)
    check.string("model_label", model_label)
    check.string("real_label", real_label)
    check.optional(check.bounded_int, "digits", digits, 0, 12, why="decimals shown")
    check.optional(check.boolean, "log", log)
    check.one_of("size", size, plots.SIZES)
    import matplotlib.pyplot as plt

    fig, ax = plots.figure(size)
    fig.set_size_inches(fig.get_size_inches()[0], min(max(2.4, 0.42 * len(points) + 1.2), 7.5))
    plot(ax, points, model_label=model_label, log=log)
    ax.set_title(title)
    fig.tight_layout()
    plt.show()
    show_md(table(points, model_label=model_label, real_label=real_label, digits=digits))

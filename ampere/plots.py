"""The house style of every figure in the book: sizes, one colour per GPU, one marker per provenance.

Chapter: every chapter. A figure always says where its numbers come from: ``model`` (computed by the
package), ``measured`` (on this machine, now), ``recorded`` (measured on a real GPU earlier and shipped
in ampere/data/) or ``published`` (a number from a paper or vendor, with its citation key).

Figure sizes are fixed so that nbval's comparison of ``<Figure size 700x380 with 1 Axes>`` is stable.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator

from . import check

__all__ = ["STYLE", "SIZES", "PROVENANCE", "gpu_color", "figure", "style", "provenance_note", "save",
           "legend_outside", "axes"]

#: the most rows or columns of panels :func:`figure` makes
MAX_PANELS = 12

#: rcParams applied by :func:`style` and :func:`figure`.
STYLE: dict[str, Any] = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "figure.autolayout": False,
}

#: Named figure sizes in inches (width, height) at 100 dpi.
SIZES: dict[str, tuple[float, float]] = {
    "full": (7.0, 3.8),
    "wide": (9.0, 3.8),
    "tall": (7.0, 5.6),
    "half": (4.5, 3.2),
    "square": (5.0, 5.0),
}

# One colour per product family; variants share a hue. NVIDIA green for the A100 family.
_GPU_COLORS: dict[str, str] = {
    "A100": "#5a8f00",
    "A100-SXM4-80GB": "#76b900",
    "A100-SXM4-40GB": "#4f7c00",
    "A100-PCIE-80GB": "#9ccc3d",
    "A100-PCIE-40GB": "#b8d97a",
    "V100": "#7f7f7f",
    "H100": "#6a3d9a",
    "H200": "#a26bd1",
    "RTX-A6000": "#ff7f0e",
    "RTX-A2000": "#e6b800",
    "T4": "#1f77b4",
    "L4": "#17becf",
    "CPU": "#222222",
}

#: Marker and line style per provenance.
PROVENANCE: dict[str, dict[str, Any]] = {
    "model": {"linestyle": "-", "marker": None},
    "measured": {"linestyle": "none", "marker": "o", "markersize": 6},
    "recorded": {"linestyle": "none", "marker": "s", "markersize": 6, "markerfacecolor": "none"},
    "published": {"linestyle": "none", "marker": "^", "markersize": 7},
}


def gpu_color(name: str | None) -> str:
    """Colour for a catalogue name ("A100-SXM4-80GB"), a family ("H100") or a device name, in any case
    (the rule of :func:`ampere.specs.get`); None, "" or a name of no known family get the neutral grey."""
    name = check.optional(check.string, "name", name, allow_empty=True)
    if not name:
        return _GPU_COLORS["CPU"]
    folded = {k.casefold(): v for k, v in _GPU_COLORS.items()}
    if name.casefold() in folded:
        return folded[name.casefold()]
    key = name.upper().replace(" ", "-")
    for family in ("A100", "V100", "H200", "H100", "RTX-A6000", "RTX-A2000", "L4", "T4"):
        if family in key:
            return folded.get(name.split()[0].casefold(), _GPU_COLORS[family])
    return _GPU_COLORS["CPU"]


def axes(name: str, value: Any, method: str = "plot") -> Any:
    """``value`` if it is a matplotlib ``Axes`` (anything with the ``method`` a function calls), else
    ``TypeError`` naming the argument."""
    if not callable(getattr(value, method, None)):
        raise TypeError(f"{name} must be a matplotlib Axes, got {value!r} ({type(value).__name__})")
    return value


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Apply the house rcParams inside a ``with`` block."""
    import matplotlib as mpl

    with mpl.rc_context(STYLE):
        yield


def figure(size: str = "full", nrows: int = 1, ncols: int = 1, **kwargs: Any):
    """``plt.subplots`` with the house style and a named size; returns (fig, ax or axes array)."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    size = check.one_of("size", size, SIZES)
    nrows = check.bounded_int("nrows", nrows, 1, MAX_PANELS, why="panels in one figure")
    ncols = check.bounded_int("ncols", ncols, 1, MAX_PANELS, why="panels in one figure")
    mpl.rcParams.update(STYLE)
    fig, axes = plt.subplots(nrows, ncols, figsize=SIZES[size], **kwargs)
    return fig, axes


def provenance_note(ax: Any, text: str) -> None:
    """Small grey provenance line under the axes ("model of A100-SXM4-80GB; recorded on ...")."""
    axes("ax", ax, "annotate")
    text = check.string("text", text)
    ax.annotate(text, xy=(1.0, -0.16), xycoords="axes fraction", ha="right", va="top", fontsize=8,
                color="#666666", annotation_clip=False)


def legend_outside(ax: Any, **kwargs: Any) -> None:
    """The legend to the right of the axes, outside them."""
    axes("ax", ax, "legend")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, **kwargs)


def save(fig: Any, path: str | Path) -> Path:
    """Save a figure as PNG with fixed metadata so regenerated files are byte-stable."""
    if not callable(getattr(fig, "savefig", None)):
        raise TypeError(f"fig must be a matplotlib Figure, got {fig!r} ({type(fig).__name__})")
    if not isinstance(path, (str, Path)) or not str(path) or Path(path).is_dir():
        raise (TypeError if not isinstance(path, (str, Path)) else ValueError)(
            f"path must be a file path such as 'figures/x.png', got {path!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, bbox_inches="tight", metadata={"Software": None})
    return path

"""The number formats of the chapter, derived from their bits: FP64, FP32, TF32, BF16, FP16, FP8 (E4M3,
E5M2) and INT8 as :class:`NumberFormat` records (largest normal, epsilon, unit roundoff, ... are computed
from the sign/exponent/mantissa widths, never typed in), their table (:func:`format_table`,
:func:`render_table`) and bit layouts (:func:`bit_fields`).

Pure Python/NumPy. Chapter: *TF32 and the precision formats* (book/tf32.ipynb), section "Formats, derived
from their bits".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .. import check


@dataclass(frozen=True)
class NumberFormat:
    """A number format described by its bit fields; every range and precision figure is derived.

    Floating point values are (-1)^s x 2^(e - bias) x 1.f for normal numbers and
    (-1)^s x 2^(1 - bias) x 0.f for subnormals (chapter *TF32 and the precision formats*, section
    "Formats, derived from their bits").
    """

    name: str  # key, e.g. "tf32"
    label: str  # how the book prints it, e.g. "TF32"
    kind: str  # "float" or "int"
    exponent_bits: int  # 0 for integers
    mantissa_bits: int  # explicitly stored fraction bits (value bits for integers, sign excluded)
    storage_bits: int  # bits one value occupies in memory (TF32 lives in 32-bit FP32 words)
    inf_nan_code: bool = True  # IEEE style: the all-ones exponent is reserved for inf and NaN
    source: str = "ieee754"  # bib key of the definition
    note: str = ""

    def __post_init__(self) -> None:
        for field_name in ("name", "label", "source"):
            check.string(f"NumberFormat.{field_name}", getattr(self, field_name), max_len=64)
        check.string("NumberFormat.note", self.note, allow_empty=True, max_len=1000)
        check.one_of("NumberFormat.kind", self.kind, ("float", "int"))
        if self.kind == "float":  # a float needs an exponent; 15 bits is IEEE quadruple's, the widest there is
            check.bounded_int("NumberFormat.exponent_bits", self.exponent_bits, 2, 15, why="2 (FP8 E5M2 has 5) to 15")
            check.bounded_int("NumberFormat.mantissa_bits", self.mantissa_bits, 1, 112, why="1 to IEEE quadruple's 112")
        else:
            check.bounded_int("NumberFormat.exponent_bits", self.exponent_bits, 0, 0, why="an integer has none")
            check.bounded_int("NumberFormat.mantissa_bits", self.mantissa_bits, 1, 63, why="value bits of an integer")
        bits = 1 + self.exponent_bits + self.mantissa_bits
        check.bounded_int("NumberFormat.storage_bits", self.storage_bits, bits, 128,
                          why=f"at least the {bits} bits of sign, exponent and mantissa")
        check.boolean("NumberFormat.inf_nan_code", self.inf_nan_code)

    @property
    def bits(self) -> int:
        """Bits that carry information: sign + exponent + mantissa (19 for TF32)."""
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def bias(self) -> int:
        return 2 ** (self.exponent_bits - 1) - 1 if self.is_float else 0

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number: 1 - bias."""
        return 1 - self.bias

    @property
    def emax(self) -> int:
        """Exponent of the largest finite number (E4M3 uses the all-ones exponent for normals)."""
        top_code = 2**self.exponent_bits - (2 if self.inf_nan_code else 1)
        return top_code - self.bias

    @property
    def max_normal(self) -> float:
        """Largest finite value. E4M3 (no infinities) gives up only the all-ones mantissa, for NaN: 448."""
        if not self.is_float:
            return float(2**self.mantissa_bits - 1)
        top_fraction = 2**self.mantissa_bits - (1 if self.inf_nan_code else 2)
        return math.ldexp(1 + top_fraction / 2**self.mantissa_bits, self.emax)

    @property
    def min_normal(self) -> float:
        """Smallest positive normal number 2^emin (smallest nonzero magnitude, 1, for integers)."""
        return math.ldexp(1.0, self.emin) if self.is_float else 1.0

    @property
    def min_subnormal(self) -> float | None:
        """Smallest positive subnormal 2^(emin - mantissa_bits); None for integers."""
        return math.ldexp(1.0, self.emin - self.mantissa_bits) if self.is_float else None

    @property
    def epsilon(self) -> float | None:
        """Machine epsilon: the gap between 1 and the next larger number, 2^-mantissa_bits."""
        return math.ldexp(1.0, -self.mantissa_bits) if self.is_float else None

    @property
    def unit_roundoff(self) -> float | None:
        """u = epsilon / 2: the largest relative error of round-to-nearest (normal range)."""
        return math.ldexp(1.0, -self.mantissa_bits - 1) if self.is_float else None

    @property
    def decimal_digits(self) -> float:
        """Significant decimal digits: (mantissa_bits + 1) log10 2 (value bits log10 2 for integers)."""
        return (self.mantissa_bits + (1 if self.is_float else 0)) * math.log10(2)

    @property
    def normal_range_decades(self) -> float:
        """Decades between the smallest normal and the largest finite value (the range at full precision)."""
        if not self.is_float:
            return math.log10(self.max_normal)
        return math.log10(self.max_normal) - math.log10(self.min_normal)

    @property
    def range_decades(self) -> float:
        """Decades between the smallest subnormal and the largest finite value (0..127 for INT8: 2.1)."""
        low = self.min_subnormal if self.is_float else 1.0
        return math.log10(self.max_normal) - math.log10(low)

    @property
    def underflow_threshold(self) -> float:
        """Magnitudes at or below this round to zero with round-to-nearest-even (half the smallest subnormal)."""
        return (self.min_subnormal or 1.0) / 2

    @property
    def overflow_threshold(self) -> float:
        """Magnitudes at or above this round past the largest finite value (max + half an ulp)."""
        if not self.is_float:
            return self.max_normal + 0.5
        return self.max_normal + math.ldexp(1.0, self.emax - self.mantissa_bits - 1)

    def row(self) -> dict[str, Any]:
        """The format as one row of :func:`format_table`."""
        return {"format": self.label, "bits": self.bits, "storage_bits": self.storage_bits,
                "exponent_bits": self.exponent_bits, "mantissa_bits": self.mantissa_bits,
                "max": self.max_normal, "min_normal": self.min_normal, "min_subnormal": self.min_subnormal,
                "epsilon": self.epsilon, "unit_roundoff": self.unit_roundoff,
                "digits": self.decimal_digits, "decades": self.range_decades, "source": self.source}


#: The formats of the chapter, in table order. FP8 is the H100 contrast: the A100 has no FP8 tensor cores.
FORMATS: dict[str, NumberFormat] = {f.name: f for f in (
    NumberFormat("fp64", "FP64", "float", 11, 52, 64),
    NumberFormat("fp32", "FP32", "float", 8, 23, 32),
    NumberFormat("tf32", "TF32", "float", 8, 10, 32, source="nvidia2020ampere",
                 note="a tensor-core math mode, not a storage type: values stay FP32 in memory"),
    NumberFormat("bf16", "BF16", "float", 8, 7, 16, source="kalamkar2019bf16"),
    NumberFormat("fp16", "FP16", "float", 5, 10, 16),
    NumberFormat("fp8_e4m3", "FP8 E4M3", "float", 4, 3, 8, inf_nan_code=False, source="micikevicius2022fp8",
                 note="no infinities; only S.1111.111 is NaN, so the top exponent holds normals up to 448"),
    NumberFormat("fp8_e5m2", "FP8 E5M2", "float", 5, 2, 8, source="micikevicius2022fp8"),
    NumberFormat("int8", "INT8", "int", 0, 7, 8, source="nvidia2020ampere",
                 note="two's complement, -128..127; its precision is set by a scale factor, not by bits"),
)}
FLOAT_FORMATS = tuple(k for k, f in FORMATS.items() if f.is_float)


def get_format(fmt: str | NumberFormat) -> NumberFormat:
    """The :class:`NumberFormat` called ``fmt`` (chapter *TF32 and the precision formats*)."""
    if isinstance(fmt, NumberFormat):
        return fmt
    check.one_of("fmt", fmt, FORMATS)
    return FORMATS[fmt]


def format_table(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Rows of derived figures for ``names`` (default: all of :data:`FORMATS`), chapter *TF32 and the
    precision formats*, section "Formats, derived from their bits"."""
    chosen = list(FORMATS) if names is None else check.names("names", names, FORMATS, max_len=64)
    return [FORMATS[n].row() for n in chosen]


def _fmt_value(v: Any, spec: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return str(int(v))
    return format(float(v), spec)


def render_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
                 formats: Mapping[str, str] | None = None, headers: Mapping[str, str] | None = None) -> str:
    """A fixed-width text table (stable under nbval: every float goes through an explicit format).

    ``formats`` maps a column to a format spec (default ``.3g``); ``headers`` renames columns. Chapter *TF32
    and the precision formats* prints its tables with it.
    """
    rows = check.sequence("rows", rows, check.mapping, min_len=0, max_len=100_000)
    if not rows:
        return "(no rows)"
    known = list(dict.fromkeys(k for r in rows for k in r))
    columns = list(rows[0].keys()) if columns is None else check.names("columns", columns, known, max_len=200)
    formats = check.mapping("formats", formats) if formats is not None else {}
    for c, spec in formats.items():
        check.string(f"formats[{c!r}]", spec)
        try:
            format(1.0, spec)
        except ValueError:
            raise ValueError(f"formats[{c!r}]={spec!r} is not a format spec for a number (e.g. '.3g')") from None
    headers = {c: check.string(f"headers[{c!r}]", h, allow_empty=True)
               for c, h in (check.mapping("headers", headers) if headers is not None else {}).items()}
    cells = [[headers.get(c, c) for c in columns]]
    for r in rows:
        cells.append([r[c] if isinstance(r.get(c), str) else _fmt_value(r.get(c), formats.get(c, ".3g"))
                      for c in columns])
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def bit_fields(fmt: str) -> list[tuple[str, int]]:
    """The bit layout of ``fmt`` from the most significant bit: [("sign", 1), ("exponent", 8), ...].

    TF32 adds ("unused", 13): the low 13 bits of the FP32 word it is stored in, which the tensor core ignores.
    Chapter *TF32 and the precision formats*, figure "bit layouts".
    """
    f = get_format(fmt)
    if not f.is_float:
        return [("sign", 1), ("value", f.mantissa_bits)]
    out = [("sign", 1), ("exponent", f.exponent_bits), ("mantissa", f.mantissa_bits)]
    if f.storage_bits > f.bits:
        out.append(("unused", f.storage_bits - f.bits))
    return out

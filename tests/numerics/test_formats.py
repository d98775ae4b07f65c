"""Tests of ampere.numerics.formats: the formats derived from their bits, their table and bit layouts
(chapter: TF32 and the precision formats)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402


@pytest.mark.parametrize("name, np_dtype", [("fp64", np.float64), ("fp32", np.float32), ("fp16", np.float16)])
def test_ieee_formats_match_numpy_finfo(name, np_dtype):
    f, fi = N.FORMATS[name], np.finfo(np_dtype)
    assert f.max_normal == float(fi.max)
    assert f.min_normal == float(fi.smallest_normal)
    assert f.min_subnormal == float(fi.smallest_subnormal)
    assert f.epsilon == float(fi.eps)
    assert f.mantissa_bits == fi.nmant and f.exponent_bits == fi.nexp


@pytest.mark.parametrize("name, dtype", [("bf16", "bfloat16"), ("fp8_e4m3", "float8_e4m3fn"),
                                         ("fp8_e5m2", "float8_e5m2")])
def test_formats_match_torch_finfo(name, dtype):
    f, fi = N.FORMATS[name], torch.finfo(getattr(torch, dtype))
    assert f.max_normal == fi.max
    assert f.min_normal == fi.smallest_normal
    assert f.epsilon == fi.eps


def test_special_format_values():
    assert N.FORMATS["fp8_e4m3"].max_normal == 448.0  # no infinities: the top exponent holds normals
    assert N.FORMATS["fp8_e5m2"].max_normal == 57344.0
    assert N.FORMATS["fp16"].max_normal == 65504.0
    tf32 = N.FORMATS["tf32"]
    assert tf32.bits == 19 and tf32.storage_bits == 32
    assert tf32.unit_roundoff == 2.0**-11 == N.FORMATS["fp16"].unit_roundoff
    assert tf32.min_normal == N.FORMATS["fp32"].min_normal  # FP32 range ...
    assert tf32.max_normal == (2 - 2.0**-10) * 2.0**127
    assert N.FORMATS["int8"].max_normal == 127 and N.FORMATS["int8"].epsilon is None
    assert N.FORMATS["fp16"].overflow_threshold == 65520.0
    assert N.FORMATS["fp64"].range_decades == pytest.approx(631.6, abs=0.1)


def test_format_table_and_render():
    rows = N.format_table()
    assert [r["format"] for r in rows] == [f.label for f in N.FORMATS.values()]
    text = N.render_table(rows, ["format", "bits", "max", "epsilon"], {"max": ".4g"})
    assert "FP8 E4M3" in text and "448" in text and "65500" not in text
    assert "65504" in N.render_table(N.format_table(["fp16"]), ["format", "max"], {"max": ".6g"})
    assert N.render_table([]) == "(no rows)"
    with pytest.raises(ValueError, match=r"names\[0\] must be one of .*got 'fp12'"):
        N.format_table(["fp12"])


def test_bit_fields_sum_to_storage():
    for name, f in N.FORMATS.items():
        assert sum(w for _, w in N.bit_fields(name)) == f.storage_bits
    assert N.bit_fields("tf32")[-1] == ("unused", 13)

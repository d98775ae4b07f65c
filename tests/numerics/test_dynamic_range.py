"""Tests of ampere.numerics.dynamic_range: range census and loss scaling (chapter: TF32 and the precision
formats)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_range_census_agrees_with_round_to(fmt):
    g = np.concatenate([N.gradient_like_values(100_000, -50, 38, seed=3),
                        np.array([3e-8, 2.98023224e-08, 2.9802326e-08, 65519.0, 65520.0, 6.1e-5], dtype=np.float32)])
    g = g[g != 0]  # values below FP32's smallest subnormal are already zero in FP32; the census skips them
    census = N.range_census(g, fmt)
    r = N.round_to(g, fmt)
    f = N.FORMATS[fmt]
    assert census["zero"] == pytest.approx(np.mean(r == 0), abs=1e-12)
    assert census["overflow"] == pytest.approx(np.mean(np.isinf(r)), abs=1e-12)
    assert census["subnormal"] == pytest.approx(np.mean((r != 0) & (np.abs(r) < f.min_normal)), abs=1e-12)
    assert sum(census.values()) == pytest.approx(1.0)


def test_gradient_like_values_and_census_of_thirty_decades():
    g = N.gradient_like_values(50_000, -25, 5, seed=0)
    mag = np.abs(g)
    assert g.dtype == np.float32 and 1e-25 <= mag.min() and mag.max() <= 1e5
    assert 0.4 < np.mean(g < 0) < 0.6
    fp16, bf16 = N.range_census(g, "fp16"), N.range_census(g, "bf16")
    assert fp16["zero"] > 0.5 and fp16["overflow"] > 0  # below 3e-8 flushes; above 65520 overflows
    assert bf16["zero"] == 0 and bf16["overflow"] == 0 and bf16["normal"] == 1.0
    assert N.range_census(g, "tf32") == N.range_census(g, "fp32")
    with pytest.raises(ValueError, match="fmt must be one of .*fp8_e5m2'; got 'int8'"):
        N.range_census(g, "int8")
    with pytest.raises(ValueError, match="distribution must be one of .*got 'gaussian'"):
        N.gradient_like_values(10, distribution="gaussian")


def test_loss_scaling():
    g = N.gradient_like_values(100_000, distribution="lognormal", log10_mean=-8, log10_std=1.5, seed=1)
    rows = N.loss_scale_sweep(g, "fp16", range(0, 30))
    zeros = [r["zero"] for r in rows]
    assert zeros == sorted(zeros, reverse=True) and zeros[0] > 0.5
    k = N.best_loss_scale(g, "fp16")
    assert N.range_census(g * 2.0**k, "fp16")["overflow"] == 0
    assert N.range_census(g * 2.0 ** (k + 1), "fp16")["overflow"] > 0
    assert N.range_census(g * 2.0**k, "fp16")["zero"] < 0.01 < zeros[0]
    assert N.best_loss_scale(np.zeros(4), "fp16", max_log2=24) == 24

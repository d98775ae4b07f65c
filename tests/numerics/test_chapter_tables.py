"""Tests of ampere.numerics.chapter_tables: the chapter's tables and checks (chapter: TF32 and the precision
formats)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402


def test_chapter_tables_and_checks():
    rows = {r["format"]: r for r in N.format_rows()}
    # TF32 and BF16 share FP32's normal range; only the subnormal tail differs
    assert rows["FP32"]["decades (normal)"] == rows["TF32"]["decades (normal)"] == rows["BF16"]["decades (normal)"]
    assert float(rows["FP32"]["decades (all)"]) > float(rows["TF32"]["decades (all)"]) \
        > float(rows["BF16"]["decades (all)"])
    assert rows["INT8"]["min normal"] == "" and rows["FP16"]["max"] == "6.55e+04"
    demo = N.rounding_rows([1024.5])
    assert demo == [{"x (FP32)": "1024.5", "BF16": "1024", "FP16": "1024", "TF32 nearest": "1025",
                     "TF32 truncate": "1024"}]
    assert N.torch_agreement(count=2000, seed=1) == {"bf16": True, "fp16": True}
    sweep = N.error_vs_k(ks=(16, 256), m=16, n=16, trials=1, seed=0)
    assert [r["K"] for r in N.error_rows(sweep)] == ["16", "256"]
    checks = N.error_checks(sweep)
    assert len(checks) == 4 and all(isinstance(v, bool) for v in checks.values())
    census = {r["format"]: r for r in N.census_rows(N.gradient_like_values(2000, seed=0))}
    assert census["FP32"]["zero (%)"] == "0.0" and float(census["FP16"]["zero (%)"]) > 10
    peaks = {r["GPU"]: r for r in N.tf32_peak_rows()}
    assert peaks["A100-SXM4-80GB"]["TF32/FP32"] == "8.0" and "T4" not in peaks
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    N.plot_accumulation(ax, N.accumulation_curves(k_max=64))
    assert len(ax.get_lines()) == len(N.ACCUMULATION_CASES) + 2
    plt.close(fig)

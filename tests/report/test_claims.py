"""ampere.report.claims: why identical GPUs differ, the cost of a gap."""

import pytest

from ampere.report import claims


def test_variation_rows_and_gap_cost():
    rows = {r["factor"].split(" (")[0]: r for r in claims.variation_rows()}
    ff = rows["form factor: PCIe 300 W vs SXM4 400 W"]
    assert ff["ratio"] == pytest.approx(252.9 / 271.2) and not ff["flagged at 10 %"]
    assert "confounded" in ff["factor"]
    assert rows["input data"]["ratio"] == pytest.approx(257.0 / 295.0) and rows["input data"]["flagged at 10 %"]
    assert rows["MIG mode"]["ratio"] == pytest.approx(98 / 108)
    assert rows["datasheet peak clock vs maximum boost clock"]["ratio"] == pytest.approx(1830 / 1980)
    assert all(r["source"] for r in rows.values())
    short = claims.variation_rows(short=True)
    assert [list(r) for r in short] == [["factor", "example", "ratio", "source"]] * len(rows)
    assert [r["source"] for r in short][:3] == ["Bekman 2024", "He 2024", "Bekman 2024"]
    assert short[0]["factor"] == "form factor" and short[0]["ratio"] == f"{252.9 / 271.2:.3f}"
    with pytest.raises(TypeError, match="short"):
        claims.variation_rows(short=1)
    assert not any("2024" in r["source"] and "mle" in r["source"] for r in rows.values())  # labels, not bib keys
    cost = claims.gap_cost(1000, 0.10, 0.96)
    assert cost["gpu_hours_lost"] == pytest.approx(876_000) and cost["dollars"] == pytest.approx(840_960)
    assert claims.gap_cost(1000, 0.10, 1.0, hours=168)["cluster_hours_lost"] == pytest.approx(16.8)
    for bad in (dict(gpus=-1), dict(gap=1.2), dict(price_per_gpu_hour=0), dict(hours=float("inf"))):
        with pytest.raises(ValueError):
            claims.gap_cost(**{**dict(gpus=8, gap=0.1, price_per_gpu_hour=1.0), **bad})
    for bad in (dict(gpus=8.5), dict(gpus=True), dict(gap="0.1"), dict(price_per_gpu_hour=None)):
        with pytest.raises(TypeError):
            claims.gap_cost(**{**dict(gpus=8, gap=0.1, price_per_gpu_hour=1.0), **bad})
    import numpy as np
    assert claims.gap_cost(np.int64(8), 0.1, 1.0)["gpu_hours_lost"] == pytest.approx(8 * 8766 * 0.1, rel=1e-3)

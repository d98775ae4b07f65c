"""ampere.gemm: the shared GEMM layer (peaks, wave quantisation, published matmul figures, MAMF)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from ampere import gemm, results, specs

ROOT = Path(__file__).resolve().parents[1]


def test_gemm_imports_no_torch_and_no_chapter_module():
    tree = ast.parse((ROOT / "ampere" / "gemm.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported |= {a.name for a in node.names} if node.level else {str(node.module).split(".")[0]}
    assert "torch" not in imported
    assert imported & {"architecture", "numerics", "sparsity", "megatron", "hbm", "report", "today"} == set()


def test_matmul_flops():
    assert gemm.matmul_flops(2, 3, 4) == 48.0
    assert gemm.matmul_flops(np.int64(8), 8, 8, batch=np.int32(2)) == 2048.0
    for bad in (0, -1, 2.0, True, "8"):
        with pytest.raises((TypeError, ValueError), match="m"):
            gemm.matmul_flops(bad, 8, 8)


def test_peak_precision_for():
    a100, t4 = specs.get("A100-SXM4-80GB"), specs.get("T4")
    assert gemm.peak_precision_for(a100, "fp64") == "fp64_tc"  # cuBLAS DGEMM runs on the FP64 tensor cores
    assert gemm.peak_precision_for("T4", "fp64") == "fp64"
    assert gemm.peak_precision_for(t4, "bf16") is None  # no BF16 tensor cores on Turing
    assert gemm.peak_precision_for(a100, "bf16") == "bf16"
    with pytest.raises(ValueError, match="precision"):
        gemm.peak_precision_for(a100, "fp12")
    with pytest.raises(TypeError, match="precision"):
        gemm.peak_precision_for(a100, None)


def test_wave_efficiency():
    assert gemm.wave_efficiency(128 * 108, 128) == 1.0  # exactly one full wave
    assert gemm.wave_efficiency(128 * 109, 128) == pytest.approx(109 / 216)  # one tile spills into a 2nd wave
    assert gemm.wave_efficiency(4096, 4096, 128, 256) == pytest.approx(512 / 540)
    assert gemm.wave_efficiency(100, 128) == pytest.approx((100 / 128) / 108)  # partial tile, mostly idle GPU
    assert gemm.wave_efficiency(128, 128, batch=108) == 1.0  # a batch of GEMMs shares the waves
    assert gemm.wave_efficiency(np.int64(256), np.int32(256)) == pytest.approx(4 / 108)
    for bad in (0, 1.5, True, None):
        with pytest.raises((TypeError, ValueError), match="tile_m"):
            gemm.wave_efficiency(128, 128, tile_m=bad)


def test_peak_rows_derive_every_datasheet_figure():
    rows = gemm.peak_rows(["A100-SXM4-80GB"])
    assert all(isinstance(r, gemm.PeakRow) for r in rows)
    bf16 = {r.sparse: r for r in rows if r.precision == "bf16"}
    assert bf16[False].derived_tflops == pytest.approx(311.87, abs=0.01)  # 108 x 1024 x 2 x 1.41 GHz
    assert bf16[True].derived_flop_per_s == 2 * bf16[False].derived_flop_per_s
    assert bf16[False].datasheet == "312" and bf16[False].agrees is True
    assert not any(r.sparse for r in rows if r.precision in ("fp64", "fp64_tc", "fp32"))
    dense = gemm.peak_rows("H100-SXM5-80GB", ("tf32", "fp8"), modes=(False,))
    assert [(r.precision, r.sparse) for r in dense] == [("tf32", False), ("fp8", False)]
    assert dense[0].clock_mhz == pytest.approx(1830)  # NVIDIA's H100 tensor peaks match 1830 MHz
    assert gemm.peak_rows("T4", ("bf16",)) == []
    d = rows[0].to_dict()
    assert d["derived_tflops"] == rows[0].derived_tflops and d["gpu"] == "A100-SXM4-80GB"
    with pytest.raises(ValueError, match="precisions"):
        gemm.peak_rows(["A100-SXM4-80GB"], ["fp12"])
    with pytest.raises(ValueError, match="gpu"):
        gemm.peak_rows(["A100"])
    with pytest.raises(TypeError, match="modes"):
        gemm.peak_rows(["A100-SXM4-80GB"], modes=("dense",))


def test_published_matmul_records():
    recs = gemm.published_matmul()
    assert len(recs) >= 8 and all(isinstance(r, results.Record) and r.kind == "published" for r in recs)
    for r in recs:
        assert r.benchmark == "matmul" and r.gpu in specs.names()
        assert r.params["method"] in gemm.MATMUL_METHODS
        precision = r.params["precision"]
        tflops = gemm.matmul_tflops(r)
        assert 0 < tflops < specs.get(r.gpu).peak_flops(precision) / 1e12, r.id  # below the dense peak
        shape = gemm.matmul_shape(r)
        assert shape is None or all(isinstance(d, int) and d > 0 for d in shape)
    assert all(r.gpu == "H100-SXM5-80GB" for r in gemm.published_matmul(gpu="H100-SXM5-80GB"))
    assert {r.params["precision"] for r in gemm.published_matmul(precision="fp8")} == {"fp8"}
    assert all(r.params["method"] == "fixed" for r in gemm.published_matmul(method="fixed"))
    with pytest.raises(ValueError, match="method"):
        gemm.published_matmul(method="best")
    with pytest.raises(ValueError, match="gpu"):
        gemm.published_matmul(gpu="A100")
    with pytest.raises(TypeError, match="rec"):
        gemm.matmul_tflops({"tflops": 1.0})


def test_mamf_flops_and_siblings():
    flops, shape, rec = gemm.mamf_flops("A100-SXM4-80GB")
    assert rec.params["method"] == "mamf" and rec.source == "bekman2024mle"
    assert flops == gemm.matmul_tflops(rec) * 1e12 and shape == gemm.matmul_shape(rec)
    assert 0.8 < flops / specs.get("A100-SXM4-80GB").peak_flops("bf16") < 0.95
    # of two revisions of one table the newest wins
    same = gemm.published_matmul("A100-SXM4-80GB", "bf16", "mamf")
    assert rec.date == max(r.date for r in same)
    # the 40 GB A100 and the H200 take their sibling's figure (same silicon and clocks)
    for gpu, twin in gemm.MAMF_SIBLINGS.items():
        assert specs.get(gpu).peak_flops("bf16") == specs.get(twin).peak_flops("bf16")
        if gemm.published_matmul(twin, "bf16", "mamf"):
            assert gemm.mamf_flops(gpu)[0] == gemm.mamf_flops(twin)[0]
    assert gemm.mamf_flops("H100-SXM5-80GB", "fp8")[0] > gemm.mamf_flops("H100-SXM5-80GB")[0]
    with pytest.raises(ValueError, match="T4"):
        gemm.mamf_flops("T4")
    with pytest.raises(ValueError, match="precision"):
        gemm.mamf_flops("A100-SXM4-80GB", "bfloat16")


def test_quantized_matmul_time_is_waves_times_tile_time_plus_overhead():
    import math

    from ampere import gemm

    peak = 312e12
    for m, n, k in [(4096, 4096, 4096), (1536, 2305, 1024), (100, 100, 64), (8192, 1, 8)]:
        t = gemm.quantized_matmul_time(m, n, k, peak, 256, 128, sms=108)
        assert gemm.matmul_flops(m, n, k) / t == pytest.approx(peak * gemm.wave_efficiency(m, n, 256, 128, 108))
        tiles = math.ceil(m / 256) * math.ceil(n / 128)
        assert t == pytest.approx(math.ceil(tiles / 108) * 2 * 256 * 128 * k / (peak / 108))
    assert gemm.quantized_matmul_time(256, 128, 64, peak, overhead_s=5e-6) == pytest.approx(
        gemm.quantized_matmul_time(256, 128, 64, peak) + 5e-6)
    # two tiles per SM share it: same time for a full double wave as one tile per SM on twice the work
    assert gemm.quantized_matmul_time(256 * 2, 128 * 108, 64, peak, tiles_per_sm=2) == pytest.approx(
        gemm.quantized_matmul_time(256 * 2, 128 * 108, 64, peak))
    with pytest.raises(ValueError, match="peak_flop_per_s"):
        gemm.quantized_matmul_time(1, 1, 1, 0.0)
    with pytest.raises(TypeError, match="tile_m"):
        gemm.quantized_matmul_time(1, 1, 1, 1.0, tile_m=True)
    with pytest.raises(ValueError, match="overhead_s"):
        gemm.quantized_matmul_time(1, 1, 1, 1.0, overhead_s=-1.0)


def test_alignment_elements_follow_nvidias_byte_rule():
    from ampere import gemm

    assert gemm.alignment_elements("fp16") == (8, 64) == gemm.alignment_elements("bf16")
    assert gemm.alignment_elements("tf32") == (4, 32) and gemm.alignment_elements("int8") == (16, 128)
    assert gemm.alignment_elements("fp64") == (2, 16)
    with pytest.raises(ValueError, match="precision"):
        gemm.alignment_elements("fp12")

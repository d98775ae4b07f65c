"""ampere.sparsity: the 2:4 rule, the compressed format, the models, the ASP experiment, the GPU path on CPU."""

from fractions import Fraction

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from ampere import results, specs, tables  # noqa: E402
from ampere import sparsity as sp  # noqa: E402

RNG = np.random.default_rng(1234)


def _random(shape, dtype):
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-128, 128, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# --- the rule ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8])
@pytest.mark.parametrize("shape", [(4,), (3, 8), (16, 64), (2, 5, 12)])
def test_prune_output_always_passes_is_2to4(dtype, shape):
    w = _random(shape, dtype)
    p = sp.prune_2to4(w)
    assert p.dtype == w.dtype and p.shape == w.shape
    assert sp.is_2to4(p)
    # exactly the two largest magnitudes of every group survive, with their values unchanged
    groups, kept = w.reshape(-1, 4), p.reshape(-1, 4)
    mags = np.abs(groups.astype(np.float64))
    for g, k, mg in zip(groups, kept, mags):
        order = np.argsort(-mg, kind="stable")[:2]
        assert set(np.flatnonzero(k != 0)) <= set(order)
        assert np.array_equal(k[order], g[order])


def test_prune_breaks_ties_towards_lower_index_and_keeps_values():
    w = np.array([[1.0, -1.0, 1.0, 0.5, 3.0, -4.0, 0.0, 0.0]], dtype=np.float32)
    assert sp.prune_2to4(w).tolist() == [[1.0, -1.0, 0.0, 0.0, 3.0, -4.0, 0.0, 0.0]]


def test_prune_torch_bf16_stays_bf16_and_exact():
    t = torch.randn(8, 32, generator=torch.Generator().manual_seed(0)).bfloat16()
    p = sp.prune_2to4(t)
    assert p.dtype == torch.bfloat16 and sp.is_2to4(p)
    ref = t.float().reshape(8, 8, 4)
    order = torch.argsort(ref.abs(), dim=-1, descending=True, stable=True)[..., :2]
    keep = torch.zeros_like(ref, dtype=torch.bool).scatter_(-1, order, True)
    assert torch.equal(p, (t.reshape(8, 8, 4) * keep).reshape(8, 32))


def test_is_2to4_means_at_most_two():
    assert sp.is_2to4(np.array([[0, 0, 0, 0, 5, 0, 0, 0, 1, 2, 0, 0]]))  # 0, 1 and 2 non-zeros all pass
    assert not sp.is_2to4(np.array([[1, 2, 3, 0]]))
    assert sp.is_2to4(np.array([[-0.0, 1.0, -0.0, 2.0]]))  # -0.0 is a zero
    neg_zero_bf16 = torch.tensor([[-0.0, 1.0, -0.0, 2.0]], dtype=torch.bfloat16)
    assert sp.is_2to4(neg_zero_bf16)


@pytest.mark.parametrize("fn", [sp.prune_2to4, sp.is_2to4, sp.mask_2to4, sp.compress_2to4])
def test_width_not_multiple_of_4_is_rejected(fn):
    with pytest.raises(ValueError, match="multiple of 4"):
        fn(np.ones((2, 6), dtype=np.float32))


def test_prune_rejects_nan_and_bad_nm():
    with pytest.raises(ValueError, match="NaN"):
        sp.prune_2to4(np.array([[np.nan, 1, 2, 3]], dtype=np.float32))
    with pytest.raises(ValueError, match="n must be an integer <= 3"):
        sp.prune_nm(np.ones((1, 4)), 4, 4)
    with pytest.raises(TypeError, match="numpy array or a torch tensor"):
        sp.prune_2to4("weights")
    assert sp.is_nm(np.ones((1, 4)), np.int64(2), np.int32(4)) is False  # numpy integers accepted
    with pytest.raises(TypeError, match="n must be an integer"):
        sp.prune_nm(np.ones((1, 4)), 2.0, 4)


def test_unsupported_dtypes_are_named_not_numpy_internals():
    for bad in (np.array([["a", "b", "c", "d"]]), np.array([[1 + 1j, 0, 0, 0]]), np.array([[None] * 4], dtype=object)):
        with pytest.raises(TypeError, match=r"w has dtype .*allowed: float16, bfloat16 \(torch\)"):
            sp.prune_2to4(bad)
    if hasattr(torch, "float8_e4m3fn"):
        with pytest.raises(TypeError, match="w has dtype torch float8_e4m3fn.*allowed"):
            sp.prune_2to4(torch.zeros(2, 4).to(torch.float8_e4m3fn))
    with pytest.raises(TypeError, match="values has dtype"):
        sp.decompress_2to4(np.array([["a", "b"]]), np.zeros((1, 1), np.uint16), 4)


def test_one_to_two_pattern():
    w = _random((4, 16), np.float32)
    p = sp.prune_1to2(w)
    assert sp.is_1to2(p) and sp.is_2to4(p)
    assert not sp.is_1to2(sp.prune_2to4(np.array([[1.0, 2.0, 0.1, 0.2]])))


def test_random_and_unstructured_masks():
    m = sp.random_mask_2to4((8, 16), seed=3)
    assert m.reshape(-1, 4).sum(axis=1).tolist() == [2] * 32
    assert np.array_equal(m, sp.random_mask_2to4((8, 16), seed=3))
    assert not np.array_equal(m, sp.random_mask_2to4((8, 16), seed=4))
    w = _random((16, 16), np.float32)
    keep = sp.unstructured_mask(w, 0.5)
    assert keep.sum() == 128 and np.abs(w[keep]).min() >= np.abs(w[~keep]).max()
    with pytest.raises(ValueError, match="sparsity"):
        sp.unstructured_mask(w, 1.0)


# --- the format --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8])
@pytest.mark.parametrize("cols", [4, 12, 16, 64])
@pytest.mark.parametrize("meta_dtype", [np.uint8, np.uint16, np.uint32])
def test_round_trip_is_exact(dtype, cols, meta_dtype):
    w = sp.prune_2to4(_random((5, cols), dtype))
    values, meta = sp.compress_2to4(w, meta_dtype=meta_dtype)
    assert values.shape == (5, cols // 2) and values.dtype == w.dtype
    per_word = {np.uint8: 2, np.uint16: 4, np.uint32: 8}[meta_dtype]
    assert meta.dtype == meta_dtype and meta.shape == (5, -(-cols // 4 // per_word))
    back = sp.decompress_2to4(values, meta, cols)
    assert back.dtype == w.dtype and back.tobytes() == w.tobytes()  # bit for bit


def test_round_trip_torch_bf16_and_fp16_bitwise():
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        w = sp.prune_2to4(torch.randn(32, 64, generator=torch.Generator().manual_seed(1)).to(dtype))
        values, meta = sp.compress_2to4(w)
        assert isinstance(values, torch.Tensor) and values.dtype == dtype and values.shape == (32, 32)
        back = sp.decompress_2to4(values, meta, 64)
        assert back.dtype == dtype
        assert torch.equal(back.view(torch.int16 if dtype != torch.float32 else torch.int32),
                           w.view(torch.int16 if dtype != torch.float32 else torch.int32))


def test_groups_with_fewer_than_two_nonzeros_round_trip():
    w = np.array([[0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, -3, 0, 5, 0, 0]], dtype=np.float16)
    values, meta = sp.compress_2to4(w)
    assert np.array_equal(sp.decompress_2to4(values, meta, 16), w)
    # filler rule: empty -> (2, 3); lone 0 -> (0, 2); lone 3 -> (2, 3); lone 1 -> (1, 2)
    assert sp.metadata_nibbles(meta, 4).tolist() == [[2 | 3 << 2, 0 | 2 << 2, 2 | 3 << 2, 1 | 2 << 2]]


def test_metadata_bit_order_is_documented_order():
    # group 0 keeps positions (0, 2) -> nibble 0b1000; group 1 keeps (1, 3) -> 0b1101; little-endian nibbles
    w = np.array([[1, 0, 2, 0, 0, 3, 0, 4]], dtype=np.float32)
    values, meta = sp.compress_2to4(w)
    assert values.tolist() == [[1, 2, 3, 4]]
    assert meta.dtype == np.uint16 and int(meta[0, 0]) == 0b1101_1000
    _, meta8 = sp.compress_2to4(w, meta_dtype=np.uint8)
    assert int(meta8[0, 0]) == 0b1101_1000


def test_compress_rejects_non_2to4_naming_the_group():
    w = np.zeros((3, 8), dtype=np.float32)
    w[2, 4:7] = 1.0
    with pytest.raises(ValueError, match="row 2, columns 4..7 hold 3 non-zeros"):
        sp.compress_2to4(w)
    with pytest.raises(ValueError, match="2-D"):
        sp.compress_2to4(np.zeros(8))
    with pytest.raises(ValueError, match="meta_dtype"):
        sp.compress_2to4(np.zeros((1, 4)), meta_dtype=np.int16)


def test_decompress_rejects_bad_metadata_and_shapes():
    values, meta = sp.compress_2to4(np.array([[1, 0, 2, 0]], dtype=np.float32))
    with pytest.raises(ValueError, match="same position twice"):
        sp.decompress_2to4(values, np.zeros_like(meta), 4)
    with pytest.raises(ValueError, match="cols"):
        sp.decompress_2to4(values, meta, 6)
    with pytest.raises(ValueError, match="words per row"):
        sp.decompress_2to4(values, np.zeros((1, 2), dtype=np.uint16), 4)
    # a wrong (but plausible) width is an error about the width, not about a padding nibble
    wide_values, wide_meta = sp.compress_2to4(sp.prune_2to4(np.arange(1, 17, dtype=np.float32).reshape(1, 16)))
    with pytest.raises(ValueError, match=r"cols=12 does not match the compressed values: they are 8 wide"):
        sp.decompress_2to4(wide_values, wide_meta, 12)
    assert sp.decompress_2to4(wide_values, wide_meta, np.int64(16)).shape == (1, 16)
    with pytest.raises(TypeError, match="cols"):
        sp.decompress_2to4(wide_values, wide_meta, 16.0)
    with pytest.raises(ValueError, match="metadata shape"):
        sp.decompress_2to4(wide_values, np.zeros((2, 1), np.uint16), 16)


def test_storage_ratios_from_the_real_arrays():
    for dtype, expected in ((np.float16, Fraction(9, 16)), (np.int8, Fraction(10, 16)), (np.float32, Fraction(17, 32))):
        w = sp.prune_2to4(_random((16, 64), dtype))
        assert sp.storage_ratio(w, *sp.compress_2to4(w)) == expected
    wb = sp.prune_2to4(torch.randn(16, 64).bfloat16())
    assert sp.storage_ratio(wb, *sp.compress_2to4(wb)) == Fraction(9, 16)
    assert {p: sp.hardware_storage_ratio(p) for p in sp.HARDWARE_FORMATS} == {
        "fp16": Fraction(9, 16), "bf16": Fraction(9, 16), "int8": Fraction(10, 16), "tf32": Fraction(9, 16)}
    assert sp.metadata_overhead("fp16") == Fraction(1, 8) and sp.metadata_overhead("int8") == Fraction(1, 4)
    with pytest.raises(ValueError, match="precision must be one of"):
        sp.hardware_storage_ratio("fp64")


def test_same_format_as_pytorch_cutlass_encoder():
    patterns = [p for p in range(16) if bin(p).count("1") <= 2]  # the 11 allowed groups
    rng = np.random.default_rng(0)
    codes = rng.choice(patterns, size=(64, 16))
    bits = ((codes[..., None] >> np.arange(4)) & 1).astype(bool).reshape(64, 64)
    for dtype in (torch.float16, torch.bfloat16):
        w = (torch.randn(64, 64) * torch.from_numpy(bits)).to(dtype)
        values, meta = sp.compress_2to4(w)
        ref = sp.torch_cutlass_reference(w)
        assert ref is not None
        assert torch.equal(values.view(torch.int16), ref[0].view(torch.int16))
        assert np.array_equal(sp.cutlass_metadata_layout(meta), ref[1])
    tf32 = sp.prune_1to2(torch.randn(32, 64))
    v, m = sp.torch_cutlass_reference(tf32)
    assert sp.storage_ratio(tf32, v, m) == sp.hardware_storage_ratio("tf32")
    with pytest.raises(ValueError, match="multiple of 32"):
        sp.cutlass_metadata_layout(np.zeros((16, 4), dtype=np.uint16))


def test_matmul_from_compressed_equals_masked_dense_product():
    a = sp.prune_2to4(RNG.integers(-4, 5, (48, 64)).astype(np.float32))
    b = RNG.integers(-4, 5, (64, 7)).astype(np.float32)
    values, meta = sp.compress_2to4(a)
    assert np.array_equal(sp.matmul_2to4(values, meta, b), a @ b)  # small integers: exact in any order
    assert np.array_equal(sp.matmul_2to4(values, meta, b[:, 0]), a @ b[:, 0])
    a8 = sp.prune_2to4(_random((16, 32), np.int8))
    b8 = _random((32, 5), np.int8)
    out = sp.matmul_2to4(*sp.compress_2to4(a8), b8)
    assert out.dtype == np.int32 and np.array_equal(out, a8.astype(np.int32) @ b8.astype(np.int32))
    h = sp.prune_2to4(_random((32, 64), np.float16))
    xh = _random((64, 9), np.float16)
    got = sp.matmul_2to4(*sp.compress_2to4(h), xh)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, h.astype(np.float64) @ xh.astype(np.float64), rtol=1e-5, atol=1e-5)
    tb = sp.prune_2to4(torch.randn(8, 16).bfloat16())
    xb = torch.randn(16, 3).bfloat16()
    np.testing.assert_allclose(sp.matmul_2to4(*sp.compress_2to4(tb), xb), (tb.float() @ xb.float()).numpy(),
                               rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="wide"):
        sp.matmul_2to4(values, meta, b[:60])


def test_draw_block_runs():
    import matplotlib.pyplot as plt

    w = sp.prune_2to4(_random((4, 8), np.float32))
    fig, axes = plt.subplots(1, 3)
    sp.draw_block(axes, w, *sp.compress_2to4(w))
    plt.close(fig)


# --- the hardware model --------------------------------------------------------------------------------------

def test_peak_rows_double_and_match_datasheet():
    rows = sp.peak_rows()
    assert rows and all(r["ratio"] == 2.0 for r in rows if r["sparse"])
    a100 = {r["precision"]: r for r in rows if r["gpu"] == "A100-SXM4-80GB"}
    assert round(a100["fp16"]["sparse"]) == 624 and a100["fp16"]["agrees"] is True
    assert all(r["agrees"] for r in rows if r["agrees"] is not None)


def test_time_model_limits():
    big = sp.LinearShape(16384, 8192, 8192)
    assert sp.speedup_model("A100-SXM4-80GB", big, "fp16", "2:4") == pytest.approx(2.0)
    tiny = sp.LinearShape(1, 8192, 8192)
    s = sp.speedup_model("A100-SXM4-80GB", tiny, "fp16", "2:4")
    assert 1.7 < s < 16 / 9  # weight-bound: bytes ratio 9/16 plus the activation bytes
    t = sp.matmul_time_model("A100-SXM4-80GB", tiny, "fp16", "2:4")
    assert t["bound"] == "memory" and t["kind"] == "2:4"
    assert sp.unstructured_break_even("A100-SXM4-80GB", "fp16") == pytest.approx(15 / 16)
    uns = sp.matmul_time_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.5)
    assert uns["strategy"].startswith("bitmap")
    assert sp.speedup_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.5) == pytest.approx(1.0)
    assert sp.speedup_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.97) > 1.0
    csr = sp.matmul_time_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.5, strategy="csr")
    assert csr["strategy"].startswith("CSR")
    assert sp.speedup_model("A100-SXM4-80GB", big, "fp16", "unstructured", sparsity=0.5,
                            strategy="csr") == pytest.approx(1 / 8)
    with pytest.raises(ValueError, match="strategy"):
        sp.matmul_time_model("A100-SXM4-80GB", big, "fp16", "unstructured", strategy="magic")
    curves = sp.speedup_curves(tokens=(1, 1024, 16384))
    assert len(curves["2:4"]) == 3 and curves["2:4"][-1] > curves["unstructured"][-1]


def test_time_model_rejects_bad_input():
    s = sp.LinearShape(8, 16, 16)
    with pytest.raises(ValueError, match="kind"):
        sp.matmul_time_model("A100-SXM4-80GB", s, kind="1:8")
    with pytest.raises(ValueError, match="precision"):
        sp.matmul_time_model("A100-SXM4-80GB", s, precision="fp64")
    with pytest.raises(ValueError, match="no 2:4"):
        sp.matmul_time_model("T4", s, precision="fp16", kind="2:4")
    with pytest.raises(ValueError, match="efficiency"):
        sp.matmul_time_model("A100-SXM4-80GB", s, kind="unstructured", efficiency=0)
    with pytest.raises(ValueError, match="in_features"):
        sp.LinearShape(8, 6, 16)
    with pytest.raises(ValueError, match="tokens"):
        sp.LinearShape(0, 8, 16)


def test_plot_speedup_model_runs():
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2)
    sp.plot_speedup_model(axes)
    plt.close(fig)


def test_cpu_unstructured_measurement_small():
    out = sp.measure_cpu_unstructured(size=64, tokens=16, max_time_s=0.2)
    assert set(out["median_s"]) == set(out["speedup_vs_dense"])
    assert out["speedup_vs_dense"]["dense BLAS"] == 1.0


# --- accuracy ------------------------------------------------------------------------------------------------

def test_asp_experiment_small():
    res = sp.asp_experiment(sp.ASPConfig(hidden=(16, 8), epochs=2, finetune_epochs=1))
    rows = {r["method"]: r for r in res["rows"]}
    assert list(rows) == ["dense", "2:4 magnitude", "2:4 random", "unstructured 50% magnitude"]
    assert res["test_size"] + res["train_size"] == 1797
    for m in ("2:4 magnitude", "2:4 random"):
        assert rows[m]["zeros"] >= 0.5 and rows[m]["is_2to4"]
    assert rows["unstructured 50% magnitude"]["zeros"] >= 0.5
    assert all(0 <= r["acc_pruned"] <= 1 and r["correct_pruned"] == round(r["acc_pruned"] * res["test_size"])
               for r in res["rows"])
    summary = sp.asp_summary([res])
    assert summary["methods"] == list(rows)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    sp.plot_asp(ax, summary)
    plt.close(fig)


def test_asp_config_validation():
    with pytest.raises(ValueError, match="multiple of 4"):
        sp.ASPConfig(hidden=(30,))
    assert sp.ASPConfig(hidden=(np.int64(8),), epochs=np.int32(2)).hidden == (8,)
    with pytest.raises(TypeError, match="lr"):
        sp.ASPConfig(lr="0.01")
    with pytest.raises(ValueError, match="epochs"):
        sp.ASPConfig(epochs=0)
    with pytest.raises(ValueError, match="test_fraction"):
        sp.ASPConfig(test_fraction=1.5)


def test_published_results_come_from_the_data_folder():
    acc = sp.published_accuracy()
    assert all(isinstance(r, sp.AccuracyResult) and r.source and r.where for r in acc)
    bert_large = next(r for r in acc if r.network == "BERT-Large")
    assert "reprinted" in bert_large.reported_by  # NVIDIA's table, not a PyTorch run
    own = [r for r in acc if r.network.startswith("BERT-base")]
    assert {r.metric for r in own} == {"F1", "Exact match"} and all("own run" in r.reported_by for r in own)
    assert all(r.pruned_no_retraining < r.sparse for r in own)  # retraining recovers the loss
    speed = sp.published_speedups()
    assert len(speed) >= 10 and all(r.benchmark == "sparsity" and r.kind == "published" for r in speed)
    one_linear = next(r for r in speed if r.params.get("backend") == "cutlass")
    assert round(sp.published_speedup(one_linear), 2) == 1.38
    assert all(0.5 < sp.published_speedup(r) < 2.0 for r in speed)  # below the 2x math peak, every one
    assert sp.published_speedups("A100-SXM4-80GB") == [r for r in speed if r.gpu == "A100-SXM4-80GB"]


# --- the GPU path, exercised on the CPU -------------------------------------------------------------------------

def test_probe_backend_on_cpu_says_why(monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    check = sp.probe_backend()
    assert not check.works and check.backend is None and "no CUDA GPU" in check.reason
    assert "none" in check.summary()


def test_linear_sweep_reference_backend_on_cpu():
    shapes = (sp.LinearShape(8, 32, 16, "tiny"), sp.LinearShape(4, 64, 32))
    recs, notes = sp.linear_sweep(shapes, dtypes=("float32",), backends=("reference",), device="cpu",
                                  warmup_s=0.0, min_time_s=0.0, max_time_s=0.2,
                                  unstructured_shape=sp.LinearShape(8, 32, 16, "CSR"))
    kinds = [r["kind"] for r in recs]
    assert kinds.count("sparse") == 2 and kinds.count("compress") == 2 and kinds.count("unstructured") == 1
    assert all(r["derived"]["numerics_ok"] for r in recs if r["kind"] == "sparse")
    from ampere import device

    result = results.make_result("sparsity", device.probe(), {"test": True}, recs, notes)
    table = sp.sweep_table(result)
    assert {r["backend"] for r in table} == {"reference", "torch.sparse CSR"}
    assert all(r["speedup"] > 0 and r["model_bound"] is None for r in table)
    lines = sp.verdict(result)
    assert len(lines) == 1 and "reference" in lines[0] and "target" in lines[0]
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    sp.plot_sweep(ax, result)
    plt.close(fig)
    with pytest.raises(ValueError, match="backend"):
        sp.linear_sweep(shapes, backends=("magic",), device="cpu")
    with pytest.raises(ValueError, match="dtype"):
        sp.linear_sweep(shapes, dtypes=("int4",), backends=("reference",), device="cpu")


def test_linear_sweep_out_of_memory_retries_with_half_the_tokens(monkeypatch):
    # The CPU path treats MemoryError as the GPU path treats torch.cuda.OutOfMemoryError: the failed shape's
    # records are dropped and the shape is measured again with half the tokens.
    real = sp._reference_linear

    def fussy(values, col_idx):
        run = real(values, col_idx)

        def guarded(x):
            if x.shape[0] > 4:
                raise MemoryError("simulated out of memory")
            return run(x)
        return guarded

    monkeypatch.setattr(sp, "_reference_linear", fussy)
    recs, notes = sp.linear_sweep((sp.LinearShape(8, 32, 16, "tiny"),), dtypes=("float32",), backends=("reference",),
                                  device="cpu", warmup_s=0.0, min_time_s=0.0, max_time_s=0.2,
                                  unstructured_shape=None)
    assert {r["tokens"] for r in recs} == {4} and [r["kind"] for r in recs] == ["dense", "compress", "sparse"]
    assert any("out of memory" in n and "4 tokens" in n for n in notes)


def test_linear_sweep_a_failing_backend_is_noted_not_raised(monkeypatch):
    def broken(values, col_idx):
        raise RuntimeError("CUDA error: operation not supported on this shape\nmore detail")

    monkeypatch.setattr(sp, "_reference_linear", broken)
    recs, notes = sp.linear_sweep((sp.LinearShape(8, 32, 16, "tiny"),), dtypes=("float32",), backends=("reference",),
                                  device="cpu", warmup_s=0.0, min_time_s=0.0, max_time_s=0.2,
                                  unstructured_shape=None)
    assert [r["kind"] for r in recs] == ["dense"]  # the backend's partial records are dropped
    assert any(n.startswith("reference failed at 8x32->16") and "not supported on this shape" in n for n in notes)


def test_bench_runs_its_whole_code_path_on_the_cpu(monkeypatch, tmp_path, capsys):
    import json
    import time

    t0 = time.perf_counter()
    assert sp.bench_main(["--device", "cpu", "--quick", "--out", str(tmp_path / "s.json")]) == 0
    assert time.perf_counter() - t0 < 60
    out = capsys.readouterr().out
    assert "no CUDA GPU" in out and "written to" in out
    res = json.loads((tmp_path / "s.json").read_text())
    assert res["device"]["backend"] == "cpu" and res["notes"][0].startswith("CPU code path")
    kinds = [r["kind"] for r in res["records"]]
    assert kinds.count("sparse") == len(sp.CPU_SHAPES) and "unstructured" in kinds
    assert all(r["derived"]["numerics_ok"] for r in res["records"] if r["kind"] == "sparse")
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    res = sp.short_run()
    assert results.validate(res) and res["records"] == [] and res["benchmark"] == "sparsity"
    assert "no CUDA GPU" in res["notes"][0]


def test_claims_rows():
    rows = sp.claims_rows()
    assert {"claim", "source", "verdict", "evidence"} <= set(rows[0])
    assert any(r["verdict"] == "wrong" and "exactly 2" in r["claim"] for r in rows)
    assert next(r for r in rows if r["claim"].startswith("TF32 156"))["verdict"] == "correct (peaks)"
    assert "624" in tables.markdown_table(rows)
    a100 = specs.get("A100-SXM4-80GB")
    assert a100.peak_flops("fp16", sparse=True) == 2 * a100.peak_flops("fp16")
    with pytest.raises(ValueError):
        tables.markdown_table([])


def test_sweep_table_and_verdict_for_a_recorded_a100_result():
    from ampere.timing import Measurement

    def rec(kind, backend, ms, dtype="float16", shape=(16384, 8192, 8192), derived=None):
        n, k, m = shape
        meas = Measurement(label=kind, samples_s=[ms / 1e3] * 10, mode="cuda-events", device="cuda:0")
        return {"tokens": n, "in_features": k, "out_features": m, "label": "", "dtype": dtype,
                "flops": 2.0 * n * k * m, "kind": kind, "backend": backend, "measurement": meas.to_dict(),
                "derived": derived or {}}

    records = [rec("dense", "cublas", 8.0), rec("compress", "cusparselt", 2.0),
               rec("sparse", "cusparselt", 7.0, derived={"rel_err": 1e-3, "numerics_ok": True}),
               rec("dense", "cublas", 0.1, shape=(32, 4096, 4096)),
               rec("sparse", "cusparselt", 0.08, shape=(32, 4096, 4096), derived={"numerics_ok": True})]
    device = {"backend": "cuda", "name": "NVIDIA A100-SXM4-80GB", "compute_capability": [8, 0]}
    result = results.make_result("sparsity", device, {}, records)
    table = {r["shape"].split(" ")[0]: r for r in sp.sweep_table(result)}
    big = table["16384x8192->8192"]
    assert big["speedup"] == pytest.approx(8 / 7) and big["compress_ms"] == pytest.approx(2.0)
    assert big["model_bound"] == pytest.approx(2.0)
    assert 1.7 < table["32x4096->4096"]["model_bound"] < 16 / 9
    (line,) = sp.verdict(result)
    assert "below the 1.2x target" in line and "% of the sparse peak" in line and "is the limit" in line


# --- which backend, from the device probe ------------------------------------------------------------------

def _gpu(name, cc, backends):
    from ampere import device

    return device.DeviceInfo("cuda", name, compute_capability=cc, sparse_2to4_backends=backends,
                             sparse_2to4=bool(backends))


@pytest.mark.parametrize("name, cc, backends, expected", [
    ("NVIDIA A100-SXM4-80GB", (8, 0), ("cutlass", "cusparselt"), ["cusparselt", "cutlass"]),
    ("NVIDIA A100-SXM4-80GB", (8, 0), ("cutlass",), ["cutlass"]),
    ("NVIDIA H100 80GB HBM3", (9, 0), ("cusparselt",), ["cusparselt"]),  # Hopper: no CUTLASS 2:4 kernels
    ("NVIDIA H200", (9, 0), (), []),  # a torch without cuSPARSELt: nothing to try on sm90
    ("Tesla T4", (7, 5), (), []),
])
def test_probe_backend_tries_only_what_the_device_probe_allows(monkeypatch, name, cc, backends, expected):
    tried = []

    def fake_try(backend, dev, dtype):
        tried.append(backend)
        return True, "fake product matches"

    monkeypatch.setattr(sp, "_try_backend", fake_try)
    found = sp.probe_backend(_gpu(name, cc, backends))
    assert tried == expected
    assert found.works == bool(expected) and found.backend == (expected[0] if expected else None)
    if not expected:
        assert ("sparse tensor cores" if cc < (8, 0) else "no 2:4 backend") in found.reason


def test_probe_backend_falls_back_when_the_first_backend_fails(monkeypatch):
    monkeypatch.setattr(sp, "_try_backend", lambda b, dev, dt: (b == "cutlass", f"{b} tried"))
    found = sp.probe_backend(_gpu("NVIDIA A100-SXM4-80GB", (8, 0), ("cutlass", "cusparselt")))
    assert found.backend == "cutlass" and found.working == ["cutlass"] and len(found.tried) == 2
    with pytest.raises(ValueError, match="dtype"):
        sp.probe_backend(_gpu("NVIDIA A100-SXM4-80GB", (8, 0), ("cutlass",)), dtype="float8")


def test_chapter_tables_and_checks():
    block = np.array([[1.5, 0, -2.25, 0]], dtype=np.float16)
    assert sp.block_rows(block) == [{"row": "0", "c0": "1.50", "c1": "0", "c2": "-2.25", "c3": "0"}]
    _, meta = sp.compress_2to4(block)
    assert sp.metadata_rows(meta, 1) == [{"row": "0", "word 0 (uint16)": f"0b{0b1000:016b}",
                                          "positions per group": "(0, 2)"}]
    trips = {r["format"]: r for r in sp.round_trip_rows(rows=32, cols=64)}
    assert all(r["round trip bit-exact"] == "True" for r in trips.values())
    assert trips["fp16 (numpy)"]["storage (of dense)"] == "9/16" and trips["int8 (numpy)"]["storage (of dense)"] == "10/16"
    assert all(sp.compressed_product_checks().values())
    layout = sp.tf32_layout_rows()
    assert layout == [] or layout[0]["storage from PyTorch's arrays"] == "9/16"
    assert all(r["values identical"] == "True" for r in sp.cutlass_agreement_rows())
    peaks = {(r["GPU"], r["precision"]): r for r in sp.peak_table()}
    assert peaks[("A100-SXM4-80GB", "fp16")]["2:4 sparse"] == "623.7" and peaks[("A100-SXM4-80GB", "fp16")]["agrees"] == "yes"
    model = {(r["tokens"], r["kind"]): r for r in sp.time_model_rows(tokens=(1, 16384))}
    assert model[("16384", "2:4")]["bound"] == "compute" and model[("1", "dense")]["bound"] == "memory"
    acc = sp.accuracy_rows()
    assert {r["whose run"] for r in acc} >= {"NVIDIA (table reprinted by PyTorch)", "PyTorch (its own run)"}
    assert not any(r["source"] == "pytorch2023semistructured" for r in acc)  # labels, not bibliography keys
    assert not any(r["source"].startswith("seed") for r in sp.claims_rows())


def test_sparsity_view_without_a_gpu_shows_published_speedups_with_bounds(monkeypatch):
    import matplotlib.pyplot as plt

    from ampere import device, tables

    monkeypatch.setattr(tables, "show_md", lambda text: None)
    monkeypatch.setattr(plt, "show", lambda: None)
    pts = sp.show_sparsity(device.DeviceInfo("cpu", "test CPU"))
    assert pts and {p.kind for p in pts} <= {"recorded", "published"}
    bounded = [p for p in pts if p.model is not None]
    assert bounded and all(1.0 < p.model <= 2.0 and p.real < p.model for p in bounded)  # below the roofline bound
    assert all(p.gpu.startswith("A100") for p in pts if p.kind == "published")
    plt.close("all")


def test_more_public_functions_refuse_bad_input():
    with pytest.raises(ValueError, match="multiple of 4"):
        sp.measure_cpu_unstructured(size=30)
    with pytest.raises(TypeError, match="tokens"):
        sp.measure_cpu_unstructured(size=32, tokens=8.0)
    with pytest.raises(TypeError, match="cfg"):
        sp.asp_experiment({"epochs": 1})
    with pytest.raises(ValueError, match="target"):
        sp.verdict({"records": [], "device": {}}, target=0)
    with pytest.raises(TypeError, match="shape"):
        sp.matmul_time_model("A100-SXM4-80GB", (1, 4096, 4096))

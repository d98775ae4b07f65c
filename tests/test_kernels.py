"""Tests of ampere.kernels: the occupancy calculator against hand-computed cases, the tile, pipeline, L2 and
attention-traffic models, and the Triton kernels against torch in the interpreter."""

from __future__ import annotations

import importlib.util
import math
import os

import pytest

from ampere import kernels, specs

A100, H100 = "A100-SXM4-80GB", "H100-SXM5-80GB"


# --- SM limits and occupancy ------------------------------------------------------------------------

def test_sm_limits_for_every_catalogue_gpu():
    for name in specs.names():
        lim = kernels.sm_limits(name)
        assert lim.max_warps_per_sm * 32 == lim.max_threads_per_sm
        assert lim.max_shared_bytes_per_block <= lim.shared_bytes_per_sm
        occ = kernels.occupancy(name, 128, 32, 0)
        assert 0 < occ.fraction <= 1


def test_shared_memory_per_sm_a100_164_kib_h100_228_kib():
    assert kernels.sm_limits(A100).shared_bytes_per_sm == 164 * 1024
    assert kernels.sm_limits(H100).shared_bytes_per_sm == 228 * 1024
    assert kernels.sm_limits(A100).max_shared_bytes_per_block == 163 * 1024


def test_occupancy_full_when_nothing_binds():
    occ = kernels.occupancy(A100, 256, 32, 0)
    # 32 regs x 32 threads = 1024 per warp; 16384 per sub-partition -> 16 warps x 4 = 64 warps = 8 blocks
    assert occ.blocks_per_sm == 8 and occ.active_warps == 64 and occ.fraction == 1.0
    assert "warps" in occ.limiter


def test_occupancy_register_granularity_a100():
    # 33 registers: 1056 per warp rounds up to 1280 -> 12 warps per sub-partition -> 48 warps -> 12 blocks
    occ = kernels.occupancy(A100, 128, 33, 0)
    assert occ.blocks_per_sm == 12 and occ.fraction == pytest.approx(0.75)
    assert occ.limiter == "registers"
    assert kernels.occupancy(A100, 128, 32, 0).fraction == 1.0  # one register less: full occupancy
    # 64 registers, 256 threads: 2048 per warp -> 8 warps per partition -> 32 warps -> 4 blocks of 8 warps
    occ = kernels.occupancy(A100, 256, 64, 0)
    assert (occ.blocks_per_sm, occ.fraction, occ.limiter) == (4, 0.5, "registers")
    assert occ.registers_per_block == 2048 * 8


def test_occupancy_shared_memory_limited_a100_and_h100():
    # 48 KiB + 1 KiB reserved = 50176 B per block: 167936 // 50176 = 3 on A100, 233472 // 50176 = 4 on H100
    a = kernels.occupancy(A100, 128, 32, 48 * 1024)
    h = kernels.occupancy(H100, 128, 32, 48 * 1024)
    assert (a.blocks_per_sm, a.limiter, a.shared_allocated_bytes) == (3, "shared memory", 50176)
    assert (h.blocks_per_sm, h.limiter) == (4, "shared memory")
    assert a.fraction == pytest.approx(12 / 64) and h.fraction == pytest.approx(16 / 64)
    # the largest block: 163 KiB fits once on A100
    assert kernels.occupancy(A100, 128, 32, 163 * 1024).blocks_per_sm == 1


def test_occupancy_block_cap_and_turing_limits():
    occ = kernels.occupancy(A100, 32, 16, 0)  # 1 warp per block: the 32-block cap binds
    assert occ.blocks_per_sm == 32 and occ.limiter == "blocks" and occ.fraction == 0.5
    t4 = kernels.occupancy("T4", 1024, 32, 0)
    assert t4.max_warps == 32 and t4.blocks_per_sm == 1 and t4.fraction == 1.0


def test_occupancy_refuses_bad_input():
    with pytest.raises(ValueError, match="threads_per_block"):
        kernels.occupancy(A100, 2048, 32, 0)
    with pytest.raises(ValueError, match="registers_per_thread"):
        kernels.occupancy(A100, 128, 256, 0)
    with pytest.raises(ValueError, match="shared_bytes_per_block"):
        kernels.occupancy(A100, 128, 32, 164 * 1024)
    with pytest.raises(ValueError, match="registers per block"):
        kernels.occupancy(A100, 1024, 255, 0)
    with pytest.raises(TypeError, match="threads_per_block"):
        kernels.occupancy(A100, 128.0, 32, 0)
    with pytest.raises(ValueError):
        kernels.occupancy("A200", 128, 32, 0)


# --- tiles, pipeline, Little's law, L2 -----------------------------------------------------------

def test_tile_intensity_and_costs():
    t = kernels.tile_cost(128, 128, 32, stages=3, num_warps=8, dtype_bytes=2)
    assert t.intensity_flop_per_byte == pytest.approx(64.0)  # 2*128*128 / (256*2)
    assert t.shared_bytes == (128 + 128) * 32 * 2 * 3
    assert t.accumulator_registers == 128 * 128 // 256
    assert kernels.tile_cost(256, 128, 32).intensity_flop_per_byte > t.intensity_flop_per_byte
    # intensity does not depend on BK; shared memory does
    assert kernels.tile_cost(128, 128, 64).intensity_flop_per_byte == t.intensity_flop_per_byte
    ridge = specs.get(A100).ridge_point("bf16")
    assert kernels.tile_cost(16, 16, 32).compute_bound(A100) is (16.0 >= ridge)
    assert t.fits(A100)
    assert not kernels.tile_cost(256, 256, 128, stages=4, num_warps=8).fits(A100)
    with pytest.raises(ValueError, match="block_m"):
        kernels.tile_cost(0, 16, 16)


def test_tile_sweep_covers_the_grid():
    sweep = kernels.tile_sweep((32, 64))
    assert len(sweep) == 4 and {(t.block_m, t.block_n) for t in sweep} == {(32, 32), (32, 64), (64, 32), (64, 64)}


def test_pipeline_model():
    one = kernels.pipeline_time(10, 2.0, 1.0, 1)
    assert one.total_s == 30.0 and one.speedup_vs_one_stage == 1.0
    two = kernels.pipeline_time(10, 2.0, 1.0, 2)
    assert two.total_s == pytest.approx(3.0 + 9 * 2.0) and two.bound == "load latency"
    three = kernels.pipeline_time(10, 2.0, 1.0, 3)  # two loads in flight hide the latency
    assert three.total_s == pytest.approx(3.0 + 9 * 1.0) and three.bound == "compute"
    assert three.speedup_vs_one_stage > two.speedup_vs_one_stage > 1
    with pytest.raises(ValueError, match="stages"):
        kernels.pipeline_time(10, 1.0, 1.0, 0)


def test_littles_law():
    assert kernels.bytes_in_flight(2e12, 500e-9) == pytest.approx(1e6)
    with pytest.raises(ValueError, match="latency_s"):
        kernels.bytes_in_flight(1e12, 0.0)


def test_l2_persistence_model():
    l2 = specs.get(A100).l2_bytes
    fits = kernels.l2_persistence(A100, 10e6, 10e6, 0.0, passes=5)
    assert fits.traffic_ratio == 1.0  # everything fits: nothing to gain
    thrash = kernels.l2_persistence(A100, 20e6, 100e6, 20e6, passes=5)
    assert thrash.hbm_bytes_default == pytest.approx(5 * 120e6)
    assert thrash.hbm_bytes_persisting == pytest.approx(120e6 + 4 * 100e6)
    assert thrash.traffic_ratio > 1
    half = kernels.l2_persistence(A100, 20e6, 100e6, 10e6, passes=5)
    assert 1 < half.traffic_ratio < thrash.traffic_ratio
    with pytest.raises(ValueError, match="carveout_bytes"):
        kernels.l2_persistence(A100, 1e6, 1e6, l2 + 1)


# --- attention traffic ----------------------------------------------------------------------------

def test_attention_traffic_counts_and_scaling():
    n, d, m = 1024, 64, 100 * 1024
    assert kernels.attention_hbm_bytes(n, d, m, "standard") == (4 * n * d + 4 * n * n) * 2
    # standard grows as N^2 for N >> d
    r = kernels.attention_hbm_bytes(8 * n, d, m) / kernels.attention_hbm_bytes(4 * n, d, m)
    assert r == pytest.approx(4.0, rel=0.05)
    # flash: N^2 in N, 1/M in the SRAM size, d^2 in the head dimension (large N)
    f = lambda n_, d_, m_: kernels.attention_hbm_bytes(n_, d_, m_, "flash")  # noqa: E731
    assert f(16384, d, m) / f(8192, d, m) == pytest.approx(4.0, rel=0.05)
    assert f(16384, d, m) / f(16384, d, 2 * m) == pytest.approx(2.0, rel=0.05)
    assert f(16384, 128, 4 * m) / f(16384, 64, 4 * m) == pytest.approx(4.0, rel=0.1)
    assert f(n, d, m) < kernels.attention_hbm_bytes(n, d, m, "standard")
    with pytest.raises(ValueError, match="algorithm"):
        kernels.attention_hbm_bytes(n, d, m, "fast")
    with pytest.raises(ValueError, match="sram_bytes"):
        kernels.attention_hbm_bytes(n, d, 100, "flash")
    assert kernels.attention_flops(n, d, causal=True) == 2.0 * n * n * d


# --- chapter helpers -------------------------------------------------------------------------------

def test_min_square_tile_reaches_the_ridge():
    for gpu in (A100, H100):
        b = kernels.min_square_tile(gpu)
        ridge = specs.get(gpu).ridge_point("bf16")
        assert b / 2 >= ridge > (b - 1) / 2
    assert kernels.min_square_tile(A100, "l2") < kernels.min_square_tile(A100, "hbm")
    with pytest.raises(ValueError, match="L2 bandwidth"):
        kernels.min_square_tile(H100, "l2")  # not published for the H100
    with pytest.raises(ValueError, match="level"):
        kernels.min_square_tile(A100, "l1")


def test_occupancy_rows_cover_the_catalogue_and_name_what_cannot_launch():
    rows = kernels.occupancy_rows(256, 64, 16 * 1024)
    assert [r["GPU"] for r in rows] == specs.names()
    big = {r["GPU"]: r for r in kernels.occupancy_rows(128, 32, 120 * 1024)}
    assert big["A100-SXM4-80GB"]["blocks per SM"] == 1
    assert big["T4"]["blocks per SM"] == "-" and "cannot launch" in big["T4"]["limited by"]


def test_attention_roofline_model():
    std = kernels.attention_model_ms(A100, 4, 16, 4096, 64, "standard")
    fl = kernels.attention_model_ms(A100, 4, 16, 4096, 64, "flash")
    spec = specs.get(A100)
    assert std == pytest.approx(1e3 * 64 * kernels.attention_hbm_bytes(4096, 64, 1, "standard") / spec.hbm_bytes_per_s)
    assert fl >= 1e3 * 64 * kernels.attention_flops(4096, 64) / spec.peak_flops("bf16") and fl < std


def test_hierarchy_rows_read_specs():
    rows = kernels.hierarchy_rows((A100,))
    assert [r["level"] for r in rows] == ["registers", "shared memory / L1", "L2", "HBM"]
    assert "164 KiB shared" in rows[1]["capacity"] and "163 KiB per block" in rows[1]["capacity"]
    assert "estimate quoted by Dao et al." in rows[1]["bandwidth"]  # published record, with its source
    assert kernels.hierarchy_rows(("T4",))[1]["bandwidth"] == "not published"


def test_views_show_the_model_without_a_gpu(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from ampere import device, tables

    shown = []
    monkeypatch.setattr(tables, "show_md", lambda text: shown.append(text))
    info = device.probe(force="cpu")
    kernels.show_matmul(info)
    kernels.show_attention(info)
    if importlib.util.find_spec("torch") is not None:
        kernels.show_profile(info)
    text = "\n".join(shown)
    for hollow in ("recorded yet", "Nothing is", "No GPU", "appears when"):  # the page never says what is missing
        assert hollow not in text
    assert "best bf16 matmul (cuBLAS)" in text and "MAMF" in text  # published, with where it comes from
    assert "roofline model" in text and "GPT-2 medium" in text  # the published paper's measurement
    # without a GPU the profiler still runs: the naive attention's CPU operators, labelled as the CPU's
    if importlib.util.find_spec("torch") is not None:
        assert "profiled on the CPU that ran this page" in text and "aten::bmm" in text
        assert "aten::_softmax" in text


# --- Triton kernels in the interpreter ------------------------------------------------------------

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # Triton reads this when it is first imported
    os.environ["TRITON_INTERPRET"] = "1"
pytest.importorskip("triton")


def _dev():
    return "cpu" if kernels.interpreting() else "cuda"


@pytest.mark.parametrize("m,k,n", [(37, 45, 29), (64, 32, 64), (1, 17, 3)])
def test_matmul_matches_torch_on_ragged_shapes(m, k, n):
    g = torch.Generator().manual_seed(m + k + n)
    a = torch.randn(m, k, generator=g).to(_dev())
    b = torch.randn(k, n, generator=g).to(_dev())
    c = kernels.matmul(a, b, block_m=16, block_n=32, block_k=16)
    assert c.shape == (m, n) and c.dtype == a.dtype
    tol = 2e-5 if kernels.interpreting() else 2e-2
    assert float((c - a @ b).abs().max()) <= tol * max(1.0, float((a @ b).abs().max()))


def test_matmul_refuses_bad_input():
    a = torch.zeros(4, 5)
    with pytest.raises(ValueError, match="inner dimensions"):
        kernels.matmul(a, torch.zeros(4, 5))
    with pytest.raises(ValueError, match="block_k"):
        kernels.matmul(a, torch.zeros(5, 4), block_k=24)
    with pytest.raises(TypeError, match="a must be a torch.Tensor"):
        kernels.matmul([[1.0]], torch.zeros(1, 1))
    with pytest.raises(ValueError, match="dimensions"):
        kernels.matmul(torch.zeros(3), torch.zeros(3, 1))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq,d", [(37, 16), (50, 24)])
def test_flash_attention_matches_sdpa(causal, seq, d):
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(seq * d)
    q, k, v = (torch.randn(2, 2, seq, d, generator=g).to(_dev()) for _ in range(3))
    o = kernels.flash_attention(q, k, v, causal=causal, block_m=16, block_n=16)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    tol = 1e-5 if kernels.interpreting() else 2e-2
    assert float((o - ref).abs().max()) < tol
    naive = kernels.naive_attention(q, k, v, causal=causal)
    assert float((naive - ref).abs().max()) < 1e-4


def test_flash_attention_refuses_bad_input():
    q = torch.zeros(1, 1, 8, 16)
    with pytest.raises(ValueError, match="one shape"):
        kernels.flash_attention(q, q, torch.zeros(1, 1, 9, 16))
    with pytest.raises(ValueError, match="4 dimensions"):
        kernels.flash_attention(torch.zeros(8, 16), q, q)
    with pytest.raises(TypeError, match="causal"):
        kernels.flash_attention(q, q, q, causal="yes")


cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU code path runs in a process without a GPU")


@cpu_only
def test_bench_runs_the_whole_path_on_the_cpu(capsys):
    assert kernels.bench_main(["--device", "cpu", "--quick", "--no-save"]) == 0
    out = capsys.readouterr().out
    assert "Triton FlashAttention" in out and "matmul-triton" in out


@cpu_only
def test_bench_result_is_marked_cpu(tmp_path):
    from ampere import results

    assert kernels.bench_main(["--device", "cpu", "--quick", "--out", str(tmp_path) + "/"]) == 0
    files = list(tmp_path.glob("kernels-*.json"))
    assert len(files) == 1
    res = results.load(files[0])
    assert res["device"]["backend"] == "cpu" and res["benchmark"] == "kernels"
    kinds = {r["kind"] for r in res["records"]}
    assert {"matmul-torch", "matmul-triton", "attention-triton-flash", "attention-naive", "attention-sdpa"} <= kinds
    assert all(r["max_rel_error"] < 1e-4 for r in res["records"] if r["kind"] == "matmul-triton")
    assert not results.records(benchmark="kernels", kind="measured")  # CPU results never count as GPU records
    assert math.isfinite(res["records"][0]["tflops"])


def test_without_triton_the_bench_says_so_and_the_models_still_work(monkeypatch, capsys):
    monkeypatch.setattr(kernels, "triton_available", lambda: False)
    assert kernels.bench_main(["--device", "cpu", "--quick", "--no-save"]) == 2
    assert "triton is not installed" in capsys.readouterr().out
    assert kernels.occupancy(A100, 128, 32, 0).fraction == 1.0  # the models need neither triton nor torch


def test_published_l2_read_comes_from_the_data():
    bw, rec = kernels.published_l2_read(A100)
    assert rec.benchmark == "l2-sweep" and rec.kind == "published"
    assert 0.5 * specs.get(A100).l2_bytes_per_s < bw <= specs.get(A100).l2_bytes_per_s
    assert kernels.published_l2_read("T4") is None


def test_views_show_recorded_gpu_results(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from ampere import device, results, tables

    common = {"kind": "measured", "benchmark": "kernels", "gpu": A100, "source": "kernels-a100-sxm4-80gb.json",
              "where": "recorded on NVIDIA A100-SXM4-80GB (sm80), 2026-12-01, torch 2.13.0", "date": "2026-12-01"}
    recs = [results.Record(figures={"tflop_per_s": 280.0, "time_ms": 0.49}, id="k#0", **common,
                           params={"kind": "matmul-torch", "m": 4096, "n": 4096, "k": 4096}),
            results.Record(figures={"tflop_per_s": 230.0, "time_ms": 0.6}, id="k#1", **common,
                           params={"kind": "matmul-triton", "m": 4096, "block_m": 128, "block_n": 128, "block_k": 64,
                                   "num_stages": 3}),
            results.Record(figures={"tflop_per_s": 100.0, "time_ms": 1.4}, id="k#2", **common,
                           params={"kind": "attention-triton-flash", "batch": 4, "heads": 16, "seq": 4096,
                                   "head_dim": 64})]
    monkeypatch.setattr(results, "records", lambda **kw: [r for r in recs if kw.get("kind") in (None, r.kind)])
    shown = []
    monkeypatch.setattr(tables, "show_md", lambda text: shown.append(text))
    info = device.probe(force="cpu")
    kernels.show_matmul(info)
    kernels.show_attention(info)
    text = "\n".join(shown)
    assert "recorded yet" not in text  # recorded results replace the model-only fallback
    assert "Triton 128x128x64, 3 st., 4096^3" in text and "cuBLAS, 4096^3" in text and "| 280 |" in text
    assert "Triton flash, N=4096" in text and "1.400" in text and "recorded on NVIDIA A100" in text


def test_published_flashattention_pair():
    recs = kernels.published_attention()
    assert [r.params["algorithm"] for r in recs] == ["standard", "flash"]
    assert all(r.source == "dao2022flashattention" and "Figure 2" in r.where for r in recs)
    time_ratio, traffic_ratio = kernels.published_flash_ratios()
    assert 1 < time_ratio < traffic_ratio  # fewer bytes, faster, but not by the full traffic ratio


def test_compiled_resources_count_the_cp_async_copies_in_the_ptx():
    from types import SimpleNamespace

    ptx = ("cp.async.cg.shared.global [%r1], [%rd2], 16;\n cp.async.ca.shared.global [%r3], [%rd4], 4;\n"
           "cp.async.commit_group;\n cp.async.wait_group 1;\n ld.global.v4.b32 {%r5}, [%rd6];\n")
    kernel = SimpleNamespace(n_regs=128, metadata=SimpleNamespace(shared=98304), asm={"ptx": ptx})
    assert kernels._compiled_resources(kernel) == {"registers_per_thread": 128, "shared_bytes": 98304,
                                                   "cp_async_in_ptx": 2}  # commit/wait are not copies
    kernel = SimpleNamespace(n_regs=64, metadata=SimpleNamespace(shared=0), asm={"ptx": "ld.global.b32 %r1;"})
    assert kernels._compiled_resources(kernel)["cp_async_in_ptx"] == 0
    assert kernels._compiled_resources(SimpleNamespace()) == {}  # the interpreter: nothing compiled

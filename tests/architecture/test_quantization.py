"""ampere.architecture.quantization: the staircase, the three roofs and steps of many small kernels."""

import pytest

from ampere import architecture as arch
from ampere import gemm, results, specs


def test_launch_overhead_is_bytes_per_call_over_the_best_published_rate():
    (rec,) = results.records(benchmark="kernel-launch", gpu="A100-SXM4-80GB")
    for graph, fig in ((False, "stream_gb_per_s"), (True, "graph_gb_per_s")):
        assert arch.launch_overhead_s(graph) == pytest.approx(rec.params["bytes_per_call"] / max(rec.figure(fig)) / 1e9)
    # a CUDA graph halves the floor of a tiny kernel on the A100: about 2.6 us against 1.3 us
    assert 2.5e-6 < arch.launch_overhead_s() < 2.7e-6 and 1.2e-6 < arch.launch_overhead_s(graph=True) < 1.4e-6
    with pytest.raises(TypeError, match="graph"):
        arch.launch_overhead_s(graph=1)


def test_launch_table_names_the_gpu_and_the_cuda_version_of_each_measurement():
    rows = arch.launch_overheads()
    assert [r["GPU"] for r in rows] == ["A100-SXM4-80GB"] * 2 + ["V100-SXM2-16GB, CUDA 10.1"] * 3
    v100 = {r["launched"]: float(r["time per kernel (us)"]) for r in rows[2:]}
    # Gray's figures: the graph removes part of the overhead, not most of it
    assert v100["synchronised after each"] > v100["back to back in a stream"] > v100["from a CUDA graph"] > 2.9
    assert all(r["source"] and "gray" not in r["source"] for r in rows)  # labels, never bib keys


def test_staircase_drops_by_a_wave_at_every_multiple_of_the_sm_count():
    a100 = specs.get("A100-SXM4-80GB")
    rows = arch.staircase(a100, [2304, 2305, 4608, 4609], m=1536, k=4096)
    # 1536/256 = 6 rows of tiles; 2304/128 = 18 columns: 108 tiles = one full wave
    assert [r["tiles"] for r in rows] == [108, 114, 216, 222] and [r["waves"] for r in rows] == [1, 2, 2, 3]
    assert rows[0]["pct_of_peak"] == pytest.approx(100.0) and rows[2]["pct_of_peak"] == pytest.approx(100.0)
    assert rows[1]["pct_of_peak"] == pytest.approx(100 * 2305 / (2 * 2304))
    for r in rows:  # the model is peak x wave_efficiency
        eff = gemm.wave_efficiency(1536, r["n"], 256, 128, sms=108)
        assert r["tflops"] == pytest.approx(a100.peak_flops("fp16") / 1e12 * eff)
    with pytest.raises(ValueError, match="precision"):
        arch.staircase("V100-SXM2-32GB", [128], 128, 128, precision="bf16")
    with pytest.raises(ValueError, match="ns"):
        arch.staircase(a100, [], 128, 128)
    with pytest.raises(TypeError, match="ns"):
        arch.staircase(a100, [128.0], 128, 128)


def test_three_roofs_small_matmuls_are_overhead_bound_and_large_ones_compute_bound():
    small, large = arch.three_roofs("A100-SXM4-80GB", 256), arch.three_roofs("A100-SXM4-80GB", 8192)
    t = arch.launch_overhead_s()
    assert small["bound"] == "overhead" and large["bound"] == "compute"
    assert small["overhead"] == pytest.approx(2 * 256 ** 3 / t / 1e12)
    assert small["memory"] == pytest.approx(256 / 3 * 2039e9 / 1e12)
    assert large["attainable"] == pytest.approx(311.86944)
    # crossing: 2 n^3 / t = peak -> n = (peak t / 2)^(1/3), about 740 on an A100 at 2.6 us
    n_cross = (311.86944e12 * t / 2) ** (1 / 3)
    assert arch.three_roofs("A100-SXM4-80GB", int(n_cross) - 8)["bound"] == "overhead"
    assert arch.three_roofs("A100-SXM4-80GB", int(n_cross) + 8)["bound"] == "compute"
    assert arch.three_roofs("A100-SXM4-80GB", 256, launch_s=1e-9)["bound"] == "memory"
    with pytest.raises(ValueError, match="launch_s"):
        arch.three_roofs("A100-SXM4-80GB", 256, launch_s=0.0)


def test_overhead_step_time():
    out = arch.overhead_step_time([1e-6] * 10 + [100e-6], launch_s=4e-6)
    assert out["step_s"] == pytest.approx(140e-6) and out["kernel_s"] == pytest.approx(110e-6)
    assert out["overhead_share"] == pytest.approx(30 / 140)
    assert arch.overhead_step_time([1.0])["overhead_share"] == 0.0
    with pytest.raises(ValueError, match="kernel_seconds"):
        arch.overhead_step_time([])
    with pytest.raises(ValueError, match="kernel_seconds"):
        arch.overhead_step_time([-1.0])

"""ampere.architecture.execution: schedulers, divergence, Little's law, occupancy (checked against the CUDA
Programming Guide's own numbers and against the full occupancy calculator of the kernels chapter)."""

import pytest

from ampere import architecture as arch


def test_issue_model_of_the_a100_follows_from_the_specs():
    m = arch.issue_model("A100-SXM4-80GB")
    assert m["schedulers per SM"] == 4 and m["FP32 lanes per scheduler"] == 16
    assert m["clocks per warp FP32 instruction"] == 2.0  # 32 threads on 16 lanes
    assert m["max resident warps per SM"] == 64 and m["max resident warps per scheduler"] == 16
    assert m["warp instructions per second (GPU)"] == pytest.approx(4 * 108 * 1.41e9)
    ga102 = arch.issue_model("RTX-A6000")
    assert ga102["FP32 lanes per scheduler"] == 32 and ga102["max resident warps per SM"] == 48


def test_branch_cycles_sums_the_taken_paths():
    assert arch.branch_cycles([32, 0], [10, 30]) == {"cycles": 10, "simt_efficiency": 1.0}
    assert arch.branch_cycles([0, 32], [10, 30])["cycles"] == 30
    both = arch.branch_cycles([16, 16], [10, 30])
    assert both["cycles"] == 40 and both["simt_efficiency"] == pytest.approx((16 * 10 + 16 * 30) / (32 * 40))
    one_lane = arch.branch_cycles([1, 31], [100, 0])
    assert one_lane["cycles"] == 100 and one_lane["simt_efficiency"] == pytest.approx(1 / 32)
    with pytest.raises(ValueError, match="warp size"):
        arch.branch_cycles([16, 15], [1, 1])
    with pytest.raises(ValueError, match="same length"):
        arch.branch_cycles([32], [1, 1])
    with pytest.raises(TypeError, match="lanes_per_path"):
        arch.branch_cycles([True, 31], [1, 1])


def test_divergence_expected_limits_and_symmetry():
    for p in (0.0, 1.0):
        assert arch.divergence_expected(p, 10, 30)["slowdown"] == pytest.approx(1.0)
    half = arch.divergence_expected(0.5, 20, 20)
    assert half["cycles"] == pytest.approx(40, rel=1e-6) and half["slowdown"] == pytest.approx(2.0, rel=1e-6)
    assert arch.divergence_expected(0.5, 20, 20, coherent=True) == {"cycles": 20.0, "slowdown": 1.0}
    # one thread in a hundred taking an expensive path: a warp still pays it 28 % of the time
    rare = arch.divergence_expected(0.01, 100, 10)
    assert rare["cycles"] == pytest.approx(100 * (1 - 0.99 ** 32) + 10 * (1 - 0.01 ** 32))
    assert arch.divergence_expected(0.3, 5, 7)["slowdown"] == pytest.approx(
        arch.divergence_expected(0.7, 7, 5)["slowdown"])
    with pytest.raises(ValueError, match="p_taken"):
        arch.divergence_expected(1.5, 1, 1)
    with pytest.raises(TypeError, match="coherent"):
        arch.divergence_expected(0.5, 1, 1, coherent=1)


def test_littles_law_reproduces_the_programming_guide():
    # "4 clock cycles ... 16 active warps per multiprocessor (4 cycles, 4 warp schedulers)"
    assert arch.arithmetic_latency_cycles() == 4
    assert arch.warps_to_hide(arch.arithmetic_latency_cycles()) == 16
    assert arch.warps_to_hide(4, ilp=2) == 8 and arch.warps_to_hide(400) == 1600
    assert arch.issue_utilization(16, 4) == 1.0 and arch.issue_utilization(8, 4) == 0.5
    assert arch.issue_utilization(8, 4, ilp=2) == 1.0 and arch.issue_utilization(0, 4) == 0.0
    assert arch.issue_utilization(64, 400) == pytest.approx(64 / 1600)
    with pytest.raises(ValueError, match="warps_per_sm"):
        arch.issue_utilization(65, 4)
    with pytest.raises(ValueError, match="latency_cycles"):
        arch.warps_to_hide(0)
    with pytest.raises(TypeError, match="ilp"):
        arch.warps_to_hide(4, ilp=1.5)


def test_resident_warps_register_and_shared_memory_limits():
    r = arch.resident_warps("A100-SXM4-80GB", 256, 32)
    assert r["blocks"] == 8 and r["warps"] == 64 and r["occupancy"] == 1.0 and "warps" in r["limiter"]
    r = arch.resident_warps("A100-SXM4-80GB", 256, 64)
    assert r["blocks"] == 4 and r["warps"] == 32 and r["limiter"] == "registers"
    r = arch.resident_warps("A100-SXM4-80GB", 128, 32, 64 * 1024)
    assert r["blocks"] == 2 and r["limiter"] == "shared memory"
    r = arch.resident_warps("A100-SXM4-80GB", 32, 16)
    assert r["blocks"] == 32 and r["warps"] == 32 and r["limiter"] == "blocks"
    with pytest.raises(ValueError, match="registers"):
        arch.resident_warps("A100-SXM4-80GB", 1024, 255)
    with pytest.raises(ValueError, match="threads_per_block"):
        arch.resident_warps("A100-SXM4-80GB", 2048, 32)
    with pytest.raises(TypeError, match="registers_per_thread"):
        arch.resident_warps("A100-SXM4-80GB", 256, 32.0)


@pytest.mark.parametrize("gpu", ["A100-SXM4-80GB", "H100-SXM5-80GB", "RTX-A6000", "V100-SXM2-32GB"])
@pytest.mark.parametrize("threads,regs,smem", [(256, 32, 0), (256, 64, 0), (128, 128, 0), (512, 40, 0),
                                               (1024, 32, 0), (64, 168, 0), (256, 32, 31 * 1024)])
def test_resident_warps_agrees_with_the_full_occupancy_calculator(gpu, threads, regs, smem):
    """Where the allocation units do not bite (registers multiples of 8, shared memory leaving room for the
    1 KB reservation), the textbook rule and the CUDA calculator of the kernels chapter agree."""
    from ampere.kernels import occupancy

    full = occupancy(gpu, threads, regs, smem)
    assert arch.resident_warps(gpu, threads, regs, smem)["blocks"] == full.blocks_per_sm

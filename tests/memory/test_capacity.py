"""The one capacity rule: CUDA-visible bytes minus the runtime reserve (ampere/memory/capacity.py; chapter: HBM,
"What fits")."""

import math

import pytest

from ampere import memory as mem
from ampere import specs
from ampere import transformer as tr


# What CUDA exposes on an A100-SXM4-80GB (deviceQuery, ampere/data/tables/gpu_memory.json): the capacity
# every test below budgets against, not the physical 80 GiB.
A100_80_CUDA = 85_100_068_864


def test_fits_and_counts():
    a100 = specs.get("A100-SXM4-80GB")
    assert a100.memory_bytes == 80 * 2**30 and mem.cuda_visible_bytes(a100) == A100_80_CUDA
    assert mem.max_trainable_params(a100, reserve_bytes=0) == A100_80_CUDA / 16  # 5.32e9
    assert mem.max_trainable_params(a100) == pytest.approx(0.95 * A100_80_CUDA / 16)  # default 5 % reserve
    assert mem.runtime_reserve(a100) == pytest.approx(0.05 * A100_80_CUDA)
    assert mem.usable_bytes(a100) == pytest.approx(0.95 * A100_80_CUDA)
    assert mem.max_trainable_params(a100, reserve_bytes=0.04 * A100_80_CUDA) == pytest.approx(
        0.96 * A100_80_CUDA / 16)
    with pytest.raises(ValueError, match="fraction"):
        mem.runtime_reserve(a100, 1.5)
    usable = mem.usable_bytes(a100)
    assert mem.gpus_to_hold(2 * usable, a100) == 2 and mem.gpus_to_hold(2 * usable + 1e3, a100) == 3
    assert mem.gpus_to_hold(160e9, a100) == 2  # 160 / 80.85 = 1.98
    assert mem.gpus_to_hold(0, a100) == 1
    with pytest.raises(ValueError, match="reserve_bytes"):
        mem.gpus_to_hold(1e9, a100, reserve_bytes=A100_80_CUDA)
    with pytest.raises(ValueError, match="leaves no capacity"):
        mem.usable_bytes(a100, reserve_bytes=A100_80_CUDA + 1)
    # 70B in mixed-precision Adam: 1120 GB; ZeRO-3 over N A100-80GB needs ceil(1120 / 80.85) = 14
    assert mem.min_gpus_zero(70e9, a100, 3) == 14
    assert mem.min_gpus_zero(70e9, a100, 1) is None  # 4 bytes/param of weights+grads stay: 280 GB > 80 GB
    assert mem.min_gpus_zero(3e9, a100, 1) == math.ceil(3e9 * 12 / (usable - 3e9 * 4))
    b = mem.max_batch("llama2-7b", a100, context=4096)
    free = usable - 2 * 6_738_415_616
    assert b == math.floor(free / (2 * 32 * 4096 * 2 * 4096))
    assert mem.max_batch("llama2-70b", "A100-SXM4-40GB", context=4096) == 0
    with pytest.raises(ValueError, match="context"):
        mem.max_batch("llama2-7b", a100, context=0)
    with pytest.raises(ValueError, match="stage"):
        mem.min_gpus_zero(1e9, a100, 7)


def test_gpus_to_hold_and_limits_by_hand():
    # usable = 0.95 x CUDA total: A100 80GB 0.95 x 85.10e9 = 80.85e9; A100 40GB 0.95 x 42.30e9 = 40.18e9
    assert mem.gpus_to_hold(350e9, "A100-SXM4-80GB") == 5  # 350 / 80.85 = 4.33 -> 5
    assert mem.gpus_to_hold(350e9, "A100-SXM4-40GB") == 9  # 350 / 40.18 = 8.71 -> 9
    with pytest.raises(ValueError, match="leaves no capacity"):
        mem.gpus_to_hold(1e9, "T4", reserve_bytes=16e9)  # CUDA exposes 15.66e9 bytes of the T4's 16 GiB
    # 70B int8 (68.98 GB) in 80.85 GB: 11.87 GB left / (4096 x 327,680 bytes = 1.342 GB per sequence) -> 8
    assert mem.max_batch("70B", "A100-SXM4-80GB", context=4096, weights="int8") == 8
    a2000 = specs.get("RTX-A2000-12GB")  # no published CUDA total: the catalogue's conservative estimate
    assert a2000.cuda_memory_estimated and a2000.cuda_visible_bytes < a2000.memory_bytes == 12 * 2**30
    assert mem.max_trainable_params(a2000, reserve_bytes=0) == a2000.cuda_visible_bytes / 16
    # ZeRO-3: 175e9 x 16 bytes = 2.8 TB over 80.85 GB -> 34.6 -> 35; stage 1 keeps 700 GB whole: never
    assert mem.min_gpus_zero(175e9, "A100-SXM4-80GB", 3) == 35
    assert mem.min_gpus_zero(175e9, "A100-SXM4-80GB", 1) is None
    # 7.5B, stage 1, A100 40GB: 30 GB fixed, 90 GB shared -> 90 / (40.18 - 30) = 8.8 -> 9 GPUs
    assert mem.min_gpus_zero(7.5e9, "A100-SXM4-40GB", 1) == 9


RULE_GPUS = ["A100-SXM4-80GB", "A100-SXM4-40GB", "H100-SXM5-80GB", "H200-SXM-141GB", "T4", "L4", "V100-SXM2-32GB"]


def _answers_at_the_boundary(gpu, usable, reserve_bytes=None):
    """Every 'fits' function of ampere.memory asked a question whose answer flips at ``usable`` bytes."""
    kw = {} if reserve_bytes is None else {"reserve_bytes": reserve_bytes}
    just = mem.MemoryEstimate("inference", 1.0, {"weights": usable})
    over = mem.MemoryEstimate("inference", 1.0, {"weights": usable * (1 + 1e-9)})
    shape = tr.preset("llama2-7b")
    per_seq = mem.kv_cache_bytes(shape, 4096)
    weights = mem.weight_bytes(shape.params, "bf16")
    return {
        "headroom": just.headroom_bytes(gpu, **kw),
        "fits": (just.fits(gpu, **kw), over.fits(gpu, **kw)),
        "gpus_needed": (just.gpus_needed(gpu, **kw), over.gpus_needed(gpu, **kw)),
        "gpus_to_hold": (mem.gpus_to_hold(2 * usable, gpu, **kw), mem.gpus_to_hold(2 * usable * (1 + 1e-9), gpu, **kw)),
        "max_trainable_params": mem.max_trainable_params(gpu, **kw) * 16,
        "min_gpus_zero": mem.min_gpus_zero(3 * usable / 16, gpu, 3, **kw),
        "max_batch": mem.max_batch(shape, gpu, context=4096, **kw),
        "max_batch_expected": max(0, math.floor((usable - weights) / per_seq)),
    }


def _assert_one_rule(answers, usable):
    assert answers["headroom"] == pytest.approx(0, abs=1e-3 * usable)
    assert answers["fits"] == (True, False)
    assert answers["gpus_needed"] == (1, 2)
    assert answers["gpus_to_hold"] == (2, 3)
    assert answers["max_trainable_params"] == pytest.approx(usable, rel=1e-12)
    assert answers["min_gpus_zero"] == 3
    assert answers["max_batch"] == answers["max_batch_expected"]


@pytest.mark.parametrize("gpu", RULE_GPUS)
def test_every_fits_function_uses_the_one_reserve_rule(gpu, monkeypatch):
    visible = mem.cuda_visible_bytes(gpu)
    assert visible == specs.get(gpu).cuda_visible_bytes
    # the default: RESERVE_FRACTION of what CUDA exposes
    usable = mem.usable_bytes(gpu)
    assert usable == pytest.approx(visible * (1 - mem.RESERVE_FRACTION))
    _assert_one_rule(_answers_at_the_boundary(gpu, usable), usable)
    # an explicit reserve is taken from the same CUDA-visible total by every function
    reserve = 0.25 * visible
    _assert_one_rule(_answers_at_the_boundary(gpu, visible - reserve, reserve), visible - reserve)
    # the default is read when called: changing RESERVE_FRACTION moves every function together
    monkeypatch.setattr(mem.capacity, "RESERVE_FRACTION", 0.2)  # patched where it is read
    usable = mem.usable_bytes(gpu)
    assert usable == pytest.approx(0.8 * visible) and mem.runtime_reserve(gpu) == pytest.approx(0.2 * visible)
    _assert_one_rule(_answers_at_the_boundary(gpu, usable), usable)


@pytest.mark.parametrize("gpu", specs.names())
def test_usable_below_cuda_visible_below_physical(gpu):
    spec = specs.get(gpu)
    usable, visible = mem.usable_bytes(spec), mem.cuda_visible_bytes(spec)
    assert 0 < usable < visible < spec.memory_bytes
    if spec.memory_stacks is not None and spec.cuda_memory_bytes is not None:  # HBM cards, all figures known
        assert visible == spec.cuda_memory_bytes
        assert visible / spec.memory_bytes > 0.98  # the driver keeps well under 2 % of an HBM card


def test_reserve_arguments_are_checked():
    with pytest.raises(ValueError, match="reserve_bytes"):
        mem.usable_bytes("A100-SXM4-80GB", reserve_bytes=-1)
    with pytest.raises(TypeError, match="reserve_bytes"):
        mem.model_memory(7e9).fits("A100-SXM4-80GB", reserve_bytes="2e9")
    with pytest.raises(ValueError, match="fraction"):
        mem.runtime_reserve("A100-SXM4-80GB", -0.1)
    with pytest.raises(ValueError, match="gpu"):
        mem.usable_bytes("A100-SXM4-160GB")

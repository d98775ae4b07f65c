"""Tests of ampere.cluster.pod: the SuperPOD: counts, peaks, power.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

import pytest

from ampere import cluster as cl
from ampere import specs


def test_reference_superpod_counts():
    pod = cl.superpod(140)
    assert (pod.gpus, pod.scalable_units) == (1120, 7)
    assert (pod.leaf_switches, pod.spine_switches, pod.core_switches) == (56, 56, 40)
    assert pod.cables == {"node_leaf": 1120, "leaf_spine": 1120, "spine_core": 1120}
    assert cl.switch_lower_bound(140) == {"leaf": 56, "spine": 56, "core": 28}


def test_superpod_bad_input_names_the_field():
    with pytest.raises(ValueError, match="nodes"):
        cl.superpod(0)
    with pytest.raises(ValueError, match="switch_ports"):
        cl.superpod(140, switch_ports=36)
    with pytest.raises(ValueError, match="switch_power_w"):
        cl.superpod(140, switch_power_w=-1)


def test_superpod_peaks_and_power():
    pod = cl.superpod(140, "A100-SXM4-40GB")
    a100 = specs.get("A100-SXM4-40GB")
    assert pod.peak_flops("fp16", sparse=True) == pytest.approx(1120 * a100.peak_flops("fp16", sparse=True))
    assert pod.peak_flops("fp16", sparse=True) / 1e15 == pytest.approx(698.6, abs=0.1)  # "700 PFLOPS"
    assert pod.peak_flops("fp16") / 1e15 == pytest.approx(349.3, abs=0.1)
    assert pod.peak_flops("fp64_tc") / 1e15 == pytest.approx(21.8, abs=0.05)
    assert pod.power_w == pytest.approx(140 * 6500 + pod.switches * cl.SWITCH_POWER_W_ASSUMED)
    assert cl.superpod(140, switch_power_w=0).power_w == 140 * 6500
    assert pod.bisection_bytes_per_s == pytest.approx(14e12)
    assert pod.gpu_memory_bytes == 1120 * 40 * 2**30  # physical HBM, binary units


def test_scaling_table_rows():
    rows = cl.scaling_table([20, 140, 560])
    assert [r["gpus"] for r in rows] == [160, 1120, 4480]
    assert [r["levels"] for r in rows] == [2, 3, 3]
    for r in rows:
        assert r["switches"] == r["leaf"] + r["spine"] + r["core"] >= r["lower_bound"]


def test_numpy_integers_accepted_and_bad_types_refused():
    import numpy as np

    assert cl.superpod(np.int64(140)).gpus == 1120
    assert cl.fat_tree(np.int32(20)).leaf_switches == 8
    with pytest.raises(TypeError, match="nodes must be an integer"):
        cl.superpod(140.0)
    with pytest.raises(TypeError, match="nodes must be an integer"):
        cl.fat_tree(True)
    with pytest.raises(TypeError, match="utilization must be a number"):
        cl.ownership_usd_per_gpu_hour(cl.Ownership(), "0.5")

"""ampere.mig.compute_instances: the compute-instance profiles a GPU instance admits."""

from __future__ import annotations

import pytest

from ampere import mig, specs

A40 = "A100-SXM4-40GB"


def test_the_guides_examples_are_reproduced():
    # Getting Started, nvidia-smi mig -lcip -gi 1 on a 3g.20gb GI: 1c x 3 (14 SMs), 2c x 1 (28), 3g x 1 (42)
    got = [(c.name, c.sms, c.max_count) for c in mig.compute_instance_profiles(A40, "3g.20gb")]
    assert got == [("1c.3g.20gb", 14, 3), ("2c.3g.20gb", 28, 1), ("3g.20gb", 42, 1)]
    # Concepts: a 4g.20gb GI admits 1c, 2c, 3c and the whole GI (4c, named 4g.20gb)
    assert [c.name for c in mig.compute_instance_profiles(A40, "4g.20gb")] == [
        "1c.4g.20gb", "2c.4g.20gb", "3c.4g.20gb", "4g.20gb"]
    # MIG Device Names: 1c.7g.40gb, 2c.7g.40gb and 3c.7g.40gb together on one 7g.40gb GI (6 of its 7 slices)
    seven = {c.name: c for c in mig.compute_instance_profiles(A40, "7g.40gb")}
    assert sum(seven[n].compute_slices for n in ("1c.7g.40gb", "2c.7g.40gb", "3c.7g.40gb")) <= 7


@pytest.mark.parametrize("gpu", ["A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"])
def test_properties_on_every_gi_profile(gpu):
    spec = specs.get(gpu)
    for gi in mig.profiles(gpu):
        cis = mig.compute_instance_profiles(gpu, gi.name)
        sizes = [c.compute_slices for c in cis]
        assert sizes == sorted(set(sizes)) and sizes[-1] == gi.compute_slices  # smallest first, whole GI last
        assert cis[-1].whole_gpu_instance and cis[-1].name == gi.name and cis[-1].max_count == 1
        assert cis[-1].sms == gi.sm_count
        for c in cis:
            assert c.gpu_instance == gi.name and c.max_count * c.compute_slices <= gi.compute_slices
            assert (c.max_count + 1) * c.compute_slices > gi.compute_slices  # as many as fit, no more
            # every CI of a GI shares the GI's memory
            assert c.memory_shared_gib == pytest.approx(spec.memory_bytes * float(gi.memory_fraction) / 2**30)
            if c.sms is not None and not c.whole_gpu_instance:
                assert c.sms == c.compute_slices * mig.table(gpu).sms_per_compute_slice
        if gi.compute_slices == 1:
            assert len(cis) == 1  # a one-slice GI (1g, +me, the two-slice-memory 1g) is its own only CI


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="gpu_instance must be one of"):
        mig.compute_instance_profiles(A40, "3g.40gb")  # the 80GB name on the 40GB card
    with pytest.raises(TypeError, match="gpu_instance"):
        mig.compute_instance_profiles(A40, 3)
    with pytest.raises(ValueError, match="no MIG"):
        mig.compute_instance_profiles("RTX-A6000", "1g.5gb")
    # a Profile object is accepted for its name
    assert mig.compute_instance_profiles(A40, mig.profile(A40, "2g.10gb"))[-1].name == "2g.10gb"

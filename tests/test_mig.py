"""ampere.mig: profile tables, placements, validate/enumerate_layouts, the isolation model, NVML, costs."""

from __future__ import annotations

import ctypes
import re
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

from ampere import mig, specs

A40 = "A100-SXM4-40GB"
A80 = "A100-SXM4-80GB"
ALL_MIG = ["A100-SXM4-40GB", "A100-PCIE-40GB", "A100-SXM4-80GB", "A100-PCIE-80GB", "H100-SXM5-80GB",
           "H200-SXM-141GB"]

# The MIG User Guide's placements (nvidia-smi mig -lgipp), profile by profile, independent of the module.
EXPECTED_STARTS = {
    A40: {"1g.5gb": {0, 1, 2, 3, 4, 5, 6}, "1g.5gb+me": {0, 1, 2, 3, 4, 5, 6}, "1g.10gb": {0, 2, 4, 6},
          "2g.10gb": {0, 2, 4}, "3g.20gb": {0, 4}, "4g.20gb": {0}, "7g.40gb": {0}},
    A80: {"1g.10gb": {0, 1, 2, 3, 4, 5, 6}, "1g.10gb+me": {0, 1, 2, 3, 4, 5, 6}, "1g.20gb": {0, 2, 4, 6},
          "2g.20gb": {0, 2, 4}, "3g.40gb": {0, 4}, "4g.40gb": {0}, "7g.80gb": {0}},
}
EXPECTED_STARTS["A100-PCIE-40GB"] = EXPECTED_STARTS[A40]
EXPECTED_STARTS["A100-PCIE-80GB"] = EXPECTED_STARTS[A80]


# --------------------------------------------------------------------------------------------------- tables


def test_every_mig_gpu_of_the_catalogue_has_a_table_and_others_raise():
    assert sorted(mig.mig_gpus()) == sorted(ALL_MIG)
    for name in specs.names():
        if specs.get(name).mig_max_instances:
            assert len(mig.profiles(name)) == 7
        else:
            with pytest.raises(ValueError, match="no MIG"):
                mig.profiles(name)
    with pytest.raises(ValueError, match="not in the catalogue"):
        mig.profiles("A100-SXM4-160GB")


def test_profile_names_follow_memory_and_sm_counts_match_the_guide():
    assert mig.table(A40).names == ("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")
    assert mig.table(A80).names == ("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
                                    "7g.80gb")
    assert mig.table("H200-SXM-141GB").names[-1] == "7g.141gb"
    for gpu in (A40, A80):
        t = mig.table(gpu)
        assert [p.sm_count for p in t.profiles] == [14, 14, 14, 28, 42, 56, 98]
        assert t.mig_sms == 98 == 7 * t.sms_per_compute_slice < specs.get(gpu).sm_count
        for p in t.profiles:  # on the A100 one compute slice is one GPC of 14 SMs
            assert p.sm_count == 14 * p.compute_slices
    # "1g.10gb" is a different profile on the two A100s (2 memory slices vs 1): the name needs the GPU
    assert mig.profile(A40, "1g.10gb").memory_slices == 2 and mig.profile(A80, "1g.10gb").memory_slices == 1
    assert mig.profile(A40, "1g.10gb").profile_id == 15 and mig.profile(A80, "1g.10gb").profile_id == 19


@pytest.mark.parametrize("gpu", sorted(EXPECTED_STARTS))
def test_every_profiles_allowed_starts(gpu):
    for name, starts in EXPECTED_STARTS[gpu].items():
        assert set(mig.profile(gpu, name).starts) == starts
        for s in range(mig.MEMORY_SLICES + 1):
            if s in starts:
                assert mig.validate(gpu, [(name, s)]) == ((name, s),)
            else:
                with pytest.raises(ValueError, match=r"allowed starts: " + ", ".join(map(str, sorted(starts)))):
                    mig.validate(gpu, [(name, s)])


def test_slices_taken_by_a_placement():
    p = mig.placement(A40, "3g.20gb", 0)
    assert p.memory == {0, 1, 2, 3} and p.compute == {0, 1, 2}
    p = mig.placement(A40, "3g.20gb", 4)
    assert p.memory == {4, 5, 6, 7} and p.compute == {4, 5, 6}
    p = mig.placement(A40, "1g.10gb", 6)
    assert p.memory == {6, 7} and p.compute == {6}
    assert mig.placement(A40, "7g.40gb", 0).compute == set(range(7))
    # with this slot model the compute slices of a placement lie inside its memory slices: disjoint memory
    # implies disjoint compute, so memory decides every overlap
    for gpu in ALL_MIG:
        for prof in mig.profiles(gpu):
            for s in prof.starts:
                q = mig.placement(gpu, prof.name, s)
                assert q.compute <= q.memory and max(q.compute) < mig.COMPUTE_SLICES


# --------------------------------------------------------------------------------------------------- validate


def test_overlap_names_memory_and_compute_slices():
    with pytest.raises(ValueError, match=r"overlap in memory slices \[0, 1, 2, 3\] and compute slices \[0, 1, 2\]"):
        mig.validate(A40, [("4g.20gb", 0), ("3g.20gb", 0)])
    with pytest.raises(ValueError, match=r"layout\[0\] 2g.10gb@2 and layout\[1\] 1g.5gb@3 overlap in memory "
                                         r"slices \[3\] and compute slices \[3\]"):
        mig.validate(A40, [("2g.10gb", 2), ("1g.5gb", 3)])
    # a 1g.10gb at 0 holds memory slices 0-1 but only compute slice 0: memory overlap only
    with pytest.raises(ValueError) as err:
        mig.validate(A40, [("1g.10gb", 0), ("1g.5gb", 1)])
    assert "memory slices [1]" in str(err.value) and "compute" not in str(err.value)
    with pytest.raises(ValueError, match="overlap"):
        mig.validate(A40, [("7g.40gb", 0), ("1g.5gb", 6)])
    with pytest.raises(ValueError, match="overlap"):
        mig.validate(A80, [("3g.40gb", 4), ("2g.20gb", 4)])


def test_4g_plus_3g_and_its_neighbours():
    assert mig.validate(A40, [("3g.20gb", 4), ("4g.20gb", 0)]) == (("4g.20gb", 0), ("3g.20gb", 4))
    u = mig.usage(A40, [("4g.20gb", 0), ("3g.20gb", 4)])
    assert u.sms_used == 98 and u.free_memory == () and u.free_compute == () and u.maximal
    assert mig.layout_maps(A40, [("4g.20gb", 0), ("3g.20gb", 4)]) == ("AAAABBBB", "AAAABBB")
    # two 3g instances use all memory but strand compute slice 3 (14 SMs)
    u = mig.usage(A40, [("3g.20gb", 0), ("3g.20gb", 4)])
    assert u.sms_used == 84 and u.stranded_compute == (3,) and u.stranded_memory == ()
    assert mig.layout_maps(A40, [("3g.20gb", 0), ("3g.20gb", 4)]) == ("AAAABBBB", "AAA.BBB")
    # seven 1g.5gb use all compute but strand memory slice 7
    seven = [("1g.5gb", s) for s in range(7)]
    u = mig.usage(A40, seven)
    assert u.sms_used == 98 and u.stranded_memory == (7,) and u.maximal
    assert mig.layout_maps(A40, seven) == ("ABCDEFG.", "ABCDEFG")
    # not maximal: free slices that an instance could still use are "_"
    mem, comp = mig.layout_maps(A40, [("4g.20gb", 0)])
    assert mem == "AAAA____" and comp == "AAAA___" and not mig.usage(A40, [("4g.20gb", 0)]).maximal
    assert mig.place(A40, ["3g.20gb", "4g.20gb"]) == (("4g.20gb", 0), ("3g.20gb", 4))


def test_too_many_instances_unknown_profiles_and_malformed_layouts():
    with pytest.raises(ValueError, match="8 instances of 1g.5gb; at most 7"):
        mig.validate(A40, [("1g.5gb", s % 7) for s in range(8)])
    with pytest.raises(ValueError, match=r"2 instances of 1g.5gb\+me; at most 1"):
        mig.validate(A40, [("1g.5gb+me", 0), ("1g.5gb+me", 1)])
    with pytest.raises(ValueError, match="2 instances of 4g.40gb; at most 1"):
        mig.validate(A80, [("4g.40gb", 0), ("4g.40gb", 0)])
    with pytest.raises(ValueError, match=r"profile='5g.25gb' is not a MIG profile of A100-40GB; allowed: 1g.5gb"):
        mig.validate(A40, [("5g.25gb", 0)])
    with pytest.raises(ValueError, match="not a MIG profile of A100-40GB"):
        mig.validate(A40, [("1g.20gb", 0)])  # an 80GB name on the 40GB card
    for bad in ([("1g.5gb",)], [("1g.5gb", "0")], [("1g.5gb", True)], [("1g.5gb", 1.0)], ["1g.5gb@0"],
                [(5, 0)], "1g.5gb", 7):
        with pytest.raises(ValueError):
            mig.validate(A40, bad)
    assert mig.validate(A40, []) == ()
    with pytest.raises(ValueError, match="no MIG"):
        mig.validate("T4", [("1g.5gb", 0)])
    with pytest.raises(ValueError, match="cannot coexist"):
        mig.place(A40, ["7g.40gb", "1g.5gb"])
    with pytest.raises(ValueError, match="cannot coexist"):
        mig.place(A40, ["3g.20gb"] * 3)


# --------------------------------------------------------------------------------------------------- enumerate


def _maximal_by_brute_force(gpu, names):
    """Oracle using only validate(): grow every valid layout one instance at a time, keep the maximal ones."""
    cands = [(n, s) for n in names for s in mig.profile(gpu, n).starts]

    def ok(lay):
        try:
            mig.validate(gpu, list(lay))
            return True
        except ValueError:
            return False

    seen, frontier, maximal = set(), {frozenset()}, set()
    while frontier:
        nxt = set()
        for lay in frontier:
            grown = [lay | {c} for c in cands if c not in lay and ok(lay | {c})]
            if not grown and lay:
                maximal.add(tuple(sorted(lay, key=lambda k: (k[1], k[0]))))
            for g in grown:
                if g not in seen:
                    seen.add(g)
                    nxt.add(g)
        frontier = nxt
    return maximal


@pytest.mark.parametrize("gpu", ALL_MIG)
def test_enumerated_layouts_are_valid_and_maximal(gpu):
    layouts = mig.enumerate_layouts(gpu)
    assert len(layouts) == len(set(layouts)) == 239
    cands = [(p.name, s) for p in mig.profiles(gpu) for s in p.starts]
    for lay in layouts:
        assert mig.validate(gpu, lay) == lay
        assert mig.addable(gpu, lay) == []
        for c in cands:  # no instance can be added: every addition fails validate
            with pytest.raises(ValueError):
                mig.validate(gpu, list(lay) + [c])


def test_enumeration_matches_a_brute_force_oracle():
    names = [p.name for p in mig.profiles(A40) if not p.media_extensions]
    layouts = mig.enumerate_layouts(A40, names)
    assert len(layouts) == 78
    assert set(layouts) == _maximal_by_brute_force(A40, names)
    small = ["1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb"]
    assert set(mig.enumerate_layouts(A40, small)) == _maximal_by_brute_force(A40, small)


def test_place_finds_a_layout_for_every_feasible_multiset():
    for lay in mig.enumerate_layouts(A40):
        names = sorted(n for n, _ in lay)
        found = mig.place(A40, list(reversed(names)))
        assert sorted(n for n, _ in found) == names and mig.validate(A40, found) == found
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="cannot coexist"):
        mig.place(A40, ["1g.10gb"] * 3 + ["2g.10gb"] * 2)  # 10 memory slices
    assert time.perf_counter() - t0 < 1.0
    # on the A100 every multiset of profiles within the slice and count budgets has a placement
    import itertools

    profs = [p for p in mig.profiles(A40) if not p.media_extensions]
    for k in range(1, 8):
        for combo in itertools.combinations_with_replacement(profs, k):
            fits = (sum(p.memory_slices for p in combo) <= 8 and sum(p.compute_slices for p in combo) <= 7
                    and all(sum(q is p for q in combo) <= p.max_count for p in combo))
            if fits:
                assert mig.place(A40, [p.name for p in combo])
            else:
                with pytest.raises(ValueError):
                    mig.place(A40, [p.name for p in combo])


def test_enumeration_with_a_subset_of_profiles():
    assert mig.enumerate_layouts(A40, ["3g.20gb", "4g.20gb"]) == [
        (("3g.20gb", 0), ("3g.20gb", 4)), (("4g.20gb", 0), ("3g.20gb", 4))]
    assert mig.enumerate_layouts(A40, ["7g.40gb"]) == [(("7g.40gb", 0),)]
    assert mig.enumerate_layouts(A40, ["1g.5gb"]) == [tuple(("1g.5gb", s) for s in range(7))]
    assert mig.enumerate_layouts(A40, ["1g.10gb"]) == [tuple(("1g.10gb", s) for s in (0, 2, 4, 6))]
    with pytest.raises(ValueError, match="empty"):
        mig.enumerate_layouts(A40, [])
    with pytest.raises(ValueError, match="not a MIG profile"):
        mig.enumerate_layouts(A40, ["3g.40gb"])
    with pytest.raises(ValueError, match="no MIG"):
        mig.enumerate_layouts("RTX-A6000")


def test_tables_of_layouts_and_documentation_conflicts():
    layouts = mig.enumerate_layouts(A40, ["3g.20gb", "4g.20gb"])
    text = mig.layouts_table(A40, layouts)
    assert "3g.20gb@0 + 3g.20gb@4" in text and "AAA.BBB" in text and " 84 " in text
    rows = mig.layout_rows(A40, layouts)
    assert [r["sms"] for r in rows] == [84, 98] and [r["stranded_compute"] for r in rows] == [1, 0]
    conflicts = mig.doc_conflicts(A40)
    assert {(c["profile"], c["column"], c["printed"], c["implied_by_placement"]) for c in conflicts} == {
        ("1g.10gb", "memory", "1/8", "2/8"), ("1g.10gb", "L2", "1/8", "2/8")}
    assert mig.doc_conflicts("H100-SXM5-80GB") == []  # the H100 table prints 1/4 for 1g.20gb
    assert [(c["profile"], c["column"]) for c in mig.doc_conflicts("H200-SXM-141GB")] == [("1g.35gb", "L2")]


def test_instance_peaks_and_device_names():
    spec = specs.get(A40)
    one = mig.instance_peaks(A40, "1g.5gb", "fp16")
    assert one["sms"] == 14
    assert one["flops"] == pytest.approx(spec.peak_flops("fp16") * 14 / 108)
    assert one["hbm_bytes_per_s"] == pytest.approx(1555e9 / 8) and one["memory_bytes"] == pytest.approx(5e9)
    assert mig.instance_peaks(A40, "7g.40gb")["sms"] == 98 < mig.instance_peaks(A40)["sms"] == 108
    with pytest.raises(ValueError, match="no sourced SM count"):
        mig.instance_peaks("H200-SXM-141GB", "1g.18gb")
    assert mig.profile_from_device_name("NVIDIA A100-SXM4-40GB MIG 1g.5gb") == "1g.5gb"
    assert mig.profile_from_device_name("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me") == "1g.10gb+me"
    assert mig.profile_from_device_name("MIG 3g.20gb Device 0") == "3g.20gb"
    # profile names of newer drivers keep their suffix (no media engines, all media engines, graphics)
    for name in ("1g.20gb-me", "1g.10gb+me.all", "1g.24gb+gfx"):
        assert mig.profile_from_device_name(f"NVIDIA H100 80GB HBM3 MIG {name}") == name
    assert mig.profile_from_device_name("NVIDIA A100-SXM4-80GB") is None
    assert mig.profile_from_device_name(None) is None


def test_layout_figures_draw(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = mig.plot_layout(A40, [("3g.20gb", 0), ("3g.20gb", 4)])
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(ax.patches) == 15 and len(hatched) == 1  # 8 + 7 slices, compute slice 3 stranded
    ax = mig.plot_layouts(A40, mig.enumerate_layouts(A40, ["3g.20gb", "4g.20gb", "1g.5gb"]))
    assert ax.get_title().endswith("maximal layouts")
    plt.close("all")


# --------------------------------------------------------------------------------------------------- the model


def test_workload_and_config_validation():
    with pytest.raises(ValueError, match="flops"):
        mig.Workload("x", -1, 1, 0, 1, 1.0)
    with pytest.raises(ValueError, match="both 0"):
        mig.Workload("x", 0, 0, 0, 1, 1.0)
    with pytest.raises(ValueError, match="parallel_sms"):
        mig.Workload("x", 1, 1, 0, 0, 1.0)
    with pytest.raises(ValueError, match="rate_per_s"):
        mig.Workload("x", 1, 1, 0, 1, 0.0)
    with pytest.raises(ValueError, match="compute_efficiency"):
        mig.SimConfig(compute_efficiency=1.5)
    with pytest.raises(ValueError, match="switch_s"):
        mig.SimConfig(switch_s=1.0)
    with pytest.raises(ValueError, match="warmup_s"):
        mig.SimConfig(warmup_s=5.0)
    with pytest.raises(ValueError, match="not in the catalogue"):
        mig.SimConfig(gpu="B300")
    with pytest.raises(ValueError, match="mode='mig2'"):
        mig.simulate(mig.default_tenants(), "mig2")
    with pytest.raises(ValueError, match="scenario"):
        mig.default_tenants("loud")
    with pytest.raises(ValueError, match="has no sourced SM count"):
        mig.simulate(mig.default_tenants(), "mig", mig.SimConfig(gpu="H200-SXM-141GB"))
    with pytest.raises(ValueError, match="cannot coexist"):
        mig.simulate(mig.default_tenants(n=8), "mig")


def test_service_time_is_copy_then_roofline():
    cfg = mig.SimConfig()
    w = mig.Workload("w", flops=1e12, hbm_bytes=1e9, pcie_bytes=1e8, parallel_sms=20, rate_per_s=1.0)
    r = cfg.flops_per_sm
    assert cfg.flops_per_sm == pytest.approx(specs.get(A40).peak_flops("fp16") / 108 * 0.5)
    t = mig.service_time(w, 108, 1e12, 1e10, cfg)
    assert t == pytest.approx(1e8 / 1e10 + max(1e12 / (20 * r), 1e9 / 1e12))  # capped at 20 SMs
    assert mig.service_time(w, 10, 1e12, 1e10, cfg) == pytest.approx(0.01 + 1e12 / (10 * r))
    with pytest.raises(ValueError):
        mig.service_time(w, 0, 1e12, 1e10, cfg)


def test_a_lone_request_takes_its_service_time_in_every_mode():
    cfg = mig.SimConfig(duration_s=2.0, warmup_s=0.0)
    w = mig.Workload("w", flops=2e10, hbm_bytes=1e8, pcie_bytes=1e6, parallel_sms=54, rate_per_s=5.0)
    spec = cfg.spec
    full = mig.service_time(w, spec.sm_count, cfg.hbm_bytes_per_s, cfg.pcie_bytes_per_s, cfg)
    one = mig.service_time(w, 14, cfg.hbm_bytes_per_s / 8, cfg.pcie_bytes_per_s, cfg)
    for mode, expect in (("dedicated", full), ("timeslice", full), ("mps", full), ("mig", one)):
        res = mig.simulate([w], mode, cfg, seed=1)
        lat = res.latencies_s[0]
        assert lat.size > 3
        assert np.allclose(lat, expect, rtol=1e-9), mode  # 5 req/s: never a queue
    cap = max(1, int(spec.sm_count / 7))
    limited = mig.service_time(w, cap, cfg.hbm_bytes_per_s, cfg.pcie_bytes_per_s, cfg)
    assert np.allclose(mig.simulate([w], "mps-limited", cfg, seed=1).latencies_s[0], limited, rtol=1e-9)


def test_compute_only_and_memory_only_requests_in_every_mode():
    cfg = mig.SimConfig(duration_s=0.5, warmup_s=0.0)
    compute = mig.Workload("c", flops=1e10, hbm_bytes=0.0, pcie_bytes=0.0, parallel_sms=108, rate_per_s=20.0)
    memory = mig.Workload("m", flops=0.0, hbm_bytes=1e8, pcie_bytes=0.0, parallel_sms=108, rate_per_s=20.0)
    for mode in mig.MODES:
        res = mig.simulate([compute, memory], mode, cfg)
        assert all(t.completed > 0 and not t.saturated for t in res.tenants), mode


def test_mig_isolates_hbm_but_not_pcie():
    cfg = mig.SimConfig(duration_s=1.5)
    base = mig.default_tenants("quiet", cfg)[0]
    no_copy = mig.Workload("v", base.flops, base.hbm_bytes, 0.0, base.parallel_sms, base.rate_per_s)
    quiet = mig.simulate(mig.default_tenants("quiet", cfg, victim=no_copy), "mig", cfg)
    bully = mig.simulate(mig.default_tenants("hbm-bully", cfg, victim=no_copy), "mig", cfg)
    for i in range(6):  # identical arrivals, nothing shared: identical latencies, to the bit
        assert np.array_equal(quiet.latencies_s[i], bully.latencies_s[i])
    # the same HBM bully under MPS slows the same victims down
    mq = mig.simulate(mig.default_tenants("quiet", cfg, victim=no_copy), "mps", cfg)
    mb = mig.simulate(mig.default_tenants("hbm-bully", cfg, victim=no_copy), "mps", cfg)
    names = [f"t{i}" for i in range(1, 7)]
    assert mb.victim_summary(names)["victim_p99_ms"] > 1.5 * mq.victim_summary(names)["victim_p99_ms"]
    # PCIe is one link for all instances: a PCIe bully does slow MIG victims that copy inputs
    q = mig.simulate(mig.default_tenants("quiet", cfg), "mig", cfg).victim_summary(names)
    p = mig.simulate(mig.default_tenants("pcie-bully", cfg), "mig", cfg).victim_summary(names)
    assert p["victim_p50_ms"] > q["victim_p50_ms"] * 1.01


def test_timeslicing_shares_time_fairly_and_saturation_is_flagged():
    cfg = mig.SimConfig(duration_s=1.0, warmup_s=0.1)
    a = mig.Workload("a", flops=1e11, hbm_bytes=1e8, pcie_bytes=0.0, parallel_sms=108, rate_per_s=None)
    b = mig.Workload("b", flops=1e11, hbm_bytes=1e8, pcie_bytes=0.0, parallel_sms=108, rate_per_s=None)
    res = mig.simulate([a, b], "timeslice", cfg)
    ta, tb = (t.throughput_per_s for t in res.tenants)
    assert ta > 0 and abs(ta - tb) / ta < 0.05
    alone = mig.simulate([a], "timeslice", cfg).tenants[0].throughput_per_s
    assert 0.45 * alone < ta < 0.5 * alone  # half the GPU each, minus the switches
    heavy = mig.Workload("h", flops=6.6e10, hbm_bytes=2e8, pcie_bytes=0.0, parallel_sms=54, rate_per_s=1000.0)
    res = mig.simulate([heavy], "mig", cfg)
    assert res.tenants[0].saturated and res.victim_summary()["saturated"]
    assert not mig.simulate([heavy], "dedicated", cfg).tenants[0].saturated


def test_isolation_study_is_fast_and_tells_the_chapters_story():
    t0 = time.perf_counter()
    rows = mig.isolation_study()
    assert time.perf_counter() - t0 < 5.0
    assert len(rows) == len(mig.MODES) * len(mig.SCENARIOS)
    get = {(r["mode"], r["scenario"]): r for r in rows}
    assert get[("mig", "hbm-bully")]["p99_vs_quiet"] == pytest.approx(1.0, abs=0.02)
    assert get[("dedicated", "hbm-bully")]["p99_vs_quiet"] == pytest.approx(1.0)
    assert get[("mps", "hbm-bully")]["p99_vs_quiet"] > 2
    assert get[("timeslice", "hbm-bully")]["p99_vs_quiet"] > 1.3
    assert get[("mig", "pcie-bully")]["p99_vs_quiet"] > 1.0
    assert get[("mig", "quiet")]["victim_p50_ms"] > 3 * get[("dedicated", "quiet")]["victim_p50_ms"]
    assert not any(r["saturated"] for r in rows)


def test_isolation_figure_draws():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = mig.isolation_study(mig.SimConfig(duration_s=0.6, warmup_s=0.1), modes=("mig", "mps"))
    ax = mig.plot_isolation(rows)
    assert len(ax.patches) == 6 and ax.get_yscale() == "log"
    plt.close("all")


# --------------------------------------------------------------------------------------------------- NVML


class FakeNVMLError(Exception):
    def __init__(self, value):
        super().__init__(f"NVML error {value}")
        self.value = value


class Placement(ctypes.Structure):
    _fields_ = [("start", ctypes.c_uint), ("size", ctypes.c_uint)]


def fake_nvml(gpus, driver_table=None, deny_placement=False, deny_count=False):
    """A pynvml stand-in. ``gpus``: list of dicts with name, mig (None: unsupported), instances."""
    ns = types.SimpleNamespace()
    ns.NVML_GPU_INSTANCE_PROFILE_COUNT = 18
    ns.c_nvmlGpuInstancePlacement_t = Placement
    ns.nvmlInit = lambda: None
    ns.nvmlShutdown = lambda: None
    ns.nvmlSystemGetDriverVersion = lambda: b"580.65.06"

    def count():
        if deny_count:
            raise RuntimeError("driver went away")
        return len(gpus)

    ns.nvmlDeviceGetCount = count
    ns.nvmlDeviceGetHandleByIndex = lambda i: ("gpu", i)
    ns.nvmlDeviceGetName = lambda h: (gpus[h[1]]["name"] if h[0] == "gpu" else
                                      gpus[h[1]]["instances"][h[2]]["name"]).encode()

    def mig_mode(h):
        mode = gpus[h[1]]["mig"]
        if mode is None:
            raise FakeNVMLError(3)
        return [int(mode), int(mode)]

    ns.nvmlDeviceGetMigMode = mig_mode
    ns.nvmlDeviceGetMaxMigDeviceCount = lambda h: 7

    def mig_handle(h, k):
        if k >= len(gpus[h[1]]["instances"]):
            raise FakeNVMLError(6)
        return ("mig", h[1], k)

    ns.nvmlDeviceGetMigDeviceHandleByIndex = mig_handle
    inst = lambda h: gpus[h[1]]["instances"][h[2]]  # noqa: E731
    ns.nvmlDeviceGetUUID = lambda h: inst(h)["uuid"]
    ns.nvmlDeviceGetGpuInstanceId = lambda h: inst(h)["gi"]
    ns.nvmlDeviceGetComputeInstanceId = lambda h: 0
    ns.nvmlDeviceGetAttributes = lambda h: types.SimpleNamespace(multiprocessorCount=inst(h)["sms"],
                                                                 memorySizeMB=inst(h)["mib"])

    def gi_by_id(h, gi):
        if deny_placement:
            raise FakeNVMLError(4)
        return ("gi", h[1], gi)

    ns.nvmlDeviceGetGpuInstanceById = gi_by_id

    def gi_info(g):
        for m in gpus[g[1]]["instances"]:
            if m["gi"] == g[2]:
                return types.SimpleNamespace(placement=types.SimpleNamespace(start=m["start"], size=m["size"]))
        raise FakeNVMLError(6)

    ns.nvmlGpuInstanceGetInfo = gi_info
    rows = driver_table or []

    def profile_info(h, idx, version=2):
        if idx >= len(rows):
            raise FakeNVMLError(3)
        r = rows[idx]
        return types.SimpleNamespace(id=r["id"], sliceCount=r["slices"], instanceCount=r["max"],
                                     multiprocessorCount=r["sms"], memorySizeMB=r["mib"],
                                     name=("MIG " + r["name"]).encode())

    ns.nvmlDeviceGetGpuInstanceProfileInfo = profile_info

    def placements(h, pid, arr, count_ref):
        r = next(r for r in rows if r["id"] == pid)
        for i, s in enumerate(r["starts"]):
            arr[i].start, arr[i].size = s, r["size"]
        count_ref._obj.value = len(r["starts"])

    ns.nvmlDeviceGetGpuInstancePossiblePlacements = placements
    return ns


def _driver_rows(gpu):
    return [{"id": p.profile_id, "name": p.name, "slices": p.compute_slices, "max": p.max_count,
             "sms": p.sm_count, "mib": 4864 * p.memory_slices, "starts": list(p.starts), "size": p.memory_slices}
            for p in mig.profiles(gpu)]


def test_nvml_absent_or_failing_never_raises(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails as if nvidia-ml-py were missing
    r = mig.nvml_mig_report()
    assert not r.nvml and r.gpus == [] and "not installed" in r.notes[0] and "NVML not available" in r.summary()

    def boom():
        raise FakeNVMLError(12)

    bad = types.SimpleNamespace(nvmlInit=boom)
    r = mig.nvml_mig_report(nvml=bad, device_name="NVIDIA A100-SXM4-40GB MIG 2g.10gb")
    assert not r.nvml and r.this_process == "2g.10gb" and "could not start" in r.notes[0]
    r = mig.nvml_mig_report(nvml=fake_nvml([], deny_count=True))
    assert r.nvml and any("NVML query failed" in n or "device count" in n for n in r.notes)
    assert mig.nvml_mig_report(nvml=object()).nvml is False  # a module without nvmlInit


def test_nvml_no_mig_and_mig_disabled():
    r = mig.nvml_mig_report(nvml=fake_nvml([{"name": "Tesla T4", "mig": None, "instances": []},
                                            {"name": "NVIDIA H200", "mig": False, "instances": []}]))
    t4, h200 = r.gpus
    assert not t4.mig_capable and t4.current_mode is None and "not supported" in t4.notes[0]
    assert h200.mig_capable and h200.current_mode is False and h200.spec_name == "H200-SXM-141GB"
    assert any("needs root" in n for n in r.notes) and r.driver_version == "580.65.06"
    assert "mode disabled" in r.summary()


def test_nvml_mig_enabled_with_instances_and_the_driver_table():
    instances = [{"name": "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "uuid": "MIG-aaa", "gi": 1, "sms": 42,
                  "mib": 19968, "start": 4, "size": 4},
                 {"name": "NVIDIA A100-SXM4-40GB MIG 4g.20gb", "uuid": "MIG-bbb", "gi": 2, "sms": 56,
                  "mib": 19968, "start": 0, "size": 4}]
    gpus = [{"name": "NVIDIA A100-SXM4-40GB", "mig": True, "instances": instances}]
    r = mig.nvml_mig_report(nvml=fake_nvml(gpus, _driver_rows(A40)), visible_devices="MIG-bbb")
    g = r.gpus[0]
    assert g.current_mode and [m.profile for m in g.instances] == ["3g.20gb", "4g.20gb"]
    assert [m.placement for m in g.instances] == [(4, 4), (0, 4)]
    assert g.instances[0].memory_bytes == 19968 * 2**20 and r.this_process == "4g.20gb"
    assert mig.validate(A40, [(m.profile, m.placement[0]) for m in g.instances])
    rows = mig.compare_with_driver(r)
    assert len(rows) == 7 and all(row["agree"] for row in rows)
    assert "MIG device 1: 4g.20gb" in r.summary() and "inside a MIG instance: 4g.20gb" in r.summary()
    # a driver that disagrees (different SM count) is reported, not hidden
    wrong = _driver_rows(A40)
    wrong[0]["sms"] = 16
    rows = mig.compare_with_driver(mig.nvml_mig_report(nvml=fake_nvml(gpus, wrong)))
    assert [row["agree"] for row in rows].count(False) == 1
    # no permission for placements: instances still listed, placement unknown, a note says why
    r = mig.nvml_mig_report(nvml=fake_nvml(gpus, _driver_rows(A40), deny_placement=True))
    assert [m.placement for m in r.gpus[0].instances] == [None, None]
    assert any("insufficient permissions" in n for n in r.gpus[0].notes)
    assert r.to_dict()["gpus"][0]["instances"][0]["profile"] == "3g.20gb"


# --------------------------------------------------------------------------------------------------- measure


def test_measure_instance_and_bench_run_on_cpu(monkeypatch, capsys):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    monkeypatch.setitem(sys.modules, "pynvml", None)
    out = mig.measure_instance(device="cpu", quick=True)
    assert out["flops_per_s"] > 0 and out["copy_bytes_per_s"] > 0 and out["model"] is None
    assert out["matmul"].n >= 10 and "CPU" in out["notes"][0]
    assert mig.bench_main(["--no-save", "--quick"]) == 0
    assert "NVML not available" in capsys.readouterr().out


def test_measure_instance_on_a_gpu_compares_with_the_model():
    """The GPU path: BF16 matmul and HBM copy of the device (or MIG instance) against instance_peaks."""
    import os

    import torch

    if os.environ.get("AMPERE_DEVICE", "").lower() == "cpu" or not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from ampere import device

    info = device.probe()
    out = mig.measure_instance(quick=True, info=info)
    assert out["matmul"].mode == "cuda-events" and out["copy"].l2_flushed
    assert out["flops_per_s"] > 0 and out["copy_bytes_per_s"] > 0
    if out["model"] is not None:  # a catalogued GPU: ratios are fractions of a datasheet peak
        assert 0.05 < out["flops_ratio"] < 1.2 and 0.05 < out["bandwidth_ratio"] < 1.2


# --------------------------------------------------------------------------------------------------- costs


def test_prices_hours_and_serving_costs():
    assert mig.hours_for_budget(100, 0.96, 2.29) == pytest.approx((43.67, 104.17), abs=0.01)  # seed: 44-104 h
    with pytest.raises(ValueError):
        mig.hours_for_budget(100, 2.0, 1.0)
    rows = {o.label: o for o in mig.serving_costs()}
    seven = rows["7 x A100 80GB, one model each"]
    one = rows["1 x A100 80GB, 7 x 1g.10gb (MIG)"]
    assert seven.usd_per_h == pytest.approx((7 * 0.96, 7 * 2.29)) and one.usd_per_h == pytest.approx((0.96, 2.29))
    assert one.per_model_sms == 14 and seven.per_model_sms == 108
    assert one.per_model_hbm_bytes_per_s == pytest.approx(2039e9 * 0.8 / 8)
    assert one.usd_per_million[0] == pytest.approx(0.96 / (7 * 100 * 3600) * 1e6)
    assert one.service_ms > 3 * seven.service_ms and one.feasible and seven.feasible
    assert not {o.label: o for o in mig.serving_costs(demand_per_s=400)}[one.label].feasible
    with pytest.raises(ValueError):
        mig.serving_costs(models=0)


def test_every_source_key_is_in_the_bibliography():
    bib = (Path(__file__).resolve().parent.parent / "book" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"@\w+\{([^,]+),", bib))
    used = {q.source for q in mig.CLOUD_PRICES}
    for gpu in ALL_MIG:
        used |= set(mig.table(gpu).sources.values())
    assert used <= keys, sorted(used - keys)

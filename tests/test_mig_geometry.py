"""ampere.mig_geometry: profile tables as data, placements, validate / enumerate_layouts / place, peaks."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ampere import mig_geometry as mig
from ampere import results, specs

ROOT = Path(__file__).resolve().parents[1]
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
    rows = mig.layout_rows(A40, layouts)
    assert [r.sms for r in rows] == [84, 98] and [r.stranded_compute for r in rows] == [1, 0]
    conflicts = mig.doc_conflicts(A40)
    assert {(c.profile, c.column, c.printed, c.implied_by_placement) for c in conflicts} == {
        ("1g.10gb", "memory", "1/8", "2/8"), ("1g.10gb", "L2", "1/8", "2/8")}
    # Hopper: the guide prints 1/4 of memory (agrees with the placement) but 1/8 of L2 for the two-slice 1g
    assert [(c.profile, c.column) for c in mig.doc_conflicts("H100-SXM5-80GB")] == [("1g.20gb", "L2")]
    assert [(c.profile, c.column) for c in mig.doc_conflicts("H200-SXM-141GB")] == [("1g.35gb", "L2")]


def test_instance_peaks_and_device_names():
    spec = specs.get(A40)
    one = mig.instance_peaks(A40, "1g.5gb", "fp16")
    assert one.sms == 14 and one["sms"] == 14  # mapping access kept for callers of the former dict
    assert one.flops == pytest.approx(spec.peak_flops("fp16") * 14 / 108)
    assert one.hbm_bytes_per_s == pytest.approx(spec.hbm_bytes_per_s / 8) and one.memory_bytes == pytest.approx(spec.memory_bytes / 8)
    assert one.compute_share == pytest.approx(14 / 108) and one.memory_share == pytest.approx(1 / 8)
    assert mig.instance_peaks(A40, "7g.40gb").sms == 98 < mig.instance_peaks(A40).sms == 108
    with pytest.raises(KeyError):
        one["nope"]
    with pytest.raises(ValueError, match="precision"):
        mig.instance_peaks(A40, "1g.5gb", "fp8")
    with pytest.raises(TypeError, match="precision"):
        mig.instance_peaks(A40, "1g.5gb", 16)
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


# --------------------------------------------------------------------------------------------------- data


def test_profile_tables_are_data_with_sources_and_no_torch():
    import subprocess
    import sys

    for key in ("A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB"):
        t = mig.table(next(g for g in ALL_MIG if mig.table(g).key == key))
        data = results.table(t.data_name)
        assert [r["profile"] for r in data["rows"]] == list(t.names)
        for row in data["rows"]:
            assert row["source"] == "nvidiamig" and "Table" in row["where"]
            if row["sm_count"] is not None:
                assert row["sm_count_source"] in ("nvidiamig", "googlecloudgpuvm")
    # no profile figure typed in the module: the SM counts and media counts live in the data only
    for name in ("mig_geometry.py", "mig_sim.py", "mig.py"):
        code = (ROOT / "ampere" / name).read_text(encoding="utf-8")
        assert "14, 14, 14, 28" not in code and '"1/8", "1/8"' not in code and "16, 16, 26, 32" not in code
    # a shared model layer: importing it does not import torch
    out = subprocess.run([sys.executable, "-c", "import sys, ampere.mig_geometry, ampere.mig_sim; "
                          "print('torch' in sys.modules)"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_media_engines_follow_the_guide():
    # A100 (Table 6): the single JPEG decoder and optical-flow unit go to 1g.5gb+me or to the 7g instance
    a100 = {p.name: p.media for p in mig.profiles(A40)}
    assert a100 == {"1g.5gb": "0/0/0", "1g.5gb+me": "1/1/1", "1g.10gb": "1/0/0", "2g.10gb": "1/0/0",
                    "3g.20gb": "2/0/0", "4g.20gb": "2/0/0", "7g.40gb": "5/1/1"}
    assert [p.name for p in mig.profiles(A40) if p.ofa] == ["1g.5gb+me", "7g.40gb"]
    # H100 (Table 7): every profile gets JPEG decoders; only the OFA is special to +me and 7g
    h100 = mig.profiles("H100-SXM5-80GB")
    assert all(p.jpeg >= 1 for p in h100) and [p.name for p in h100 if p.ofa] == ["1g.10gb+me", "7g.80gb"]
    assert [p.copy_engines for p in h100] == [1, 1, 1, 2, 3, 4, 8]
    assert [p.sm_count for p in h100] == [16, 16, 26, 32, 60, None, None]
    assert mig.smallest_profile(A40).name == "1g.5gb" and mig.smallest_profile(A80).name == "1g.10gb"


def test_bad_input_is_refused_with_the_argument_named():
    with pytest.raises(TypeError, match="profile name"):
        mig.profile(A40, 5)
    with pytest.raises(ValueError, match="start=True"):
        mig.placement(A40, "1g.5gb", True)
    assert mig.placement(A40, "1g.5gb", __import__("numpy").int64(3)).start == 3  # numpy integers accepted
    with pytest.raises(TypeError, match="device_name"):
        mig.profile_from_device_name(b"NVIDIA A100 MIG 1g.5gb")
    with pytest.raises(ValueError, match="not in the catalogue"):
        mig.table("A100-SXM4-160GB")

"""ampere.mig.geometry (the old path ampere.mig_geometry): placements, validate / enumerate_layouts / place."""

from __future__ import annotations

import time

import pytest

from ampere.mig import geometry as mig

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
    with pytest.raises(ValueError, match=r"profile name '5g.25gb' is not a MIG profile of A100-40GB; allowed: 1g.5gb"):
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

"""Tests of ampere.cluster.oversubscription: tapered trees and traffic patterns.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

import pytest

from ampere import cluster as cl


def test_a_ring_on_the_rails_does_not_notice_a_taper():
    for up in (20, 10, 5, 1):
        f = cl.fat_tree(140, uplinks_per_leaf=up)
        assert cl.pattern_slowdown(f, "rail_ring") == 1.0
        assert cl.pattern_slowdown(f, "su_permutation") == pytest.approx(f.oversubscription)
    one_su = cl.fat_tree(20, uplinks_per_leaf=5)
    assert all(cl.pattern_slowdown(one_su, p) == 1.0 for p in cl.PATTERNS)  # nothing leaves a single SU


def test_all_to_all_pays_the_share_that_leaves_the_su():
    f = cl.fat_tree(140, uplinks_per_leaf=10)
    assert cl.pattern_slowdown(f, "all_to_all") == pytest.approx(2 * 120 / 139)
    assert cl.pattern_slowdown(cl.fat_tree(140), "all_to_all") == 1.0


def test_tapers_save_switches_cables_and_bisection():
    base, half, quarter = cl.tapers(140)
    assert base.ratio == 1.0 and base.switches_saved == 0 and base.bisection_fraction == 1.0
    assert half.ratio == 2.0 and half.bisection_fraction == 0.5
    assert half.switches_saved > 0 and half.cables_saved == 1120 and half.transceivers_saved == 2240
    assert quarter.switches_saved > half.switches_saved and quarter.bisection_fraction == 0.25
    rows = cl.taper_rows(140)
    assert [r["leaf down : up"] for r in rows] == ["20 : 20", "20 : 10", "20 : 5"]


@pytest.mark.parametrize("args,error,match", [
    (("fabric", "rail_ring"), TypeError, "fabric"), ((None, "ring"), TypeError, "fabric"),
])
def test_pattern_slowdown_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        cl.pattern_slowdown(*args)


def test_pattern_names_are_checked():
    with pytest.raises(ValueError, match="pattern"):
        cl.pattern_slowdown(cl.fat_tree(40), "ring")
    with pytest.raises(TypeError, match="uplinks"):
        cl.tapers(140, uplinks=10)
    with pytest.raises(ValueError, match="uplinks"):
        cl.tapers(140, uplinks=(20, 0))

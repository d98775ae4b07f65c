"""Tests of ampere/kernels/launch_order.py: the grouped launch order and its L2 traffic model. Chapter:
Programming the A100's SM."""

from __future__ import annotations

import pytest

from ampere import kernels, results


def test_order_is_a_permutation_and_group_1_is_row_major():
    for gm, gn, g in ((9, 9, 3), (7, 5, 4), (1, 6, 8), (5, 1, 2), (32, 32, 8)):
        order = kernels.program_order(gm, gn, g)
        assert sorted(order) == [(r, c) for r in range(gm) for c in range(gn)]
    assert kernels.program_order(3, 4, 1) == [(r, c) for r in range(3) for c in range(4)]
    # grouped: down the group's rows first, then the next column
    assert kernels.program_order(9, 9, 3)[:6] == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]
    # a last group of fewer rows (7 rows, groups of 4: the second group has 3)
    assert kernels.program_tile(4 * 5, 7, 5, 4) == (4, 0) and kernels.program_tile(4 * 5 + 3, 7, 5, 4) == (4, 1)
    with pytest.raises(ValueError):
        kernels.program_tile(81, 9, 9, 3)
    with pytest.raises(TypeError):
        kernels.program_tile(0, 9.0, 9, 3)


def test_the_tutorials_count():
    (row,) = results.table("triton-grouping-example")["rows"]
    args = (row["grid_m"], row["grid_n"], row["k_blocks"], row["outputs"])
    assert kernels.blocks_loaded(*args, group_m=1) == row["row_major_blocks"] == 90
    assert kernels.blocks_loaded(*args, group_m=row["group_m"]) == row["grouped_blocks"] == 54


def test_launch_traffic_model():
    # a grid no wider than the programs in flight: row-major reuses B within the window, reads each once
    t = kernels.launch_traffic(4096, 4096, 4096, group_m=1, window=108)
    assert t.hbm_bytes == t.compulsory_bytes == (2 * 4096 * 4096) * 2
    assert t.l2_bytes == 32 * 32 * 2 * 128 * 4096 * 2  # every program loads its two panels
    # wider than the window: row-major re-reads B for every row of tiles, grouped once per group
    wide = kernels.launch_traffic(4096, 32768, 4096, group_m=1, window=108)
    grouped = kernels.launch_traffic(4096, 32768, 4096, group_m=8, window=108)
    assert wide.hbm_bytes / wide.compulsory_bytes > 20
    assert grouped.hbm_bytes < wide.hbm_bytes / 5
    assert grouped.hbm_intensity > 600 and wide.hbm_intensity < 200
    a100 = "A100-SXM4-80GB"
    assert grouped.time_s(a100) < wide.time_s(a100)
    assert grouped.time_s(a100) == pytest.approx(grouped.flops / 312e12, rel=0.01)  # compute-bound
    # a window holding everything: every order reads A and B once
    assert kernels.launch_traffic(1000, 3000, 512, window=10**4).hbm_bytes == (1000 * 512 + 512 * 3000) * 2
    with pytest.raises(ValueError):
        kernels.launch_traffic(0, 1, 1)
    with pytest.raises(ValueError):
        kernels.launch_traffic(1 << 20, 1 << 20, 1, block_m=1, block_n=1)  # too many programs to walk

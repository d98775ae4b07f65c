"""Tests of ampere/kernels/shared_memory.py: bandwidth from the banks, bank conflicts, the XOR swizzle.
Chapter: Programming the A100's SM."""

from __future__ import annotations

import math

import pytest

from ampere import kernels, results, specs

A100 = "A100-SXM4-80GB"


def test_bandwidth_is_banks_times_width_times_sms_times_clock():
    s = specs.get(A100)
    assert kernels.shared_memory_bandwidth(A100) == 32 * 4 * s.sm_count * s.boost_clock_hz
    assert kernels.shared_memory_bandwidth(A100) / 1e12 == pytest.approx(19.49, abs=0.01)
    # the banks are a per-compute-capability fact of the sm-limits table, with its source
    rows = results.table("sm-limits")["rows"]
    assert all(r["shared_banks"] == 32 and r["shared_bank_bytes"] == 4 for r in rows)
    assert "32 banks" in results.table("sm-limits")["description"]


def test_bank_rule_broadcast_and_serialisation():
    assert kernels.bank_conflicts([4 * t for t in range(32)]).degree == 1  # consecutive words
    assert kernels.bank_conflicts([0] * 32).degree == 1  # one word for all: broadcast
    same_bank = kernels.bank_conflicts([128 * t for t in range(32)])
    assert same_bank.degree == 32 and set(same_bank.banks) == {0} and same_bank.efficiency == pytest.approx(1 / 32)
    two_way = kernels.bank_conflicts([8 * t for t in range(32)])  # stride of two words
    assert two_way.degree == 2
    vec = kernels.bank_conflicts([16 * t for t in range(8)], access_bytes=16)  # 8 rows of 16 B: all 32 banks
    assert vec.degree == 1 and len(vec.words) == 32
    with pytest.raises(ValueError, match="aligned"):
        kernels.bank_conflicts([2], access_bytes=4)
    with pytest.raises(ValueError):
        kernels.bank_conflicts([], access_bytes=4)
    with pytest.raises(ValueError):
        kernels.bank_conflicts([0], access_bytes=32)
    with pytest.raises(TypeError):
        kernels.bank_conflicts([1.0])


@pytest.mark.parametrize("words", list(range(1, 70)))
def test_column_read_degree_is_gcd_with_32(words):
    # thread t reads word t * words: the banks repeat every 32 / gcd(words, 32) threads
    assert kernels.column_conflicts([words]) == [math.gcd(words, 32)]
    assert kernels.column_conflicts([words], "padded") == [math.gcd(words + 1, 32)]


def test_xor_swizzle_removes_the_conflicts_and_is_a_permutation():
    for width, row_bytes in ((4, 128), (4, 256), (16, 128), (16, 256), (8, 128)):
        plain = kernels.tile_column_read(row_bytes, access_bytes=width)
        swz = kernels.tile_column_read(row_bytes, access_bytes=width, layout="xor")
        assert plain.degree > 1 and swz.degree == 1
        for r in range(16):  # each row's units land on the same set of offsets, permuted
            offs = sorted(kernels.tile_offset(r, c, row_bytes, access_bytes=width, layout="xor")
                          for c in range(0, row_bytes, width))
            assert offs == [r * row_bytes + c for c in range(0, row_bytes, width)]
    # ldmatrix's eight 16-byte rows of a 128-byte-row bf16 tile: 8-way conflict plain, none swizzled
    assert kernels.tile_column_read(128, access_bytes=16).degree == 8
    with pytest.raises(ValueError, match="whole"):
        kernels.tile_offset(1, 0, 96, layout="xor")
    with pytest.raises(ValueError, match="layout"):
        kernels.tile_offset(1, 0, 128, layout="zigzag")
    with pytest.raises(ValueError):
        kernels.tile_offset(1, 128, 128)  # column past the row


def test_bank_map_shape_and_values():
    m = kernels.bank_map(4, 128)
    assert len(m) == 4 and all(row == list(range(32)) for row in m)
    x = kernels.bank_map(32, 128, layout="xor")
    assert [row[0] for row in x] == list(range(32))  # column 0 of row r lands in bank r
    with pytest.raises(TypeError):
        kernels.column_conflicts("32")

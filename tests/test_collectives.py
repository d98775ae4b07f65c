"""Tests of ampere.collectives (the alpha-beta model; chapter: NVLink, NVSwitch and collectives)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ampere import collectives as C
from ampere import fabrics as F
from ampere import specs


# --- bus bandwidth -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("op,n,factor", [
    ("all_reduce", 8, 1.75), ("all_reduce", 2, 1.0), ("all_reduce", 4, 1.5),
    ("all_gather", 8, 0.875), ("reduce_scatter", 2, 0.5), ("broadcast", 8, 1.0), ("reduce", 3, 1.0),
    ("all_reduce", 1, 0.0), ("broadcast", 1, 0.0),
])
def test_busbw_factors_match_nccl_tests(op, n, factor):
    assert C.busbw_factor(op, n) == pytest.approx(factor)
    assert C.bus_bandwidth(op, 100e9, n) == pytest.approx(100e9 * factor)


def test_busbw_of_a_link_speed_ring_is_the_link_speed():
    # a ring all-reduce with no latency moving at B per direction has busbw == B, for every n
    for op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
        for n in (2, 3, 8, 64):
            t = C.collective_time(op, 1e9, n, 50e9, 0.0)
            assert C.bus_bandwidth(op, C.algorithm_bandwidth(1e9, t), n) == pytest.approx(50e9)


@pytest.mark.parametrize("bad,error", [(0, ValueError), (-1, ValueError), (2.0, TypeError), ("8", TypeError),
                                       (True, TypeError), (None, TypeError)])
def test_invalid_n_raises(bad, error):
    with pytest.raises(error, match="^n must be an integer"):
        C.busbw_factor("all_reduce", bad)
    with pytest.raises(error, match="^n must be an integer"):
        C.collective_time("all_reduce", 1e6, bad, 1e9, 1e-6)


def test_numpy_integer_n_is_accepted():
    assert C.busbw_factor("all_reduce", np.int64(8)) == pytest.approx(1.75)


def test_invalid_op_and_algorithm_raise_with_allowed_values():
    with pytest.raises(ValueError, match="op='allreduce'.*all_reduce"):
        C.bus_bandwidth("allreduce", 1e9, 8)
    with pytest.raises(ValueError, match="algorithm='butterfly'.*ring, tree"):
        C.collective_time("all_reduce", 1e6, 8, 1e9, 1e-6, algorithm="butterfly")
    with pytest.raises(ValueError, match="algorithm='tree' is not defined for op='all_gather'"):
        C.collective_time("all_gather", 1e6, 8, 1e9, 1e-6, algorithm="tree")
    with pytest.raises(ValueError, match="algbw_bytes_per_s"):
        C.bus_bandwidth("all_reduce", -1.0, 8)


@pytest.mark.parametrize("field,kwargs", [
    ("size_bytes", dict(size_bytes=-1)), ("link_bytes_per_s", dict(link_bytes_per_s=0)),
    ("latency_s", dict(latency_s=float("nan"))),
])
def test_invalid_sizes_and_rates_raise(field, kwargs):
    args = dict(op="all_reduce", size_bytes=1e6, n=4, link_bytes_per_s=1e9, latency_s=1e-6)
    args.update(kwargs)
    with pytest.raises(ValueError, match=field):
        C.collective_time(**args)


# --- alpha-beta formulas --------------------------------------------------------------------------------------

def test_ring_all_reduce_formula():
    n, S, B, a = 8, 256e6, 240e9, 5e-6
    expected = 2 * (n - 1) * a + 2 * (n - 1) / n * S / B
    assert C.collective_time("all_reduce", S, n, B, a) == pytest.approx(expected)


def test_all_gather_and_reduce_scatter_are_half_an_all_reduce():
    n, S, B, a = 8, 64e6, 100e9, 2e-6
    ar = C.collective_time("all_reduce", S, n, B, a)
    ag = C.collective_time("all_gather", S, n, B, a)
    rs = C.collective_time("reduce_scatter", S, n, B, a)
    assert ag == pytest.approx(rs) and ag + rs == pytest.approx(ar)


def test_tree_has_logarithmic_latency_and_ring_linear():
    # latency-only (S = 0): ring grows as 2(n-1), tree as 2 ceil(log2 n)
    assert C.collective_time("all_reduce", 0, 1024, 1e9, 1e-6) == pytest.approx(2 * 1023e-6)
    assert C.collective_time("all_reduce", 0, 1024, 1e9, 1e-6, "tree") == pytest.approx(20e-6)
    assert C.collective_time("all_reduce", 0, 1000, 1e9, 1e-6, "tree") == pytest.approx(20e-6)
    # bandwidth-only: tree moves 2S, ring 2(n-1)/n S, so the ring is never slower for large messages
    for n in (2, 8, 1024):
        ring = C.collective_time("all_reduce", 1e9, n, 1e9, 0.0)
        tree = C.collective_time("all_reduce", 1e9, n, 1e9, 0.0, "tree")
        assert ring <= tree
    assert C.collective_time("broadcast", 1e9, 16, 1e9, 1e-3, "tree") == pytest.approx(1.0 + 4e-3)
    assert C.collective_time("broadcast", 1e9, 16, 1e9, 1e-3) == pytest.approx(1.0 + 15e-3)


def test_single_rank_costs_nothing():
    for op in C.OPS:
        assert C.collective_time(op, 1e9, 1, 1e9, 1e-3) == 0.0


def test_alpha_beta_terms_are_the_columns_of_the_fit():
    a, b = C.alpha_beta_terms("all_reduce", 4)
    assert (a, b) == (6.0, 1.5)
    assert C.alpha_beta_terms("all_gather", 4) == (3.0, 0.75)
    assert C.alpha_beta_terms("broadcast", 4, "tree") == (2.0, 1.0)


# --- sizes solved from the model ------------------------------------------------------------------------------

@pytest.mark.parametrize("n,fraction", [(2, 0.5), (8, 0.9), (64, 0.99)])
def test_size_for_busbw_fraction_reaches_that_fraction(n, fraction):
    B, alpha = 240e9, 5e-6
    size = C.size_for_busbw_fraction("all_reduce", fraction, n, B, alpha)
    t = C.collective_time("all_reduce", size, n, B, alpha)
    assert C.bus_bandwidth("all_reduce", size / t, n) == pytest.approx(fraction * B, rel=1e-9)
    # the ring at 90 %: the bandwidth term is nine times the latency term, by hand
    if fraction == 0.9:
        a, b = C.alpha_beta_terms("all_reduce", n)
        assert b * size / B == pytest.approx(9 * a * alpha)


def test_size_for_busbw_fraction_tree_and_limits():
    B, alpha = 240e9, 5e-6
    size = C.size_for_busbw_fraction("all_reduce", 0.8, 8, B, alpha, "tree")
    t = C.collective_time("all_reduce", size, 8, B, alpha, "tree")
    assert C.bus_bandwidth("all_reduce", size / t, 8) == pytest.approx(0.8 * B)
    with pytest.raises(ValueError, match="never reaches.*0.875"):  # a tree all-reduce tops out at 7/8 of B
        C.size_for_busbw_fraction("all_reduce", 0.9, 8, B, alpha, "tree")
    with pytest.raises(ValueError, match="never reaches"):  # the ring approaches B, never reaches it
        C.size_for_busbw_fraction("all_reduce", 1.0, 8, B, alpha)
    assert C.size_for_busbw_fraction("all_reduce", 0.9, 8, B, 0.0) == 0.0  # no latency: any size will do
    with pytest.raises(ValueError, match="fraction"):
        C.size_for_busbw_fraction("all_reduce", 1.5, 8, B, alpha)
    with pytest.raises(TypeError, match="fraction"):
        C.size_for_busbw_fraction("all_reduce", "0.9", 8, B, alpha)
    with pytest.raises(ValueError, match="link_bytes_per_s"):
        C.size_for_busbw_fraction("all_reduce", 0.9, 8, 0.0, alpha)


def test_ring_tree_crossover_is_where_the_times_meet():
    B, alpha = 240e9, 5e-6
    s = C.ring_tree_crossover_bytes("all_reduce", 8, B, alpha)
    assert s == pytest.approx(32 * alpha * B)  # (14 - 6) alpha B / (2 - 1.75), the chapter's exercise
    ring = C.collective_time("all_reduce", s, 8, B, alpha)
    assert ring == pytest.approx(C.collective_time("all_reduce", s, 8, B, alpha, "tree"))
    assert C.collective_time("all_reduce", s / 2, 8, B, alpha, "tree") < C.collective_time(
        "all_reduce", s / 2, 8, B, alpha)  # the tree wins below the crossover
    with pytest.raises(ValueError, match="tree"):  # no tree all-gather in the model
        C.ring_tree_crossover_bytes("all_gather", 8, B, alpha)
    with pytest.raises(ValueError, match="never cross"):  # broadcast: same bytes, the tree always wins
        C.ring_tree_crossover_bytes("broadcast", 8, B, alpha)
    with pytest.raises(ValueError, match="never cross"):  # two ranks: the ring is never slower
        C.ring_tree_crossover_bytes("all_reduce", 2, B, alpha)


# --- link figures from the specs ------------------------------------------------------------------------------

def test_nvlink_figures_come_from_the_specs():
    a100 = specs.get("A100-SXM4-80GB")
    assert F.nvlink_bytes_per_s_per_direction(a100) == pytest.approx(300e9)
    assert a100.nvlink_bytes_per_s / a100.nvlink_links / 2 == pytest.approx(25e9)  # per link, per direction
    assert F.nvlink_effective_bytes_per_s("A100-SXM4-80GB") == pytest.approx(240e9)
    assert F.nvlink_bytes_per_s_per_direction("V100-SXM2-32GB") == pytest.approx(150e9)
    assert F.nvlink_bytes_per_s_per_direction("H100-SXM5-80GB") == pytest.approx(450e9)
    assert F.nvlink_bytes_per_s_per_direction("T4") == 0.0
    assert F.DGX_A100_INTER_BYTES_PER_S == pytest.approx(200e9)
    with pytest.raises(ValueError, match="not in the catalogue"):
        F.nvlink_bytes_per_s_per_direction("A100-SXM5")


# --- hierarchical all-reduce ------------------------------------------------------------------------------------

def test_hierarchical_one_node_is_a_ring():
    S = 1e9
    t = C.hierarchical_all_reduce_time(S, 1)
    assert t == pytest.approx(C.collective_time("all_reduce", S, 8, F.A100_INTRA_BYTES_PER_S,
                                                 F.A100_INTRA_LATENCY_S))


def test_hierarchical_phases_add_up_and_match_hand_formula():
    S, N, g, Bi, Be, ai, ae = 1e9, 16, 8, 240e9, 200e9, 5e-6, 10e-6
    parts = C.hierarchical_all_reduce_breakdown(S, N, g, Bi, Be, ai, ae)
    intra = 2 * (g - 1) * ai + 2 * (g - 1) / g * S / Bi
    inter = 2 * (N - 1) * ae + 2 * (N - 1) / N * S / Be
    assert isinstance(parts, C.AllReducePhases) and parts.gpus == N * g
    assert parts.reduce_scatter_s + parts.all_gather_s == pytest.approx(intra)
    assert parts.inter_all_reduce_s == pytest.approx(inter)
    assert parts.total_s == pytest.approx(intra + inter)
    assert parts.busbw_bytes_per_s == pytest.approx(2 * (N * g - 1) / (N * g) * S / (intra + inter))
    assert C.hierarchical_all_reduce_time(S, N, g, Bi, Be, ai, ae) == pytest.approx(intra + inter)


def test_hierarchical_bandwidth_term_saturates_and_tree_helps_latency():
    S = 680e6  # BERT-Large fp16 gradients
    t = [C.hierarchical_all_reduce_time(S, N, intra_latency_s=0.0, inter_latency_s=0.0) for N in (2, 16, 128, 1024)]
    assert all(a < b for a, b in zip(t, t[1:]))
    limit = 2 * (7 / 8) * S / F.A100_INTRA_BYTES_PER_S + 2 * S / F.DGX_A100_INTER_BYTES_PER_S
    assert t[-1] < limit and t[-1] > 0.99 * limit
    small = 1e3
    ring = C.hierarchical_all_reduce_time(small, 1024)
    tree = C.hierarchical_all_reduce_time(small, 1024, inter_algorithm="tree")
    assert tree < ring / 10


def test_hierarchical_invalid_inputs():
    with pytest.raises(ValueError, match="nodes must be an integer from 1 to 1000000 .*, got 0"):
        C.hierarchical_all_reduce_time(1e6, 0)
    with pytest.raises(ValueError, match="gpus_per_node"):
        C.hierarchical_all_reduce_time(1e6, 2, gpus_per_node=0)
    with pytest.raises(ValueError, match="inter_algorithm"):
        C.hierarchical_all_reduce_time(1e6, 2, inter_algorithm="mesh")
    with pytest.raises(ValueError, match="inter_bytes_per_s"):
        C.hierarchical_all_reduce_time(1e6, 2, inter_bytes_per_s=0)


# --- on node networks ---------------------------------------------------------------------------------------------

def test_all_reduce_time_on_a_network_is_a_ring_inside_and_a_rail_ring_across():
    S = 1e9
    d = F.DGX_A100
    # inside a node: the fixed overhead once, plus one NVLink hop per ring step
    assert C.all_reduce_time(S, 8) == pytest.approx(C.collective_time(
        "all_reduce", S, 8, F.A100_INTRA_BYTES_PER_S, F.A100_INTRA_LATENCY_S, overhead_s=F.A100_INTRA_OVERHEAD_S))
    assert C.all_reduce_time(8, 8) == pytest.approx(F.A100_INTRA_OVERHEAD_S + 14 * F.A100_INTRA_LATENCY_S, rel=1e-4)
    # across nodes: 2(N-1) of the 2(n-1) hops cross the network, bandwidth min(B_intra, B_node) (pipelined)
    n, N = 64, 8
    by_hand = (d.inter_overhead_s + (2 * (n - 1) - 2 * (N - 1)) * d.intra_latency_s + 2 * (N - 1) * d.inter_latency_s
               + 2 * (n - 1) / n * S / min(d.intra_bytes_per_s, d.inter_bytes_per_s))
    assert C.all_reduce_time(S, n) == pytest.approx(by_hand)
    tree = d.inter_overhead_s + 2 * (7 * d.intra_latency_s + 3 * d.inter_latency_s) + 2 * S / d.ring_bytes_per_s
    assert C.all_reduce_time(S, n, inter_algorithm="tree") == pytest.approx(tree)
    # a 4-HCA node has half the injection bandwidth: the bandwidth term doubles (latency aside)
    four = F.node_network(hcas_per_node=4, intra_latency_s=0.0, inter_latency_s=0.0, inter_overhead_s=0.0)
    eight = F.node_network(hcas_per_node=8, intra_latency_s=0.0, inter_latency_s=0.0, inter_overhead_s=0.0)
    assert C.all_reduce_time(S, 128, four) == pytest.approx(2 * C.all_reduce_time(S, 128, eight))
    # the rings use all eight rails: 200 GB/s per node, eight times one adapter's 25 GB/s
    assert 2 * 127 / 128 * S / C.all_reduce_time(S, 128, eight) == pytest.approx(200e9)
    with pytest.raises(ValueError, match="gpus=12 must be <= 8 or a multiple"):
        C.all_reduce_time(S, 12)
    with pytest.raises(TypeError, match="NodeNetwork"):
        C.all_reduce_time(S, 16, network="DGX A100")
    assert C.all_reduce_time(S, np.int64(16)) == C.all_reduce_time(S, 16)
    assert C.all_reduce_time(S, 1) == 0.0


def test_tree_inside_a_node_is_a_chain_never_faster_than_the_ring():
    for S in (8, 1e3, 1e6, 1e9):
        for n in (2, 4, 8):
            ring = C.nccl_collective_time("all_reduce", S, n)
            chain = C.nccl_collective_time("all_reduce", S, n, algorithm="tree")
            assert chain >= ring
    assert C.nccl_collective_time("all_reduce", 8, 8, algorithm="tree") == pytest.approx(
        C.nccl_collective_time("all_reduce", 8, 8), rel=1e-3)


def test_network_collective_time_other_ops():
    S = 64e6
    d = F.DGX_A100
    assert C.network_collective_time("all_gather", S, 8) == pytest.approx(C.collective_time(
        "all_gather", S, 8, F.A100_INTRA_BYTES_PER_S, F.A100_INTRA_LATENCY_S, overhead_s=F.A100_INTRA_OVERHEAD_S))
    by_hand = d.inter_overhead_s + 14 * d.intra_latency_s + 1 * d.inter_latency_s + 15 / 16 * S / 200e9
    assert C.network_collective_time("all_gather", S, 16) == pytest.approx(by_hand)
    assert C.network_collective_time("all_reduce", S, 16) == C.all_reduce_time(S, 16)
    with pytest.raises(ValueError, match="op='alltoall'"):
        C.network_collective_time("alltoall", S, 8)
    with pytest.raises(ValueError, match="tree"):
        C.nccl_collective_time("all_gather", S, 16, algorithm="tree")
    with pytest.raises(ValueError, match="no compute-fabric adapters"):
        C.nccl_collective_time("all_reduce", S, 16, F.DGX_A100.with_(hcas_per_node=0, hca_bytes_per_s=0.0))
    with pytest.raises(ValueError, match="algorithm"):
        C.nccl_collective_time("all_reduce", S, 8, algorithm="mesh")
    with pytest.raises(TypeError, match="gpus"):
        C.nccl_collective_time("all_reduce", S, 8.0)


def test_import_does_not_load_torch():
    code = "import sys, ampere.collectives, ampere.fabrics, ampere.pricing; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_overhead_is_paid_once_and_validated():
    t0 = C.collective_time("all_reduce", 1e6, 8, 240e9, 1e-6)
    assert C.collective_time("all_reduce", 1e6, 8, 240e9, 1e-6, overhead_s=8e-6) == pytest.approx(t0 + 8e-6)
    assert C.collective_time("all_reduce", 1e6, 1, 240e9, 1e-6, overhead_s=8e-6) == 0.0  # one rank: nothing to do
    with pytest.raises(ValueError, match="overhead_s must be >= 0"):
        C.collective_time("all_reduce", 1e6, 8, 240e9, 1e-6, overhead_s=-1e-6)
    with pytest.raises(TypeError, match="overhead_s must be a number"):
        C.collective_time("all_reduce", 1e6, 8, 240e9, 1e-6, overhead_s="8us")
    # the 90 % size grows with the overhead: S = x (o + a alpha) B / (b (1 - x)) for the ring
    s = C.size_for_busbw_fraction("all_reduce", 0.9, 8, 240e9, 0.5e-6, overhead_s=8e-6)
    assert s == pytest.approx(0.9 * (8e-6 + 14 * 0.5e-6) * 240e9 / (1.75 * 0.1))
    t = C.collective_time("all_reduce", s, 8, 240e9, 0.5e-6, overhead_s=8e-6)
    assert C.bus_bandwidth("all_reduce", s / t, 8) == pytest.approx(0.9 * 240e9)
    parts = C.hierarchical_all_reduce_breakdown(1e9, 4, overhead_s=10e-6)
    bare = C.hierarchical_all_reduce_breakdown(1e9, 4)
    assert parts.total_s == pytest.approx(bare.total_s + 10e-6) and bare.overhead_s == 0.0
    assert C.hierarchical_all_reduce_time(1e9, 1, overhead_s=5e-6) == pytest.approx(
        C.hierarchical_all_reduce_time(1e9, 1) + 5e-6)


def test_nccl_breakdown_is_the_time_term_by_term():
    d = F.DGX_A100
    for op, gpus in (("all_reduce", 8), ("all_reduce", 64), ("all_gather", 16), ("reduce_scatter", 4)):
        for algo in (("ring", "tree") if op == "all_reduce" else ("ring",)):
            b = C.nccl_collective_breakdown(op, 1e8, gpus, d, algo)
            assert isinstance(b, C.CollectiveTime)
            assert b.total_s == pytest.approx(C.nccl_collective_time(op, 1e8, gpus, d, algo))
            assert b.total_s == pytest.approx(b.latency_s + b.bandwidth_s)
            assert 0 < b.latency_fraction < 1
            assert b.busbw_bytes_per_s == pytest.approx(C.bus_bandwidth(op, 1e8 / b.total_s, gpus))
    ring = C.nccl_collective_breakdown("all_reduce", 1e9, 64)
    assert (ring.nodes, ring.intra_hops, ring.inter_hops, ring.traffic) == (8, 2 * 63 - 14, 14, 2 * 63 / 64)
    assert ring.bus_bytes_per_s == d.ring_bytes_per_s
    tree = C.nccl_collective_breakdown("all_reduce", 1e9, 64, algorithm="tree")
    assert (tree.intra_hops, tree.inter_hops, tree.traffic) == (14, 6, 2.0)
    one = C.nccl_collective_breakdown("all_reduce", 1e9, 1)
    assert one.total_s == 0.0 and one.busbw_bytes_per_s == 0.0 and one.latency_fraction == 0.0


def test_collective_time_records_refuse_bad_fields():
    good = dict(op="all_reduce", algorithm="ring", size_bytes=1e6, gpus=8, nodes=1, overhead_s=8e-6, intra_hops=14,
                intra_hop_s=6e-7, inter_hops=0, inter_hop_s=5e-6, traffic=1.75, bus_bytes_per_s=240e9)
    assert C.CollectiveTime(**good).total_s > 0
    for field, bad, error in (("gpus", 0, ValueError), ("gpus", 2.0, TypeError), ("size_bytes", -1.0, ValueError),
                              ("traffic", 3.0, ValueError), ("nodes", 9, ValueError), ("op", "alltoall", ValueError),
                              ("overhead_s", 2.0, ValueError), ("bus_bytes_per_s", 0.0, ValueError)):
        with pytest.raises(error, match=field):
            C.CollectiveTime(**{**good, field: bad})
    with pytest.raises(ValueError, match="gpus"):
        C.nccl_collective_breakdown("all_reduce", 1e6, 10**12)
    with pytest.raises(ValueError, match="latency_s"):
        C.collective_time("all_reduce", 1e6, 8, 240e9, 5.0)
    with pytest.raises(ValueError, match="intra_latency_s"):
        C.hierarchical_all_reduce_time(1e6, 2, intra_latency_s=-1.0)
    with pytest.raises(ValueError, match="nodes"):
        C.AllReducePhases(1e6, 0, 8, 1e-3, 1e-3, 1e-3)

"""Properties of ampere.collectives: the alpha-beta model and NCCL's collectives on node networks.

Valid input gives a finite, non-negative time or bandwidth of the documented type (and the model's own
invariants: busbw = algbw x factor, the terms add up, more bytes never take less time); invalid input is
refused with a ValueError or TypeError naming the argument.
"""

import math

from hypothesis import given
from hypothesis import strategies as st

from ampere import collectives as C
from ampere import fabrics as F

from .harness import (INF, NAN, answers, bad_floats, bad_ints, bad_names, covers, finite_floats, not_numbers, rejects,
                      rejects_any)


def bad_rates(hi: float = F.MAX_BYTES_PER_S) -> st.SearchStrategy:
    """Not a rate in (0, hi]: zero, negative, above ``hi``, NaN, infinities, non-numbers (10**12 is a valid
    rate here: 1 TB/s)."""
    return st.one_of(st.just(NAN), st.just(INF), st.just(-INF), not_numbers(),
                     st.floats(max_value=0.0, allow_nan=False, allow_infinity=False),
                     st.floats(min_value=hi, exclude_min=True, allow_nan=False, allow_infinity=False))

OPS = st.sampled_from(C.OPS)
RANKS = st.integers(1, 4096)
SIZES = finite_floats(0.0, 1e12)
RATES = finite_floats(1e6, 1e13)
LATENCIES = finite_floats(0.0, 1e-3)
BAD_RANKS = bad_ints(1, F.MAX_GPUS)
BAD_SIZE = bad_floats(0.0, strict=False).filter(lambda v: v != 0 or isinstance(v, bool))
BAD_RATE = bad_rates()
BAD_LATENCY = bad_floats(0.0, F.MAX_LATENCY_S, strict=False).filter(lambda v: not (v == 0 and not isinstance(v, bool)))


@covers(C.check_op, C.busbw_factor, C.bus_bandwidth, C.algorithm_bandwidth)
@given(OPS, RANKS, finite_floats(0.0, 1e12), finite_floats(1e-9, 1e3), st.data())
def test_bus_bandwidth_is_algbw_times_the_factor(op, n, algbw, t, data):
    assert answers(C.check_op, op, type_=str) == op
    f = answers(C.busbw_factor, op, n, type_=float)
    assert 0.0 <= f <= 2.0 and (f == 0.0) == (n == 1)
    assert answers(C.bus_bandwidth, op, algbw, n, type_=float) == algbw * f
    assert answers(C.algorithm_bandwidth, 1e6, t, type_=float) == 1e6 / t
    rejects(C.check_op, "op", data.draw(bad_names(C.OPS)))
    rejects(C.busbw_factor, "n", op, data.draw(BAD_RANKS))
    rejects(C.bus_bandwidth, "algbw_bytes_per_s", op, data.draw(BAD_RATE.filter(lambda v: v != 0 or
                                                                                isinstance(v, bool))), n)
    rejects(C.algorithm_bandwidth, "time_s", 1e6, data.draw(bad_floats(0.0)))
    rejects(C.algorithm_bandwidth, "size_bytes", data.draw(BAD_SIZE), 1.0)


@covers(C.alpha_beta_terms, C.collective_time)
@given(OPS, RANKS, st.sampled_from(C.ALGORITHMS), SIZES, RATES, LATENCIES, LATENCIES, st.data())
def test_the_alpha_beta_time_is_its_terms(op, n, algo, size, bw, alpha, overhead, data):
    if algo == "tree" and op not in C.TREE_OPS:
        rejects(C.alpha_beta_terms, "algorithm", op, n, algo)
        algo = "ring"
    a, b = answers(C.alpha_beta_terms, op, n, algo, type_=tuple)
    assert a >= 0 and 0 <= b <= 2
    t = answers(C.collective_time, op, size, n, bw, alpha, algo, overhead, type_=float)
    assert t == (0.0 if n == 1 else overhead + a * alpha + b * size / bw)
    assert C.collective_time(op, 2 * size, n, bw, alpha, algo, overhead) >= t
    assert C.collective_time(op, size, n, math.inf, alpha, algo, overhead) <= t  # inf: a link without a limit
    rejects_any(data, C.collective_time, {"op": op, "size_bytes": size, "n": n, "link_bytes_per_s": bw,
                                          "latency_s": alpha, "algorithm": "ring", "overhead_s": overhead}, {
        "op": bad_names(C.OPS), "size_bytes": BAD_SIZE, "n": BAD_RANKS,
        "link_bytes_per_s": BAD_RATE.filter(lambda v: v != math.inf),
        "latency_s": BAD_LATENCY, "overhead_s": BAD_LATENCY, "algorithm": bad_names(C.ALGORITHMS)})


@covers(C.size_for_busbw_fraction, C.ring_tree_crossover_bytes)
@given(st.integers(2, 1024), finite_floats(0.05, 0.95), RATES, finite_floats(1e-7, 1e-4), st.data())
def test_the_size_that_reaches_a_fraction_of_the_link_reaches_it(n, x, bw, alpha, data):
    s = answers(C.size_for_busbw_fraction, "all_reduce", x, n, bw, alpha, type_=float)
    t = C.collective_time("all_reduce", s, n, bw, alpha)
    assert math.isclose(C.bus_bandwidth("all_reduce", s / t, n), x * bw, rel_tol=1e-6)
    rejects(C.size_for_busbw_fraction, "fraction", "all_reduce", data.draw(bad_floats(0.0, 1.0, strict=False)
                                                                              .filter(lambda v: v != 0 or
                                                                                      isinstance(v, bool))), n, bw,
            alpha)
    rejects(C.size_for_busbw_fraction, "latency_s", "all_reduce", x, n, bw, data.draw(BAD_LATENCY))
    if n >= 4:
        cross = answers(C.ring_tree_crossover_bytes, "all_reduce", n, bw, alpha, type_=float)
        ring = C.collective_time("all_reduce", cross, n, bw, alpha)
        tree = C.collective_time("all_reduce", cross, n, bw, alpha, "tree")
        assert math.isclose(ring, tree, rel_tol=1e-6)
    rejects(C.ring_tree_crossover_bytes, "op", "all_gather", n, bw, alpha)  # the tree is not defined there
    rejects(C.ring_tree_crossover_bytes, "link_bytes_per_s", "all_reduce", n, data.draw(BAD_RATE), alpha)


@covers(C.AllReducePhases, C.hierarchical_all_reduce_breakdown, C.hierarchical_all_reduce_time)
@given(SIZES, st.integers(1, 4096), st.integers(1, 16), st.sampled_from(C.ALGORITHMS), st.data())
def test_hierarchical_phases_add_up(size, nodes, g, algo, data):
    parts = answers(C.hierarchical_all_reduce_breakdown, size, nodes, g, inter_algorithm=algo,
                    type_=C.AllReducePhases)
    assert parts.gpus == nodes * g and parts.total_s >= 0 and parts.busbw_bytes_per_s >= 0
    assert answers(C.hierarchical_all_reduce_time, size, nodes, g, inter_algorithm=algo, type_=float) == parts.total_s
    rejects_any(data, C.hierarchical_all_reduce_time, {"size_bytes": size, "nodes": nodes, "gpus_per_node": g}, {
        "size_bytes": BAD_SIZE, "nodes": BAD_RANKS, "gpus_per_node": bad_ints(1, F.MAX_GPUS_PER_NODE),
        "intra_bytes_per_s": BAD_RATE, "inter_bytes_per_s": BAD_RATE, "intra_latency_s": BAD_LATENCY,
        "inter_latency_s": BAD_LATENCY, "inter_algorithm": bad_names(C.ALGORITHMS), "overhead_s": BAD_LATENCY})
    good = dict(size_bytes=size, nodes=nodes, gpus_per_node=g, reduce_scatter_s=1e-3, inter_all_reduce_s=1e-3,
                all_gather_s=1e-3)
    answers(C.AllReducePhases, **good, type_=C.AllReducePhases)
    rejects_any(data, C.AllReducePhases, good, {
        "size_bytes": BAD_SIZE, "nodes": bad_ints(1, F.MAX_GPUS), "gpus_per_node": bad_ints(1, F.MAX_GPUS_PER_NODE),
        "reduce_scatter_s": bad_floats(0.0, strict=False).filter(lambda v: v != 0 or isinstance(v, bool)),
        "overhead_s": bad_floats(0.0, strict=False).filter(lambda v: v != 0 or isinstance(v, bool))})


NETWORKS = st.sampled_from(list(F.PRESETS.values()))


@covers(C.CollectiveTime, C.nccl_collective_breakdown, C.nccl_collective_time, C.all_reduce_time,
        C.network_collective_time)
@given(OPS, SIZES, st.integers(1, 512), NETWORKS, st.sampled_from(C.ALGORITHMS), st.data())
def test_nccl_time_is_its_terms_on_every_network(op, size, nodes, net, algo, data):
    gpus = data.draw(st.integers(1, net.gpus_per_node)) if nodes == 1 else nodes * net.gpus_per_node
    if algo == "tree" and op != "all_reduce":
        rejects(C.nccl_collective_breakdown, "algorithm", op, size, gpus, net, algo)
        algo = "ring"
    b = answers(C.nccl_collective_breakdown, op, size, gpus, net, algo, type_=C.CollectiveTime)
    assert b.total_s == (0.0 if gpus == 1 else b.latency_s + b.bandwidth_s)
    assert 0.0 <= b.latency_fraction <= 1.0 and b.busbw_bytes_per_s >= 0
    assert answers(C.nccl_collective_time, op, size, gpus, net, algo, type_=float) == b.total_s
    if op == "all_reduce":
        assert answers(C.all_reduce_time, size, gpus, net, algo, type_=float) == b.total_s
    if algo == "ring":
        assert answers(C.network_collective_time, op, size, gpus, net, type_=float) == b.total_s
    if gpus > 1:
        assert b.bus_bytes_per_s <= net.intra_bytes_per_s  # never faster than NVLink (or PCIe) inside
    rejects_any(data, C.nccl_collective_time, {"op": op, "size_bytes": size, "gpus": gpus, "network": net}, {
        "op": bad_names(C.OPS), "size_bytes": BAD_SIZE, "gpus": BAD_RANKS,
        "network": st.one_of(st.text(max_size=8), st.none(), st.integers()), "algorithm": bad_names(C.ALGORITHMS)})
    if net.gpus_per_node > 1:  # a GPU count that splits a node
        rejects(C.all_reduce_time, "gpus", size, net.gpus_per_node * 2 + 1, net)
    good = dict(op="all_reduce", algorithm="ring", size_bytes=1e6, gpus=16, nodes=2, overhead_s=1e-5,
                intra_hops=28, intra_hop_s=1e-6, inter_hops=2, inter_hop_s=5e-6, traffic=1.875, bus_bytes_per_s=2e11)
    rejects_any(data, C.CollectiveTime, good, {
        "op": bad_names(C.OPS), "algorithm": bad_names(C.ALGORITHMS), "size_bytes": BAD_SIZE,
        "gpus": bad_ints(1, F.MAX_GPUS), "nodes": bad_ints(1, 16), "overhead_s": BAD_LATENCY,
        "traffic": bad_floats(0.0, 2.0, strict=False).filter(lambda v: v != 0 or isinstance(v, bool)),
        "bus_bytes_per_s": BAD_RATE})

"""Properties of ampere.cluster: the DGX A100, fat trees, SuperPODs, published figures, all-reduce and money.

Valid input gives a finite answer of the documented type within its bounds (and the model's invariants: a
non-blocking tree has as many uplinks as downlinks, the time of an all-reduce is its terms, money rounds to
two figures); invalid input is refused with a ValueError or TypeError naming the argument.
"""

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import cluster as cl
from ampere import collectives, fabrics

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, covers, finite_floats,
                      not_lists, rejects, rejects_any)
from .test_collectives import bad_rates

GPUS40_80 = st.sampled_from(["A100-SXM4-40GB", "A100-SXM4-80GB", "a100-sxm4-80gb"])
SMALL_PODS = st.integers(1, 600)
NOT_NETWORKS = st.one_of(st.text(max_size=8), st.none(), st.integers())


def _replace(obj, data, bad):
    """A copy of the dataclass ``obj`` with one field (drawn from ``bad``: field -> strategy) made invalid."""
    field = data.draw(st.sampled_from(sorted(bad)), label="field")
    value = data.draw(bad[field], label=f"invalid {field}")
    fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    rejects(type(obj), field, **{**fields, field: value})


@covers(cl.dgx_a100, cl.DGXNode)
@given(GPUS40_80, st.data())
def test_a_dgx_node_is_eight_gpus_and_refuses_bad_fields(gpu, data):
    node = answers(cl.dgx_a100, gpu, type_=cl.DGXNode)
    assert node.gpus == 8 and node.compute_nics == 8 and node.cpu_cores == 128
    assert node.peak_flops("fp16", sparse=True) == 2 * node.peak_flops("fp16")
    rejects(cl.dgx_a100, "catalogue", data.draw(st.sampled_from(["A100-SXM5", "NoSuchGPU"])))
    _replace(node, data, {"gpus": bad_ints(1, fabrics.MAX_GPUS_PER_NODE), "max_power_w": bad_floats(0.0),
                          "name": st.one_of(st.integers(), st.none()), "gpu": st.one_of(st.text(max_size=4), st.none()),
                          "compute_nics": bad_ints(0, fabrics.MAX_HCAS_PER_NODE),
                          "notes": st.one_of(st.text(min_size=1, max_size=3), st.integers()),
                          "list_price_usd": st.one_of(st.just(-1.0), st.just(float("nan")), st.text(max_size=2))})


@covers(cl.fat_tree, cl.Fabric, cl.two_level_max_nodes, cl.three_level_max_nodes, cl.fat_tree_max_ports,
        cl.switch_lower_bound)
@given(SMALL_PODS, st.sampled_from([(8, 20, 40), (8, 32, 64), (2, 2, 4), (4, 8, 16)]), st.data())
def test_fat_trees_are_non_blocking_and_at_least_the_counting_bound(nodes, shape, data):
    rails, su, k = shape
    limit = answers(cl.three_level_max_nodes, rails, su, k, type_=int)
    two = answers(cl.two_level_max_nodes, rails, su, k, type_=int)
    assert 0 <= two <= limit
    ports = answers(cl.fat_tree_max_ports, k, data.draw(st.integers(1, 3)), type_=int)
    assert ports >= k
    if nodes > limit:
        rejects(cl.fat_tree, "nodes", nodes, rails, su, k)
        return
    f = answers(cl.fat_tree, nodes, rails, su, k, type_=cl.Fabric)
    lb = answers(cl.switch_lower_bound, nodes, rails, su, k, type_=dict)
    assert f.switches >= sum(lb.values()) and f.levels == (1 if f.spine_switches == 0 else 2 if not f.core_switches
                                                           else 3)
    assert f.bisection_bytes_per_s == f.end_ports / 2 * f.port_bytes_per_s
    rejects_any(data, cl.fat_tree, {"nodes": nodes, "rails": rails, "su_nodes": su, "switch_ports": k}, {
        "nodes": bad_ints(1, limit), "rails": bad_ints(1, 64), "switch_ports": bad_ints(2, 512),
        "su_nodes": bad_ints(1, k - su), "port_bytes_per_s": bad_rates(),
        "optical_tiers": st.one_of(st.just(["fibre"]), st.just("node_leaf"), st.integers(), st.none())})
    rejects(cl.fat_tree_max_ports, "levels", k, data.draw(bad_ints(1, 3)))
    rejects(cl.switch_lower_bound, "uplinks_per_leaf", nodes, rails, su, k, data.draw(bad_ints(1, su)
                                                                                     .filter(lambda v: v is not None)))
    _replace(f, data, {"nodes": bad_ints(1), "levels": bad_ints(1, 3), "leaf_switches": bad_ints(0),
                       "port_bytes_per_s": bad_rates(), "optical_tiers": st.one_of(st.integers(), st.just("node_leaf"),
                                                                                   st.just(("fibre",)))})


@covers(cl.superpod, cl.SuperPOD, cl.scaling_table)
@given(SMALL_PODS, GPUS40_80, finite_floats(0.0, 1e4), st.data())
def test_a_superpod_is_nodes_plus_fabric_plus_power(nodes, gpu, switch_w, data):
    pod = answers(cl.superpod, nodes, gpu, switch_power_w=switch_w, type_=cl.SuperPOD)
    assert pod.gpus == 8 * nodes and pod.power_w == pod.node_power_w + pod.switches * switch_w
    assert pod.peak_flops("fp16", sparse=True) == 2 * pod.peak_flops("fp16")
    rows = answers(cl.scaling_table, [nodes, 20], type_=list)
    assert rows[0]["nodes"] == nodes and rows[0]["switches"] >= rows[0]["lower_bound"]
    rejects_any(data, cl.superpod, {"nodes": nodes}, {
        "nodes": bad_ints(1, 2000), "gpu": st.sampled_from(["NoSuchGPU", "A100"]),
        "switch_ports": bad_ints(21, 512), "switch_power_w": bad_floats(0.0, 1e4, strict=False).filter(
            lambda v: v != 0 or isinstance(v, bool)),
        "su_nodes": st.sampled_from([0, -1, True, 2.5, "20", None, 40])})
    rejects(cl.scaling_table, "node_counts", data.draw(st.one_of(st.just([0]), st.just([2.0]), st.just(["20"]))))
    _replace(pod, data, {"node": st.one_of(st.none(), st.text(max_size=3)), "fabric": st.one_of(st.none(), st.integers()),
                         "switch_power_w": bad_floats(0.0, strict=False).filter(lambda v: v != 0 or isinstance(v, bool))})


DESIGNS = cl.reference_designs()
ROWS = cl.reference_counts()


@covers(cl.reference_designs, cl.reference_design, cl.reference_counts, cl.reference_fabric, cl.compare_counts,
        cl.design_limits, cl.check_all, cl.b200_reference, cl.ReferenceDesign, cl.ReferenceCounts)
@given(st.sampled_from(DESIGNS), st.sampled_from(ROWS), st.data())
def test_reference_designs_reproduce_their_tables(design, row, data):
    assert answers(cl.reference_design, design.id, type_=cl.ReferenceDesign) == design
    assert all(isinstance(r, cl.ReferenceCounts) for r in answers(cl.reference_counts, row.design, type_=tuple))
    assert answers(cl.compare_counts, row, type_=dict)["match"]
    f = answers(cl.reference_fabric, row, type_=cl.Fabric)
    assert f.nodes == row.nodes
    lim = answers(cl.design_limits, design, type_=dict)
    assert all(v >= 0 for v in lim.values())
    assert answers(cl.b200_reference, type_=tuple) and answers(cl.check_all, type_=tuple)[1] is True
    ids = [d.id for d in DESIGNS]
    rejects(cl.reference_design, "design_id", data.draw(bad_names(ids)))
    rejects(cl.reference_counts, "design_id", data.draw(bad_names(ids).filter(lambda v: v is not None)))
    for fn in (cl.compare_counts, cl.reference_fabric):
        rejects(fn, "row", data.draw(st.one_of(st.none(), st.integers(), st.just(design))))
    rejects(cl.design_limits, "design", data.draw(st.one_of(st.none(), st.text(max_size=3), st.just(row))))
    _replace(design, data, {"rails": bad_ints(1, 64), "switch_ports": bad_ints(1, 512), "year": bad_ints(1, 2100)
                            .filter(lambda v: v is not None), "id": st.one_of(st.integers(), st.none())})
    _replace(row, data, {"nodes": bad_ints(1), "leaf_switches": bad_ints(0), "design": st.one_of(st.integers(),
                                                                                                  st.none())})
    rejects(design.fabric, "nodes", data.draw(bad_ints(1, fabrics.MAX_GPUS // design.gpus_per_node)
                                              .filter(lambda v: v is not None)))


@covers(cl.tapers, cl.Taper, cl.pattern_slowdown)
@given(st.integers(20, 300), st.data())
def test_tapers_save_switches_and_slow_down_only_what_leaves_the_su(nodes, data):
    base, half = answers(cl.tapers, nodes, (20, 10), type_=list)
    assert isinstance(half, cl.Taper) and base.switches_saved == 0 and half.switches_saved >= 0
    assert half.slowdowns["rail_ring"] == 1.0 and 1.0 <= half.slowdowns["all_to_all"] <= 2.0
    for p in cl.PATTERNS:
        assert answers(cl.pattern_slowdown, half.fabric, p, type_=float) >= 1.0
    rejects(cl.pattern_slowdown, "pattern", half.fabric, data.draw(bad_names(cl.PATTERNS)))
    rejects(cl.pattern_slowdown, "fabric", data.draw(st.one_of(st.none(), st.integers())), "all_to_all")
    rejects(cl.tapers, "uplinks", nodes, data.draw(st.one_of(st.just(()), st.just((0,)), st.just((2.5,)),
                                                             st.just((True,)), st.integers(), st.none())))
    _replace(half, data, {"ratio": bad_floats(0.0), "bisection_fraction": bad_floats(0.0, 1.0),
                          "slowdowns": st.one_of(st.none(), st.just([1.0]))})


@covers(cl.selene, cl.Top500Entry, cl.green500_top, cl.mlperf)
@given(st.sampled_from(cl.selene()), st.data())
def test_selene_and_mlperf_are_read_from_data(entry, data):
    assert isinstance(entry, cl.Top500Entry) and entry.gpus == 8 * entry.nodes
    assert len(answers(cl.selene, type_=tuple)) == 2
    assert answers(cl.green500_top, type_=object).figures["efficiency_gflop_per_w"] > 20
    assert 0 < entry.fraction_of_gpu_peak() < 1
    clock = answers(entry.implied_gpu_clock_hz, data.draw(st.booleans()), type_=object)
    assert clock is None or 1e9 < clock < 1.5e9
    assert answers(entry.cpu_fp64_peak_flops, 16, type_=float) > 0
    rounds = sorted({r.params["round"] for r in cl.mlperf()})
    r = data.draw(st.sampled_from(rounds))
    assert all(x.params["round"] == r for x in answers(cl.mlperf, r, type_=list))
    assert all(x.params["benchmark"] == "BERT" for x in answers(cl.mlperf, benchmark="BERT", type_=list))
    rejects(cl.mlperf, "round_", data.draw(bad_names(rounds).filter(lambda v: v is not None)))
    rejects(cl.mlperf, "benchmark", benchmark=data.draw(st.sampled_from(["NoSuchBenchmark", "", 3, "bert"])))
    rejects(entry.implied_gpu_clock_hz, "include_cpus", data.draw(bad_booleans()))
    rejects(entry.cpu_fp64_peak_flops, "flop_per_cycle", data.draw(bad_ints(1, 1024)))
    _replace(entry, data, {"nodes": bad_ints(1, fabrics.MAX_GPUS), "rmax_flops": bad_floats(0.0).filter(
        lambda v: v != 1e12), "top500_rank": bad_ints(1, 500).filter(lambda v: v is not None),
        "source": st.one_of(st.integers(), st.just(""))})


@covers(cl.pod_all_reduce, cl.serial_all_reduce, cl.rail_all_reduce, cl.all_reduce_scaling, cl.all_reduce_checks)
@given(finite_floats(1e5, 1e12), st.integers(1, 4096), st.sampled_from([2.0, 4.0]), st.sampled_from(["ring", "tree"]),
       st.data())
def test_pod_all_reduce_is_the_collectives_model(params, nodes, bpp, algo, data):
    t = answers(cl.pod_all_reduce, params, nodes, bpp, inter_algorithm=algo, type_=collectives.CollectiveTime)
    assert t.total_s == collectives.nccl_collective_time("all_reduce", params * bpp, 8 * nodes, fabrics.DGX_A100, algo)
    s = answers(cl.serial_all_reduce, params, nodes, bpp, inter_algorithm=algo, type_=collectives.AllReducePhases)
    assert s.total_s > 0 and s.gpus == 8 * nodes
    assert answers(cl.rail_all_reduce, params * bpp / 8, nodes, algo, type_=float) >= 0
    rows = answers(cl.all_reduce_scaling, [nodes], cl.GRADIENT_MODELS[:1], bpp, algo, type_=list)
    assert rows[0]["total_s"] == cl.pod_all_reduce(cl.GRADIENT_MODELS[0][1], nodes, bpp, inter_algorithm=algo).total_s
    checks = answers(cl.all_reduce_checks, type_=list)
    assert all(0.8 < c["ring_ratio"] <= 1.0 for c in checks)
    for fn in (cl.pod_all_reduce, cl.serial_all_reduce):
        rejects_any(data, fn, {"params": params, "nodes": nodes}, {
            "params": bad_floats(0.0, 1e15).filter(lambda v: v != 1e12), "nodes": bad_ints(1, fabrics.MAX_GPUS // 8),
            "bytes_per_param": bad_floats(0.0, 16.0).filter(lambda v: v != 1e12), "network": NOT_NETWORKS,
            "inter_algorithm": bad_names(collectives.ALGORITHMS)})
    rejects_any(data, cl.rail_all_reduce, {"size_bytes": params, "nodes": nodes}, {
        "size_bytes": bad_floats(0.0, strict=False).filter(lambda v: v not in (0, 1e12) or isinstance(v, bool)),
        "nodes": bad_ints(1, fabrics.MAX_GPUS), "algorithm": bad_names(collectives.ALGORITHMS), "network": NOT_NETWORKS})
    rejects_any(data, cl.all_reduce_scaling, {"node_counts": [nodes]}, {
        "node_counts": st.one_of(not_lists(), st.just([0]), st.just([2.0])), "models": st.one_of(
            st.just("GPT"), st.just([]), st.just([("GPT", -1.0, "x")]), st.just([(1, 1e9, "x")])),
        "inter_algorithm": bad_names(collectives.ALGORITHMS), "network": NOT_NETWORKS})
    rejects(cl.all_reduce_checks, "size_bytes", data.draw(bad_floats(0.0, 2.0**40).filter(lambda v: v != 1e12)))


@covers(cl.cloud_offers, cl.cloud_offer, cl.Ownership, cl.ownership_usd_per_gpu_hour, cl.break_even_utilization,
        cl.BreakEven, cl.break_even)
@given(finite_floats(0.05, 1.0), finite_floats(0.1, 50.0), finite_floats(0.0, 1e5), st.data())
def test_owning_costs_fall_with_utilisation_and_break_even_says_so(u, price, opex, data):
    offers = answers(cl.cloud_offers, type_=tuple)
    o = data.draw(st.sampled_from(offers))
    assert answers(cl.cloud_offer, o.instance, type_=object) == o
    own = answers(cl.Ownership, opex_usd_per_year=opex, type_=cl.Ownership)
    cost = answers(cl.ownership_usd_per_gpu_hour, own, u, type_=float)
    assert cost >= cl.ownership_usd_per_gpu_hour(own, 1.0) > 0
    be = answers(cl.break_even, price, own, type_=cl.BreakEven)
    assert be.utilization == cl.break_even_utilization(price, own) and isinstance(be.verdict, str)
    assert be.breaks_even == (be.utilization <= 1.0)
    rejects(cl.cloud_offer, "instance", data.draw(bad_names([x.instance for x in offers])))
    rejects_any(data, cl.Ownership, {}, {
        "capex_usd": bad_floats(0.0, strict=False).filter(lambda v: v not in (0, 1e12) or isinstance(v, bool)),
        "lifetime_years": bad_floats(0.0, 100.0), "pue": bad_floats(1.0, 10.0, strict=False).filter(
            lambda v: v != 1 or isinstance(v, bool)), "busy_power_fraction": bad_floats(0.0, 1.0, strict=False).filter(
            lambda v: v != 0 or isinstance(v, bool)), "gpus": bad_ints(1, fabrics.MAX_GPUS_PER_NODE)})
    rejects(cl.ownership_usd_per_gpu_hour, "utilization", own, data.draw(bad_floats(0.0, 1.0).filter(
        lambda v: v != 1e12)))
    rejects(cl.ownership_usd_per_gpu_hour, "own", data.draw(st.one_of(st.none(), st.integers(), st.text(max_size=3))), u)
    for fn in (cl.break_even, cl.break_even_utilization):
        rejects(fn, "cloud_usd_per_gpu_hour", data.draw(bad_floats(0.0).filter(lambda v: v != 1e12)), own)
        rejects(fn, "own", price, data.draw(st.one_of(st.none(), st.integers())))
    _replace(be, data, {"price_usd_per_gpu_hour": bad_floats(0.0).filter(lambda v: v != 1e12),
                        "utilization": st.one_of(st.just(-1.0), st.just(float("nan")), st.text(max_size=2))})


@covers(cl.round_sig, cl.training_time_s, cl.training_energy_j, cl.throughput_gap_cost, cl.GapCost)
@given(finite_floats(-1e12, 1e12), st.integers(1, 6), finite_floats(0.0, 0.9), st.integers(1, 10**5), st.data())
def test_money_and_energy_are_arithmetic_with_stated_precision(value, digits, gap, gpus, data):
    r = answers(cl.round_sig, value, digits, type_=float)
    assert value == 0 or abs(r - value) <= abs(value) * 10 ** (1 - digits)
    days = answers(cl.training_time_s, 175e9, 300e9, gpus, 140e12, type_=float) / 86400
    assert days > 0
    e = answers(cl.training_energy_j, gpus, 3600.0, 6500.0, 1.4, type_=float)
    assert e == gpus * 6500.0 * 3600.0 * 1.4
    g = answers(cl.throughput_gap_cost, gap, gpus, 2.0, type_=cl.GapCost)
    assert abs(g.lost_gpu_hours_per_week - gpus * 168 * gap) <= 1e-9 * max(1.0, g.lost_gpu_hours_per_week)
    rejects(cl.round_sig, "digits", value, data.draw(bad_ints(1, 15)))
    rejects(cl.round_sig, "value", data.draw(st.one_of(st.just(float("nan")), st.just(float("inf")), st.text(max_size=2),
                                                       st.none())))
    rejects_any(data, cl.training_time_s, {"params": 1e9, "tokens": 1e9, "gpus": gpus, "achieved_flops_per_gpu": 1e14}, {
        "params": bad_floats(0.0).filter(lambda v: v != 1e12), "gpus": bad_ints(1),
        "achieved_flops_per_gpu": bad_floats(0.0).filter(lambda v: v != 1e12)})
    rejects_any(data, cl.training_energy_j, {"nodes": gpus, "seconds": 10.0}, {
        "nodes": bad_ints(1, fabrics.MAX_GPUS), "pue": bad_floats(1.0, 10.0, strict=False).filter(
            lambda v: v != 1 or isinstance(v, bool)), "power_per_node_w": st.sampled_from([-1.0, 2e6, float("nan"), "1"])})
    rejects_any(data, cl.throughput_gap_cost, {"gap": gap, "gpus": gpus}, {
        "gap": bad_floats(0.0, 1.0, strict=False).filter(lambda v: v != 0 or isinstance(v, bool)),
        "gpus": bad_ints(1), "usd_per_gpu_hour": st.sampled_from([-1.0, float("nan"), "2", True])})
    _replace(g, data, {"gap": bad_floats(0.0, 0.999999, strict=False).filter(lambda v: v != 0 or isinstance(v, bool)),
                       "gpus": bad_ints(1), "usd_per_week": st.sampled_from([-1.0, float("inf"), "x", None])})


@covers(cl.validate, cl.plot_topology)
@settings(max_examples=4)  # drawing costs ~0.5 s a figure; four sizes reach one and two SUs
@given(st.sampled_from([1, 7, 20, 40]), st.data())
def test_validation_passes_and_small_fabrics_draw(nodes, data):
    import matplotlib.pyplot as plt

    report, ok = answers(cl.validate, type_=tuple)
    assert ok and "MISMATCH" not in report
    f = cl.fat_tree(nodes)
    fig, ax = plt.subplots()
    try:
        assert answers(cl.plot_topology, ax, f, type_=type(None)) is None
        rejects(cl.plot_topology, "fabric", ax, data.draw(st.one_of(st.none(), st.integers(), st.just(cl.fat_tree(41)))))
    finally:
        plt.close(fig)

"""Properties of ampere.interconnect: NVLink and NCCL models, fits, logs, published tables and the lab's entry points.

Valid input gives a finite answer of the documented type (and the models' invariants: the protocol NCCL picks is
the fastest, a fit reproduces the times it was fitted on, in-network reduction never sends more bytes); invalid
input is refused with a ValueError or TypeError naming the argument. The measuring functions (run_collective,
run_collectives, p2p_copy_bandwidth, bench_main) are checked for their refusals only: a valid call starts
processes (tests/interconnect runs them).
"""

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import collectives as C
from ampere import fabrics as F
from ampere import interconnect as ic

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, covers, finite_floats,
                      not_lists, rejects, rejects_any)
from .test_collectives import bad_rates

NOT_NETWORKS = st.one_of(st.text(max_size=8), st.none(), st.integers())
BAD_SIZE = bad_floats(0.0, strict=False).filter(lambda v: v != 0 or isinstance(v, bool))


def _replace(obj, data, bad):
    """A copy of the dataclass ``obj`` with one field (drawn from ``bad``: field -> strategy) made invalid."""
    field = data.draw(st.sampled_from(sorted(bad)), label="field")
    value = data.draw(bad[field], label=f"invalid {field}")
    fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    rejects(type(obj), field, **{**fields, field: value})


@covers(ic.protocols, ic.Protocol, ic.protocol_busbw, ic.protocol_time, ic.best_protocol, ic.switch_points,
        ic.channels_needed, ic.protocol_rows, ic.payload_rows, ic.nccl_constant)
@given(finite_floats(0.0, 1e10), st.integers(2, 72), st.integers(1, 64), st.data())
def test_nccl_picks_the_fastest_protocol(size, n, channels, data):
    table = answers(ic.protocols, type_=dict)
    assert set(table) <= set(ic.PROTOCOLS) and all(isinstance(p, ic.Protocol) for p in table.values())
    name, t = answers(ic.best_protocol, size, n, channels=channels, type_=tuple)
    times = {p: answers(ic.protocol_time, size, n, p, channels=channels, type_=float) for p in ic.PROTOCOLS}
    assert name in ic.PROTOCOLS and t == min(times.values()) and t >= 0
    assert 0 < answers(ic.protocol_busbw, name, channels=channels, type_=float)
    points = answers(ic.switch_points, n, channels=channels, type_=list)
    assert all(a in ic.PROTOCOLS and b in ic.PROTOCOLS and s >= 0 for a, b, s in points)
    assert answers(ic.channels_needed, 230e9, type_=int) >= 1
    rows = answers(ic.protocol_rows, [size], n, type_=list)
    assert len(rows) == 1 and isinstance(rows[0], dict)
    assert answers(ic.payload_rows, type_=list)
    assert answers(ic.nccl_constant, "nvlink_link_gb_per_s", type_=float) > 0
    rejects(ic.protocols, "algorithm", data.draw(bad_names(["ring", "tree"])))
    rejects(ic.protocol_time, "size_bytes", data.draw(BAD_SIZE), n, "Simple")
    rejects(ic.protocol_time, "protocol", size, n, data.draw(bad_names(ic.PROTOCOLS)))
    rejects_any(data, ic.best_protocol, {"size_bytes": size}, {
        "size_bytes": BAD_SIZE, "n": bad_ints(1, 72), "link_bytes_per_s": bad_rates(), "channels": bad_ints(1, 64)})
    rejects(ic.protocol_busbw, "channels", "Simple", channels=data.draw(bad_ints(1, 64)))
    rejects(ic.switch_points, "n", data.draw(bad_ints(1, 72)))
    rejects(ic.channels_needed, "busbw_bytes_per_s", data.draw(bad_floats(0.0).filter(lambda v: v != 1e12)))
    rejects(ic.protocol_rows, "sizes_bytes", data.draw(st.one_of(not_lists().filter(lambda v: not isinstance(v, set)
                                                                                    or True), st.just([-1.0]))))
    rejects(ic.nccl_constant, "name", data.draw(bad_names([])))
    p = table[name]
    _replace(p, data, {"name": bad_names(ic.PROTOCOLS), "base_latency_s": bad_floats(0.0, F.MAX_LATENCY_S,
                                                                                      strict=False).filter(
        lambda v: v != 0 or isinstance(v, bool)), "busbw_factor": bad_floats(0.0, 1.0)})


@covers(ic.all_reduce_busbw_bound, ic.network_bytes_per_node, ic.sharp_all_reduce_busbw, ic.pxn_traffic)
@given(st.integers(2, 512), finite_floats(0.0, 1e12), st.booleans(), st.data())
def test_in_network_reduction_never_sends_more(n, size, sharp, data):
    assert answers(ic.network_bytes_per_node, size, n, True, type_=float) <= \
        answers(ic.network_bytes_per_node, size, n, False, type_=float) + 1e-9 * size
    assert answers(ic.all_reduce_busbw_bound, n, 25e9, sharp, type_=float) > 0
    with_sharp = answers(ic.sharp_all_reduce_busbw, n, in_network=True, type_=float)
    assert with_sharp >= answers(ic.sharp_all_reduce_busbw, n, in_network=False, type_=float) > 0
    traffic = answers(ic.pxn_traffic, data.draw(st.integers(1, 72)), sharp, type_=dict)
    assert all(v >= 0 for v in traffic.values())
    rejects_any(data, ic.all_reduce_busbw_bound, {"n": n, "link_bytes_per_s": 25e9, "in_network": sharp}, {
        "n": bad_ints(1), "link_bytes_per_s": bad_floats(0.0).filter(lambda v: v != 1e12),
        "in_network": bad_booleans(), "efficiency": bad_floats(0.0, 1.0)})
    rejects_any(data, ic.network_bytes_per_node, {"size_bytes": size, "gpus": n, "in_network": sharp}, {
        "size_bytes": BAD_SIZE, "gpus": bad_ints(1), "in_network": bad_booleans()})
    rejects_any(data, ic.sharp_all_reduce_busbw, {"nodes": n}, {
        "nodes": bad_ints(1, F.MAX_GPUS // 8), "network": NOT_NETWORKS, "in_network": bad_booleans()})
    rejects_any(data, ic.pxn_traffic, {}, {"gpus_per_node": bad_ints(1, 72), "pxn": bad_booleans()})


@covers(ic.fit_alpha_beta, ic.AlphaBetaFit, ic.holdout_check)
@given(st.sampled_from(C.OPS), st.integers(2, 64), finite_floats(1e-6, 1e-4), finite_floats(1e9, 1e12), st.data())
def test_a_fit_recovers_the_model_it_was_fitted_on(op, n, alpha, bw, data):
    sizes = [2.0 ** k for k in range(10, 28, 2)]
    times = [C.collective_time(op, s, n, bw, alpha) for s in sizes]
    fit = answers(ic.fit_alpha_beta, op, n, sizes, times, type_=ic.AlphaBetaFit)
    assert abs(fit.latency_s - alpha) <= 1e-3 * alpha and abs(fit.link_bytes_per_s - bw) <= 1e-3 * bw
    check = answers(ic.holdout_check, sizes, times, op, n, type_=dict)
    assert isinstance(check, dict)
    rejects(ic.fit_alpha_beta, "op", data.draw(bad_names(C.OPS)), n, sizes, times)
    rejects(ic.fit_alpha_beta, "times_s", op, n, sizes, [*times[:-1], data.draw(bad_floats(0.0).filter(
        lambda v: v != 1e12 and not isinstance(v, (list, dict))))])
    rejects(ic.fit_alpha_beta, "sizes_bytes", op, n, [*sizes[:-1], data.draw(st.sampled_from(
        [-1.0, float("nan"), "1", None]))], times)
    rejects(ic.holdout_check, "sizes", sizes[:3], times[:3], op, n)
    _replace(fit, data, {"op": bad_names(C.OPS), "n": bad_ints(1, F.MAX_GPUS),
                         "link_bytes_per_s": st.sampled_from([-1.0, float("nan"), "1", None])})


@covers(ic.systems, ic.data_parallel_step, ic.DataParallelStep, ic.crossover_gpus)
@given(st.sampled_from([1, 2, 4, 8, 16, 64, 512, 4096]), st.data())
def test_data_parallel_steps_are_compute_plus_exposed_all_reduce(gpus, data):
    systems = answers(ic.systems, type_=dict)
    name = data.draw(st.sampled_from(sorted(systems)))
    step = answers(ic.data_parallel_step, name, gpus, tokens_per_gpu=4096.0, type_=ic.DataParallelStep)
    assert abs(step.step_s - (step.compute_s + step.exposed_s)) <= 1e-9 * step.step_s
    assert 0 <= step.exposed_s <= step.all_reduce_s + 1e-15
    x = answers(ic.crossover_gpus, name, [2, 64, 4096], tokens_per_gpu=4096.0, type_=object)
    assert x is None or x in (2, 64, 4096)
    rejects_any(data, ic.data_parallel_step, {"system": name, "gpus": gpus, "tokens_per_gpu": 4096.0}, {
        "system": bad_names(systems).filter(lambda v: not isinstance(v, list)), "gpus": bad_ints(1),
        "params": bad_floats(0.0).filter(lambda v: v != 1e12), "tokens_per_gpu": bad_floats(0.0).filter(
            lambda v: v not in (1e12, None))})
    rejects(ic.crossover_gpus, "candidates", name, data.draw(st.one_of(st.just([0]), st.just([2.5]),
                                                                       st.just("2"))), tokens_per_gpu=4096.0)
    _replace(step, data, {"gpus": bad_ints(1), "step_s": st.sampled_from([-1.0, float("nan"), "1", None])})


@covers(ic.latency_checks, ic.LatencyCheck, ic.latency_rows, ic.derivation_rows, ic.single_process_launch_s,
        ic.tiny_all_reduce_model_s, ic.former_alpha_model_s)
@given(st.sampled_from([(1, 1), (2, 1), (8, 1), (16, 2), (64, 8), (1024, 128)]), st.data())
def test_a_tiny_all_reduce_costs_launch_plus_hops(shape, data):
    gpus, nodes = shape
    launch = data.draw(st.sampled_from(ic.LAUNCH_MODES)) if hasattr(ic, "LAUNCH_MODES") else "per-process"
    t = answers(ic.tiny_all_reduce_model_s, gpus, nodes, launch, type_=float)
    assert t >= 0 and answers(ic.former_alpha_model_s, gpus, type_=float) >= 0
    checks = answers(ic.latency_checks, type_=list)
    assert checks and all(isinstance(c, ic.LatencyCheck) and c.model_s > 0 for c in checks)
    assert answers(ic.latency_rows, type_=list) and answers(ic.derivation_rows, type_=list)
    assert answers(ic.single_process_launch_s, type_=float) > 0
    rejects_any(data, ic.tiny_all_reduce_model_s, {"gpus": gpus, "nodes": nodes}, {
        "gpus": bad_ints(1), "nodes": bad_ints(1), "launch": bad_names(["per-process", "single-process"]),
        "network": NOT_NETWORKS})
    rejects(ic.former_alpha_model_s, "gpus", data.draw(bad_ints(1)))
    _replace(checks[0], data, {"gpus": bad_ints(1), "measured_s": bad_floats(0.0).filter(lambda v: v != 1e12),
                               "record_id": st.one_of(st.integers(), st.none(), st.just(""))})


@covers(ic.published, ic.link_table, ic.alpha_beta_rows, ic.nvlink_cascade, ic.claims)
@given(st.integers(2, 64), st.data())
def test_tables_of_links_and_published_figures_are_read_from_data(n, data):
    rows = answers(ic.alpha_beta_rows, n, type_=list)
    assert rows and all(isinstance(r, dict) for r in rows)
    assert answers(ic.link_table, type_=list)
    cascade = answers(ic.nvlink_cascade, type_=list)
    assert [v for _, v in cascade] == sorted((v for _, v in cascade), reverse=True)
    assert answers(ic.claims, type_=list)
    from ampere import results

    ids = sorted({r.id for r in results.records(kind="published") if r.id.startswith("nccl")} or {""})
    if ids != [""]:
        try:
            answers(ic.published, ids[0], type_=results.Record)
        except ValueError:
            pass  # a record that is not one of the chapter's collectives
    rejects(ic.published, "record_id", data.draw(bad_names([]).filter(lambda v: not isinstance(v, list))))
    rejects(ic.alpha_beta_rows, "n", data.draw(bad_ints(1)))
    rejects(ic.nvlink_cascade, "catalogue", data.draw(st.sampled_from(["NoSuchGPU", "A100"])))


LOG = ic.log_excerpt()


@covers(ic.parse_nccl_log, ic.NcclLog, ic.Connection, ic.ring_rails, ic.log_excerpt, ic.troubleshooting_rows)
@given(st.integers(1, len(LOG)), st.data())
def test_an_nccl_log_parses_to_rings_and_rails(k, data):
    log = answers(ic.parse_nccl_log, LOG[:k], type_=ic.NcclLog)
    full = ic.parse_nccl_log("\n".join(LOG))
    assert len(log.connections) <= len(full.connections)
    rails = answers(ic.ring_rails, full, 8, type_=list)
    assert all(isinstance(r, dict) for r in rails)
    assert answers(ic.log_excerpt, type_=list) == LOG
    assert answers(ic.troubleshooting_rows, data.draw(st.sampled_from(["page", "all"])), type_=list)
    rejects(ic.parse_nccl_log, "lines", data.draw(st.one_of(st.integers(), st.none(), st.just([b"x"]),
                                                            st.just([1]))))
    rejects(ic.ring_rails, "gpus_per_node", full, data.draw(bad_ints(1).filter(lambda v: v is not None)))
    rejects(ic.ring_rails, "log", data.draw(st.one_of(st.none(), st.just({}), st.text(max_size=3))), 8)
    rejects(ic.troubleshooting_rows, "columns", data.draw(bad_names(["page", "all"])))
    if full.connections:
        _replace(full.connections[0], data, {"channel": bad_ints(0, 1024), "src": bad_ints(0, F.MAX_GPUS),
                                             "direction": bad_names(["send", "receive", ""]),
                                             "transport": bad_strings(allow_empty=True)})
    _replace(full, data, {"coll_channels": bad_ints(0, 1024).filter(lambda v: v is not None),
                          "connections": st.one_of(st.just(("x",)), st.just((1,)))})


@covers(ic.run_collective, ic.run_collectives, ic.CollectiveRun, ic.p2p_copy_bandwidth, ic.bench_main)
@given(st.sampled_from(C.OPS), st.data())
def test_the_lab_refuses_bad_plans_before_starting_a_process(op, data):
    rejects_any(data, ic.run_collective, {"op": op, "sizes_bytes": [1024], "world_size": 2, "backend": "gloo"}, {
        "op": bad_names(C.OPS), "world_size": bad_ints(1, 10 ** 6).filter(lambda v: v != 10 ** 12),
        "sizes_bytes": st.one_of(not_lists(), st.just([-8]), st.just([2.5])), "samples": bad_ints(1, 10 ** 6),
        "backend": bad_names(["gloo", "nccl"]).filter(lambda v: v is not None)})
    rejects(ic.run_collectives, "plan", data.draw(st.one_of(st.just({}), st.none(), st.just([op]))), 2, "gloo")
    rejects(ic.run_collectives, "world_size", {op: [1024]}, data.draw(bad_ints(1, 10 ** 6).filter(
        lambda v: v != 10 ** 12)), "gloo")
    rejects_any(data, ic.p2p_copy_bandwidth, {}, {"src": bad_ints(0, 10 ** 6).filter(lambda v: v != 10 ** 12),
                                                  "dst": bad_ints(0, 10 ** 6).filter(lambda v: v != 10 ** 12),
                                                  "size_bytes": bad_ints(1, 2 ** 40)})
    rejects(ic.bench_main, "argv", data.draw(st.one_of(st.just("collectives"), st.just([1]), st.integers())))
    rec = ic.CollectiveRun(op=op, world_size=2, backend="gloo", device_name="cpu", records=[])
    _replace(rec, data, {"op": bad_names(C.OPS), "world_size": bad_ints(1),
                         "backend": st.one_of(st.integers(), st.none())})


@covers(ic.show_latency, ic.show_protocols, ic.show_in_network)
@settings(max_examples=2)  # each figure takes about a second to draw
@given(st.sampled_from([2, 8]), st.data())
def test_the_chapter_figures_draw(n, data):
    import matplotlib.pyplot as plt

    try:
        for fn in (ic.show_latency, ic.show_in_network):
            assert answers(fn, within_s=30.0) is None
        assert answers(ic.show_protocols, n, within_s=30.0) is None
        rejects(ic.show_protocols, "n", data.draw(bad_ints(2, 72)))
    finally:
        plt.close("all")

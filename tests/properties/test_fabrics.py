"""Properties of ampere.fabrics: link rates, latency floors and node networks.

Valid input gives a finite answer of the documented type within its bounds; invalid input is refused with
a ValueError or TypeError naming the argument.
"""

from hypothesis import given
from hypothesis import strategies as st

from ampere import fabrics as F
from ampere import results, specs

from .harness import (answers, bad_ints, bad_names, bad_strings, catalogue_names, covers, finite_floats, rejects,
                      rejects_any)
from .test_collectives import BAD_LATENCY, bad_rates

NVLINK_GPUS = [g for g in specs.names() if specs.get(g).nvlink_bytes_per_s]
TINY_IDS = sorted(r.id for r in results.records(benchmark="all-reduce", kind="published")
                  if "sweep_size_bytes" in r.figures and "sweep_time_us" in r.figures)


@covers(F.nvlink_bytes_per_s_per_direction, F.nvlink_effective_bytes_per_s, F.tiny_all_reduce_us)
@given(catalogue_names(), st.sampled_from(TINY_IDS), st.data())
def test_link_rates_come_from_the_catalogue(gpu, record_id, data):
    line = answers(F.nvlink_bytes_per_s_per_direction, gpu, type_=float)
    eff = answers(F.nvlink_effective_bytes_per_s, gpu, type_=float)
    assert line >= 0 and eff == line * F.NVLINK_PAYLOAD_EFFICIENCY
    assert line == specs.get(gpu).nvlink_bytes_per_s / 2
    us = answers(F.tiny_all_reduce_us, record_id, type_=float)
    assert 1.0 < us < 1e4  # a tiny all-reduce takes microseconds to milliseconds
    rejects(F.nvlink_bytes_per_s_per_direction, "catalogue", data.draw(st.sampled_from(["A100-SXM5", "B9000"])))
    rejects(F.tiny_all_reduce_us, "record_id", data.draw(bad_names(TINY_IDS)))


@covers(F.NodeNetwork, F.node_network)
@given(catalogue_names(), st.integers(1, 64), st.integers(0, 16), finite_floats(1e9, 1e12), st.data())
def test_node_networks_are_built_from_their_parts_or_refused(gpu, g, h, hca_bw, data):
    net = answers(F.node_network, gpu, g, h, hca_bw, type_=F.NodeNetwork)
    assert net.gpus_per_node == g and net.hcas_per_node == h and 1 <= net.nvlink_domain <= g
    assert net.inter_bytes_per_s == h * hca_bw
    assert 0 < net.ring_bytes_per_s <= net.intra_bytes_per_s
    assert net.with_(hcas_per_node=0).ring_bytes_per_s == net.intra_bytes_per_s
    rejects_any(data, F.node_network, {"gpu": gpu, "gpus_per_node": g, "hcas_per_node": h, "hca_bytes_per_s": hca_bw}, {
        "gpu": bad_strings().filter(lambda v: v != ""), "gpus_per_node": bad_ints(1, F.MAX_GPUS_PER_NODE),
        "hcas_per_node": bad_ints(0, F.MAX_HCAS_PER_NODE),
        "hca_bytes_per_s": bad_rates().filter(lambda v: v != 0 or isinstance(v, bool)),
        "intra_latency_s": BAD_LATENCY, "inter_latency_s": BAD_LATENCY, "inter_overhead_s": BAD_LATENCY,
        "nvlink_domain": bad_ints(1, g).filter(lambda v: v is not None), "name": bad_strings(allow_empty=True)})
    base = F.DGX_A100
    rejects_any(data, base.with_, {}, {
        "gpus_per_node": bad_ints(1, F.MAX_GPUS_PER_NODE), "intra_bytes_per_s": bad_rates(),
        "hcas_per_node": bad_ints(0, F.MAX_HCAS_PER_NODE), "inter_latency_s": BAD_LATENCY,
        "name": bad_strings(), "gpu": bad_strings()})
    if not specs.get(gpu).nvlink_bytes_per_s:
        rejects(F.node_network, "nvlink_domain", gpu, 2, nvlink_domain=2)

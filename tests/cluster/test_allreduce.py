"""Tests of ampere.cluster.allreduce: all-reduce across the pod.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

import pytest

from ampere import cluster as cl
from ampere import collectives, fabrics


def test_pod_all_reduce_uses_the_interconnect_model():
    one = cl.pod_all_reduce(340e6, 1)
    ring = collectives.collective_time("all_reduce", 680e6, 8, fabrics.A100_INTRA_BYTES_PER_S,
                                       fabrics.A100_INTRA_LATENCY_S)
    assert isinstance(one, collectives.AllReducePhases)
    assert one.total_s == pytest.approx(ring)
    assert one.size_bytes == 680e6
    many = cl.pod_all_reduce(1.5e9, 140, network=fabrics.DGX_A100.with_(inter_latency_s=0.0))
    assert many.inter_all_reduce_s == pytest.approx(2 * 139 / 140 * 3e9 / 200e9)
    # the inter-node phase of the hierarchical algorithm is one all-reduce per rail of S/8 bytes
    assert cl.rail_all_reduce(3e9 / 8, 140) == pytest.approx(cl.pod_all_reduce(1.5e9, 140).inter_all_reduce_s)
    # a DGX H100 pod: NDR doubles the per-node bandwidth, the inter-node phase halves (latency aside)
    h100 = cl.pod_all_reduce(1.5e9, 140, network=fabrics.DGX_H100.with_(inter_latency_s=0.0))
    assert h100.inter_all_reduce_s == pytest.approx(many.inter_all_reduce_s / 2)
    with pytest.raises(ValueError, match="params"):
        cl.pod_all_reduce(0, 4)
    with pytest.raises(ValueError, match="nodes"):
        cl.pod_all_reduce(1e6, 0)
    with pytest.raises(TypeError, match="NodeNetwork"):
        cl.pod_all_reduce(1e6, 2, network="DGX A100")


def test_all_reduce_time_saturates_with_nodes():
    rows = cl.all_reduce_scaling([2, 16, 140], models=cl.GRADIENT_MODELS[2:3])
    t = [r["total_s"] for r in rows]
    assert t[0] < t[1] < t[2]
    assert t[2] / t[1] < 1.2  # bandwidth term saturates at 2 S / B_node
    tree = cl.all_reduce_scaling([140], models=cl.GRADIENT_MODELS[:1], inter_algorithm="tree")
    ring = cl.all_reduce_scaling([140], models=cl.GRADIENT_MODELS[:1])
    assert tree[0]["total_s"] < ring[0]["total_s"]  # small gradients: latency-bound, the tree wins

"""ampere.mig.tenants and ampere.mig.sim (the old path ampere.mig_sim): the isolation event simulator."""

from __future__ import annotations

import time

import numpy as np
import pytest

from ampere import specs
from ampere.mig import sim as mig

A40 = "A100-SXM4-40GB"


# --------------------------------------------------------------------------------------------------- the model


def test_workload_and_config_validation():
    with pytest.raises(ValueError, match="flops"):
        mig.Workload("x", -1, 1, 0, 1, 1.0)
    with pytest.raises(ValueError, match="both 0"):
        mig.Workload("x", 0, 0, 0, 1, 1.0)
    with pytest.raises(ValueError, match="parallel_sms"):
        mig.Workload("x", 1, 1, 0, 0, 1.0)
    with pytest.raises(ValueError, match="rate_per_s"):
        mig.Workload("x", 1, 1, 0, 1, 0.0)
    with pytest.raises(ValueError, match="compute_efficiency"):
        mig.SimConfig(compute_efficiency=1.5)
    with pytest.raises(ValueError, match="switch_s"):
        mig.SimConfig(switch_s=1.0)
    with pytest.raises(ValueError, match="warmup_s"):
        mig.SimConfig(warmup_s=5.0)
    with pytest.raises(ValueError, match="SimConfig.gpu must be one of .*got 'B300'"):
        mig.SimConfig(gpu="B300")
    with pytest.raises(ValueError, match="mode must be one of .*got 'mig2'"):
        mig.simulate(mig.default_tenants(), "mig2")
    with pytest.raises(ValueError, match="scenario"):
        mig.default_tenants("loud")
    with pytest.raises(ValueError, match="has no sourced SM count"):
        mig.simulate(mig.default_tenants(), "mig", mig.SimConfig(gpu="H200-SXM-141GB"))
    with pytest.raises(ValueError, match="cannot coexist"):
        mig.simulate(mig.default_tenants(n=8), "mig")


def test_service_time_is_copy_then_roofline():
    cfg = mig.SimConfig()
    w = mig.Workload("w", flops=1e12, hbm_bytes=1e9, pcie_bytes=1e8, parallel_sms=20, rate_per_s=1.0)
    r = cfg.flops_per_sm
    assert cfg.flops_per_sm == pytest.approx(specs.get(A40).peak_flops("fp16") / 108 * 0.5)
    t = mig.service_time(w, 108, 1e12, 1e10, cfg)
    assert t == pytest.approx(1e8 / 1e10 + max(1e12 / (20 * r), 1e9 / 1e12))  # capped at 20 SMs
    assert mig.service_time(w, 10, 1e12, 1e10, cfg) == pytest.approx(0.01 + 1e12 / (10 * r))
    with pytest.raises(ValueError):
        mig.service_time(w, 0, 1e12, 1e10, cfg)


def test_a_lone_request_takes_its_service_time_in_every_mode():
    cfg = mig.SimConfig(duration_s=2.0, warmup_s=0.0)
    w = mig.Workload("w", flops=2e10, hbm_bytes=1e8, pcie_bytes=1e6, parallel_sms=54, rate_per_s=5.0)
    spec = cfg.spec
    full = mig.service_time(w, spec.sm_count, cfg.hbm_bytes_per_s, cfg.pcie_bytes_per_s, cfg)
    one = mig.service_time(w, 14, cfg.hbm_bytes_per_s / 8, cfg.pcie_bytes_per_s, cfg)
    for mode, expect in (("dedicated", full), ("timeslice", full), ("mps", full), ("mig", one)):
        res = mig.simulate([w], mode, cfg, seed=1)
        lat = res.latencies_s[0]
        assert lat.size > 3
        assert np.allclose(lat, expect, rtol=1e-9), mode  # 5 req/s: never a queue
    cap = max(1, int(spec.sm_count / 7))
    limited = mig.service_time(w, cap, cfg.hbm_bytes_per_s, cfg.pcie_bytes_per_s, cfg)
    assert np.allclose(mig.simulate([w], "mps-limited", cfg, seed=1).latencies_s[0], limited, rtol=1e-9)


def test_compute_only_and_memory_only_requests_in_every_mode():
    cfg = mig.SimConfig(duration_s=0.5, warmup_s=0.0)
    compute = mig.Workload("c", flops=1e10, hbm_bytes=0.0, pcie_bytes=0.0, parallel_sms=108, rate_per_s=20.0)
    memory = mig.Workload("m", flops=0.0, hbm_bytes=1e8, pcie_bytes=0.0, parallel_sms=108, rate_per_s=20.0)
    for mode in mig.MODES:
        res = mig.simulate([compute, memory], mode, cfg)
        assert all(t.completed > 0 and not t.saturated for t in res.tenants), mode


def test_mig_isolates_hbm_but_not_pcie():
    cfg = mig.SimConfig(duration_s=1.5)
    base = mig.default_tenants("quiet", cfg)[0]
    no_copy = mig.Workload("v", base.flops, base.hbm_bytes, 0.0, base.parallel_sms, base.rate_per_s)
    quiet = mig.simulate(mig.default_tenants("quiet", cfg, victim=no_copy), "mig", cfg)
    bully = mig.simulate(mig.default_tenants("hbm-bully", cfg, victim=no_copy), "mig", cfg)
    for i in range(6):  # identical arrivals, nothing shared: identical latencies, to the bit
        assert np.array_equal(quiet.latencies_s[i], bully.latencies_s[i])
    # the same HBM bully under MPS slows the same victims down
    mq = mig.simulate(mig.default_tenants("quiet", cfg, victim=no_copy), "mps", cfg)
    mb = mig.simulate(mig.default_tenants("hbm-bully", cfg, victim=no_copy), "mps", cfg)
    names = [f"t{i}" for i in range(1, 7)]
    assert mb.victim_summary(names).victim_p99_ms > 1.5 * mq.victim_summary(names).victim_p99_ms
    # PCIe is one link for all instances: a PCIe bully does slow MIG victims that copy inputs
    q = mig.simulate(mig.default_tenants("quiet", cfg), "mig", cfg).victim_summary(names)
    p = mig.simulate(mig.default_tenants("pcie-bully", cfg), "mig", cfg).victim_summary(names)
    assert p.victim_p50_ms > q.victim_p50_ms * 1.01


def test_timeslicing_shares_time_fairly_and_saturation_is_flagged():
    cfg = mig.SimConfig(duration_s=1.0, warmup_s=0.1)
    a = mig.Workload("a", flops=1e11, hbm_bytes=1e8, pcie_bytes=0.0, parallel_sms=108, rate_per_s=None)
    b = mig.Workload("b", flops=1e11, hbm_bytes=1e8, pcie_bytes=0.0, parallel_sms=108, rate_per_s=None)
    res = mig.simulate([a, b], "timeslice", cfg)
    ta, tb = (t.throughput_per_s for t in res.tenants)
    assert ta > 0 and abs(ta - tb) / ta < 0.05
    alone = mig.simulate([a], "timeslice", cfg).tenants[0].throughput_per_s
    assert 0.45 * alone < ta < 0.5 * alone  # half the GPU each, minus the switches
    heavy = mig.Workload("h", flops=6.6e10, hbm_bytes=2e8, pcie_bytes=0.0, parallel_sms=54, rate_per_s=1000.0)
    res = mig.simulate([heavy], "mig", cfg)
    assert res.tenants[0].saturated and res.victim_summary().saturated
    assert not mig.simulate([heavy], "dedicated", cfg).tenants[0].saturated


def test_isolation_study_is_fast_and_tells_the_chapters_story():
    t0 = time.perf_counter()
    rows = mig.isolation_study()
    assert time.perf_counter() - t0 < 5.0
    assert len(rows) == len(mig.MODES) * len(mig.SCENARIOS)
    get = {(r.mode, r.scenario): r for r in rows}
    assert get[("mig", "hbm-bully")].p99_vs_quiet == pytest.approx(1.0, abs=0.02)
    assert get[("dedicated", "hbm-bully")].p99_vs_quiet == pytest.approx(1.0)
    assert get[("mps", "hbm-bully")].p99_vs_quiet > 2
    assert get[("timeslice", "hbm-bully")].p99_vs_quiet > 1.3
    assert get[("mig", "pcie-bully")].p99_vs_quiet > 1.0
    assert get[("mig", "quiet")].victim_p50_ms > 3 * get[("dedicated", "quiet")].victim_p50_ms
    assert not any(r.saturated for r in rows)




def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="Workload.flops"):
        mig.Workload("x", "1e9", 1, 0, 1, 1.0)
    with pytest.raises(TypeError, match="parallel_sms"):
        mig.Workload("x", 1, 1, 0, 2.0, 1.0)
    assert mig.Workload("x", 1, 1, 0, np.int64(3), 1.0).parallel_sms == 3  # numpy integers accepted
    with pytest.raises(TypeError, match="noisy"):
        mig.Workload("x", 1, 1, 0, 1, 1.0, noisy="yes")
    with pytest.raises(ValueError, match="Workload.name"):
        mig.Workload("", 1, 1, 0, 1, 1.0)
    with pytest.raises(ValueError, match="SimConfig.hbm_efficiency"):
        mig.SimConfig(hbm_efficiency=float("nan"))
    with pytest.raises(ValueError, match="SimConfig.precision"):
        mig.SimConfig(precision="fp8")
    with pytest.raises(ValueError, match="SimConfig.mig_profile"):
        mig.SimConfig(mig_profile="1g.10gb+me", gpu=A40)
    with pytest.raises(TypeError, match="config"):
        mig.simulate(mig.default_tenants(), "mig", config={"gpu": A40})
    with pytest.raises(ValueError, match="seed"):
        mig.simulate(mig.default_tenants(), "mig", seed=-1)
    with pytest.raises(TypeError, match="tenants"):
        mig.simulate("t1", "mig")
    with pytest.raises(ValueError, match="n must be an integer from 2 to 64"):
        mig.default_tenants(n=1)
    with pytest.raises(TypeError, match="victim"):
        mig.default_tenants(victim="service")
    with pytest.raises(ValueError, match="modes"):
        mig.isolation_study(modes=[])
    with pytest.raises(ValueError, match="scenario"):
        mig.isolation_study(scenarios=["quiet", "loud"])
    with pytest.raises(ValueError, match="sms"):
        mig.service_time(mig.default_tenants()[0], float("inf"), 1e12, 1e10)


def test_victim_names_are_checked():
    cfg = mig.SimConfig(duration_s=0.5, warmup_s=0.1)
    res = mig.simulate(mig.default_tenants("hbm-bully", cfg), "mig", cfg)
    assert [t.name for t in res.victims(["t1", "t2"])] == ["t1", "t2"]
    with pytest.raises(TypeError, match="names"):
        res.victim_summary("t1")  # a string is not a list of names (no substring matching)
    with pytest.raises(ValueError, match="t9"):
        res.victims(["t9"])

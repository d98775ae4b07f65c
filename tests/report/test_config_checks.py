"""ampere.report.config_checks and its judges: every check on a healthy node (a published nvidia-smi -q
capture of a real A100 node), on a misconfigured one, on a machine without a GPU; the ranking of findings
and the conversion of a resource's loss into a loss of training throughput."""

import copy

import pytest

from ampere.report import config_checks as cc
from ampere.report import config_judges, node_judges


def healthy_a100_node():
    """Four GPUs with the settings nvidia-smi -a printed for GPU 00000000:68:00.0 of a real A100 node
    (thamada/nvidia-smi, gls/A100SXMx4_smi.py; driver 555.42.02, CUDA 12.5): persistence on, MIG off, ECC on,
    no remapped rows, PCIe Gen4 x16 of Gen4 x16, application clock 1140 MHz = default, max 1410 MHz,
    power limit 500 W = default, only the "Idle" clock-event reason active. NUMA, NVLink and the host are
    not in that capture: they are set to a healthy value here."""
    gpus = []
    for i, bus in enumerate(("0000:68:00.0", "0000:9e:00.0", "0000:c2:00.0", "0000:d4:00.0")):
        gpus.append({"index": i, "name": "NVIDIA A100-SXM4-80GB", "bus_id": bus, "sm_clock_mhz": 210,
                     "sm_clock_max_mhz": 1410, "app_clock_mhz": 1140, "default_app_clock_mhz": 1140,
                     "clock_event_reasons": ["GPU idle"], "power_limit_w": 500.0, "default_power_limit_w": 500.0,
                     "persistence": True, "ecc": True, "retired_pages_pending": None,
                     "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False},
                     "mig": False, "pcie_gen": 4, "pcie_gen_max": 4, "pcie_width": 16, "pcie_width_max": 16,
                     "nvlink_active": 12, "nvlink_queried": 12, "numa_node": i // 2, "notes": []})
    return {"reasons": {}, "gpus": gpus, "driver": {"available": True, "driver_version": "555.42.02",
                                                    "cuda_driver_version": "12.5"},
            "spec_name": "A100-SXM4-80GB", "nics": [{"name": "mlx5_0", "bus_id": "0000:69:00.0", "numa_node": 0},
                                                     {"name": "mlx5_1", "bus_id": "0000:c3:00.0", "numa_node": 1}],
            "numa_nodes": {"0": list(range(32)), "1": list(range(32, 64))}, "process_cpus": list(range(32)),
            "numa_balancing": 0, "kernel_cmdline": "root=/dev/sda1 iommu=pt", "iommu_groups": 40,
            "hypervisor": False, "acs": {"read": True, "redirecting": [], "reason": None},
            "modules": ["nvidia", "nvidia_peermem"], "peer_memory_sysfs": False, "nccl_env": {},
            "versions": {"torch": "2.5.1", "cuda_runtime": "12.4", "nccl": "2.21.5", "driver": "555.42.02",
                         "cuda_driver": "12.5"},
            "topology": {"GPU0-GPU1": "NV12", "GPU0-GPU2": "NV12", "GPU1-GPU2": "NV12"},
            "cpu_governors": {"performance": 64}}


def test_at_least_twelve_named_checks_each_explained():
    names = cc.check_names()
    assert len(names) >= 12 and len(set(names)) == len(names)
    for c in cc.CHECKS:
        assert c.title and c.expected and all(len(getattr(c, k)) > 10 for k in ("what", "how", "cost", "fix")), c.name
    assert {r["check"] for r in cc.catalogue_rows()} == set(names)


def test_a_healthy_published_a100_node_passes_every_check():
    rows = cc.judge_all(healthy_a100_node(), "A100-SXM4-80GB")
    status = {r["name"]: r["status"] for r in rows}
    assert set(status.values()) == {"ok"}, status
    assert cc.findings(rows) == []
    # NVIDIA's default application clock (1140 MHz) below the max (1410 MHz) is not a finding: GPU Boost
    assert "1140" in rows[0]["observed"]


def misconfigured():
    f = healthy_a100_node()
    g = f["gpus"]
    g[0]["app_clock_mhz"] = 1005
    g[1]["power_limit_w"] = 300.0
    g[2]["persistence"] = False
    g[3]["remapped_rows"] = {"correctable": 0, "uncorrectable": 1, "pending": True, "failure": False}
    g[1]["pcie_width"] = 8
    g[2]["nvlink_active"] = 10
    f["topology"]["GPU1-GPU3"] = "SYS"
    f["nics"][1]["numa_node"] = 2
    f["acs"]["redirecting"] = ["00:01.0"]
    f["modules"] = ["nvidia"]
    f["nccl_env"] = {"NCCL_P2P_DISABLE": "1", "NCCL_DEBUG": "INFO"}
    f["versions"]["nccl"] = "2.18.1"
    f["cpu_governors"] = {"powersave": 64}
    return f


def test_a_misconfigured_node_is_found_and_ranked():
    rows = cc.judge_all(misconfigured(), "A100-SXM4-80GB")
    status = {r["name"]: r["status"] for r in rows}
    assert status == {"gpu-clocks": "warn", "power-limit": "warn", "persistence-mode": "warn", "ecc": "fail",
                      "mig-mode": "ok", "pcie-link": "fail", "numa-affinity": "warn", "acs-iommu": "fail",
                      "gpudirect-rdma": "fail", "nccl": "warn", "nvlink": "fail", "versions": "ok",
                      "cpu-governor": "warn"}
    ranked = cc.findings(rows)
    order = [f["check"] for f in ranked]
    # by expected loss of training throughput, largest first; unsized ones last, failures before warnings
    assert order == ["power-limit", "gpu-clocks", "acs-iommu", "nvlink", "gpudirect-rdma", "numa-affinity",
                     "persistence-mode", "ecc", "pcie-link", "nccl", "cpu-governor"]
    losses = {f["check"]: f["expected loss"] for f in ranked}
    assert losses["pcie-link"] == "unknown" and losses["persistence-mode"] == "none (steady state)"
    assert all(f["fix"] for f in ranked) and [f["rank"] for f in ranked] == list(range(1, len(ranked) + 1))
    by = {r["name"]: r for r in rows}
    # ACS: the published case (27 vs 48 GB/s between A100 VMs) on the network share of a step
    assert by["acs-iommu"]["loss"][0] == pytest.approx(1 - 27 / 48)
    assert 0 < by["acs-iommu"]["throughput_loss"][0] < by["acs-iommu"]["loss"][0]
    assert by["nvlink"]["loss"] == [pytest.approx(1 - 10 / 12)] * 2 and "GPU1-GPU3" in by["nvlink"]["observed"]
    # a 40 % power cut: about 0.27 x the cut (the published A100 PCIe/SXM4 pair) up to the cut itself
    assert by["power-limit"]["loss"] == [pytest.approx(0.4 * config_judges.power_sensitivity()), pytest.approx(0.4)]
    assert 0.2 < config_judges.power_sensitivity() < 0.35
    assert "NCCL_P2P_DISABLE=1" in by["nccl"]["detail"] and "NCCL_DEBUG" not in by["nccl"]["detail"]


def test_mig_costs_the_sms_outside_the_largest_instance():
    f = healthy_a100_node()
    f["gpus"][0]["mig"] = True
    v = config_judges.judge_mig(f, __import__("ampere").specs.get("A100-SXM4-80GB"))
    assert v.status == "fail" and v.loss == (pytest.approx(10 / 108), pytest.approx(10 / 108)) and "98 of 108" in v.detail
    h200 = config_judges.judge_mig(f, __import__("ampere").specs.get("H200-SXM-141GB"))
    assert h200.status == "fail" and h200.loss is None and "unknown" in h200.detail  # no sourced SM count


def test_pcie_generation_at_rest_is_information_not_a_failure():
    f = healthy_a100_node()
    f["gpus"][0]["pcie_gen"] = 1
    v = config_judges.judge_pcie(f)
    assert v.status == "info" and "rest" in v.detail and v.sources == ("nvgpumon215",)


def test_without_a_gpu_every_check_says_not_applicable_with_a_reason():
    bare = {"reasons": {"gpus": "no NVIDIA driver (NVML Shared Library Not Found)"}, "gpus": [], "nics": [],
            "driver": {"available": False}, "acs": {"read": False, "reason": "lspci is not installed"},
            "versions": {}, "numa_nodes": {"0": [0, 1]}, "cpu_governors": None}
    rows = cc.judge_all(bare)
    assert all(r["status"] == "n/a" and "not applicable here" in r["detail"] for r in rows), \
        [(r["name"], r["status"], r["detail"]) for r in rows]
    assert all("NVML Shared Library" in r["detail"] for r in rows if r["name"] in ("gpu-clocks", "nvlink"))


def test_a_judge_that_raises_becomes_not_applicable(monkeypatch):
    def boom(facts):
        raise KeyError("gpus")

    broken = cc.CHECKS[0].__class__(**{**{k: getattr(cc.CHECKS[0], k) for k in
                                          ("name", "title", "what", "how", "expected", "cost", "fix")},
                                       "judge": lambda facts, spec: boom(facts)})
    monkeypatch.setattr(cc, "CHECKS", (broken,) + cc.CHECKS[1:])
    rows = cc.judge_all(healthy_a100_node())
    assert rows[0]["status"] == "n/a" and "KeyError" in rows[0]["detail"]
    with pytest.raises(TypeError, match="facts"):
        cc.judge_all([1, 2])


def test_throughput_loss_from_a_resource_loss_and_the_step_shares():
    shares = cc.step_shares("A100-SXM4-80GB")
    assert shares["compute"] + shares["nvlink"] + shares["network"] == pytest.approx(1.0)
    assert 0 < shares["network"] < shares["nvlink"] < shares["compute"]
    v = config_judges.Verdict("warn", "x", resource="compute", loss=(0.1, 0.1))
    # the compute part of the step grows by 1/0.9: a 10 % slower GPU loses share * 0.111 / (1 + ...)
    growth = shares["compute"] * 0.1 / 0.9
    assert cc.throughput_loss(v, shares) == [pytest.approx(growth / (1 + growth))] * 2
    assert cc.throughput_loss(config_judges.Verdict("warn", "x", resource="host", loss=(0.5, 0.5)), shares) is None
    assert cc.throughput_loss(config_judges.Verdict("warn", "x", resource="startup", loss=(0, 0)), shares) == [0, 0]
    assert cc.throughput_loss(config_judges.Verdict("warn", "x"), shares) is None
    with pytest.raises(ValueError, match="status"):
        config_judges.Verdict("bad", "x")
    with pytest.raises(ValueError, match="loss"):
        config_judges.Verdict("warn", "x", resource="network", loss=(0.5, 0.2))
    with pytest.raises(ValueError, match="resource"):
        config_judges.Verdict("warn", "x", resource="gpu")
    with pytest.raises(TypeError, match="v must"):
        cc.throughput_loss("warn", shares)
    with pytest.raises(ValueError, match="shares"):
        cc.throughput_loss(v, {**shares, "compute": 1.5})


def test_each_gpu_runs_on_its_own_dgx_network():
    """Review B: the H100 step was modelled on the DGX A100's 8 x 200 Gb/s. On its own DGX H100 network
    (8 x 400 Gb/s, BasePOD RA) the network share of the 18B step stays near the A100's: NVIDIA doubled the
    NIC rate per GPU to hold it, while the NVLink share grows (compute got 3x faster, NVLink 1.5x)."""
    a100, h100, h200 = (cc.step_shares(g) for g in ("A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"))
    assert a100["node network"] == "DGX A100: 8 x 200 Gb/s" and h100["node network"] == "DGX H100: 8 x 400 Gb/s"
    assert h200["node network"] == "DGX H200: 8 x 400 Gb/s"
    assert h100["network"] == pytest.approx(a100["network"], rel=0.20)
    assert h100["nvlink"] > 1.2 * a100["nvlink"]
    assert "assumed" in cc.step_shares("A100-PCIE-80GB")["node network"]
    assert cc.step_shares() == a100
    from ampere import fabrics

    slow = cc.step_shares("H100-SXM5-80GB", network=fabrics.DGX_A100)  # the review's artefact, as a question
    assert slow["network"] > 1.5 * h100["network"] and slow["node network"] == "DGX A100: 8 x 200 Gb/s"
    with pytest.raises(ValueError, match="spec"):
        cc.step_shares("Voodoo-3")


def test_versions_and_nccl_minimums_come_from_nvidias_recipes():
    mins = node_judges.minimums()
    assert set(mins) == {"nccl", "driver", "cuda"}
    f = copy.deepcopy(healthy_a100_node())
    f["versions"].update(driver="530.30.02", cuda_runtime="12.1")
    v = node_judges.judge_versions(f)
    assert v.status == "warn" and "driver 530.30.02" in v.detail and v.sources == ("nvidiadgxcbench",)
    f["versions"].update(cuda_runtime="12.8", cuda_driver="12.5")
    assert node_judges.judge_versions(f).status == "fail"
    assert node_judges._version("2.19.4+cuda12.2") == (2, 19, 4) and node_judges._version(None) == ()


def test_the_published_a100_capture_has_one_finding_a_pending_row_remap():
    """Checked from the outside: the nvidia-smi -a capture of a real 4 x A100 node (thamada/nvidia-smi)
    read by examples.example_facts; GPU 00000000:9E:00.0 there has a correctable row remap pending."""
    from ampere.report import examples

    rows = cc.judge_all(examples.example_facts(), "A100-SXM4-80GB")
    bad = [(r["name"], r["status"]) for r in rows if r["status"] != "ok"]
    assert bad == [("ecc", "warn")] and "GPU1: 1 correctable row remap(s) pending" in rows[3]["observed"]
    faulty = cc.findings(cc.judge_all(examples.example_facts(list(examples.FAULTS)), "A100-SXM4-80GB"))
    assert len(faulty) == len(examples.FAULTS) + 1 and faulty[0]["check"] == "power-limit"
    with pytest.raises(ValueError, match="fault"):
        examples.example_facts(["cosmic-ray"])

"""Worked examples of the configuration checks: the facts of a real A100 node (a published ``nvidia-smi
-a`` capture, ``ampere/data/tables/report-example-node.json``) and the same node with named faults.

Pure: plain data in, plain data out. Chapter: *The reference check* (book/reference-check.ipynb),
"A node checked" and the exercises.
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

from .. import check

#: faults the chapter injects into the example node, each a change of one setting
FAULTS: dict[str, str] = {
    "power-cap": "GPU1's power limit lowered to 300 W",
    "app-clocks": "GPU0's application clock lowered to 1005 MHz",
    "acs": "ACS left redirecting on the bridge above the NICs",
    "no-peermem": "nvidia_peermem not loaded",
    "link-down": "two NVLink links of GPU2 down",
    "pcie-x8": "GPU3's PCIe link trained at x8",
    "nccl-p2p-off": "NCCL_P2P_DISABLE=1 left in the environment",
    "governor": "CPU governor powersave",
}


def example_facts(faults: Sequence[str] = ()) -> dict[str, Any]:
    """The facts of the published 4 x A100-SXM4-80GB node (GPU settings, driver and CUDA versions read in
    the capture), with ``faults`` (names of :data:`FAULTS`) applied. The host around the GPUs is not in
    the capture (NUMA placement, NICs, NCCL, torch, kernel command line): it is set to a healthy
    configuration, named as assumed in ``facts["assumed"]``. Chapter: *The reference check*."""
    from .. import results

    faults = check.names("faults", faults, tuple(FAULTS), min_len=0, max_len=4 * len(FAULTS))
    table = results.table("report-example-node")
    gpus = []
    for i, r in enumerate(table["rows"]):
        domain, rest = r["bus_id"].split(":", 1)
        gpus.append({
            "index": i, "name": r["product_name"], "bus_id": f"{int(domain, 16):04x}:{rest.lower()}",
            "sm_clock_mhz": r["sm_clock_mhz"], "sm_clock_max_mhz": r["max_sm_clock_mhz"],
            "app_clock_mhz": r["applications_clock_mhz"], "default_app_clock_mhz": r["default_applications_clock_mhz"],
            "clock_event_reasons": ["GPU idle" if c == "Idle" else c for c in r["clocks_event_reasons_active"]],
            "power_limit_w": r["current_power_limit_w"], "default_power_limit_w": r["default_power_limit_w"],
            "persistence": r["persistence_mode"] == "Enabled", "ecc": r["ecc_mode_current"] == "Enabled",
            "retired_pages_pending": None,
            "remapped_rows": {"correctable": r["remapped_rows_correctable"],
                              "uncorrectable": r["remapped_rows_uncorrectable"],
                              "pending": r["remapped_rows_pending"] == "Yes",
                              "failure": r["remapping_failure_occurred"] == "Yes"},
            "mig": r["mig_mode_current"] == "Enabled", "pcie_gen": r["pcie_generation_current"],
            "pcie_gen_max": r["pcie_generation_max"], "pcie_width": r["link_width_current"],
            "pcie_width_max": r["link_width_max"], "nvlink_active": 12, "nvlink_queried": 12,
            "numa_node": i // 2, "notes": []})
    facts: dict[str, Any] = {
        "reasons": {}, "gpus": gpus, "spec_name": "A100-SXM4-80GB",
        "driver": {"available": True, "driver_version": table["rows"][0]["driver_version"],
                   "cuda_driver_version": table["rows"][0]["cuda_version"]},
        "nics": [{"name": "mlx5_0", "bus_id": "0000:69:00.0", "numa_node": 0},
                 {"name": "mlx5_1", "bus_id": "0000:c3:00.0", "numa_node": 1}],
        "numa_nodes": {"0": list(range(32)), "1": list(range(32, 64))}, "process_cpus": list(range(32)),
        "numa_balancing": 0, "kernel_cmdline": "root=/dev/sda1 iommu=pt", "iommu_groups": 40, "hypervisor": False,
        "acs": {"read": True, "acsctl_lines": 6, "redirecting": [], "reason": None},
        "modules": ["nvidia", "nvidia_peermem"], "peer_memory_sysfs": True, "nccl_env": {},
        "versions": {"torch": "2.5.1", "cuda_runtime": "12.4", "nccl": "2.21.5",
                     "driver": table["rows"][0]["driver_version"], "cuda_driver": table["rows"][0]["cuda_version"]},
        "topology": {f"GPU{a}-GPU{b}": "NV12" for a in range(4) for b in range(a + 1, 4)},
        "cpu_governors": {"performance": 64},
        "assumed": ["NUMA placement", "NICs", "ACS/IOMMU", "peer-memory module", "NCCL and torch versions",
                    "NVLink state", "CPU governor"],
    }
    g = facts["gpus"]
    if "power-cap" in faults:
        g[1]["power_limit_w"] = 300.0
    if "app-clocks" in faults:
        g[0]["app_clock_mhz"] = 1005
    if "acs" in faults:
        facts["acs"] = {**facts["acs"], "redirecting": ["00:01.0"]}
    if "no-peermem" in faults:
        facts["modules"], facts["peer_memory_sysfs"] = ["nvidia"], False
    if "link-down" in faults:
        g[2]["nvlink_active"] = 10
    if "pcie-x8" in faults:
        g[3]["pcie_width"] = 8
    if "nccl-p2p-off" in faults:
        facts["nccl_env"] = {"NCCL_P2P_DISABLE": "1"}
    if "governor" in faults:
        facts["cpu_governors"] = {"powersave": 64}
    return copy.deepcopy(facts)

"""ampere.report.config_facts: the readers on a fake sysfs/procfs tree and the fake NVML, the parsers of
lspci and nvidia-smi output, and that no reader ever raises."""

import json
import types

from ampere.report import config_facts

from ..fakecuda import fake_cuda  # noqa: F401 (fixture)

LSPCI_REDIRECT = """\
00:01.0 PCI bridge: Intel Corporation Device 09ab
\tCapabilities: [220 v1] Access Control Services
\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
17:00.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 80GB]
41:00.0 PCI bridge: PLX Technology, Inc. PEX 8747
\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-
"""

# the matrix layout nvidia-smi topo -m prints (GPU/NIC columns, then CPU and NUMA affinity)
TOPO = """\
\tGPU0\tGPU1\tGPU2\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV12\tNV12\tPXB\t0-31\t0\t\tN/A
GPU1\tNV12\t X \tNV12\tSYS\t0-31\t0\t\tN/A
GPU2\tNV12\tNV12\t X \tSYS\t32-63\t1\t\tN/A
NIC0\tPXB\tSYS\tSYS\t X

Legend:
  X    = Self
"""


def make_tree(root, gpu_bus="0000:17:00.0", width=16, nic_node=0, governor="performance", modules=("nvidia",)):
    """A fake machine: two NUMA nodes, one GPU and one InfiniBand adapter in sysfs, procfs files."""
    def put(rel, text):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    put("sys/devices/system/node/node0/cpulist", "0-31\n")
    put("sys/devices/system/node/node1/cpulist", "32-63\n")
    dev = f"sys/bus/pci/devices/{gpu_bus}"
    put(f"{dev}/numa_node", "0\n")
    put(f"{dev}/local_cpulist", "0-31\n")
    put(f"{dev}/current_link_speed", "16.0 GT/s PCIe\n")
    put(f"{dev}/max_link_speed", "16.0 GT/s PCIe\n")
    put(f"{dev}/current_link_width", f"{width}\n")
    put(f"{dev}/max_link_width", "16\n")
    put(f"sys/bus/pci/devices/0000:18:00.0/numa_node", f"{nic_node}\n")
    (root / "sys/class/infiniband/mlx5_0").mkdir(parents=True)
    (root / "sys/class/infiniband/mlx5_0/device").symlink_to(root / "sys/bus/pci/devices/0000:18:00.0")
    put("proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on\n")
    put("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme sse2\n")
    put("proc/modules", "".join(f"{m} 1234 0 - Live 0x0\n" for m in modules))
    put("proc/sys/kernel/numa_balancing", "1\n")
    (root / "sys/kernel/iommu_groups/0").mkdir(parents=True)
    (root / "sys/kernel/iommu_groups/1").mkdir(parents=True)
    for cpu in range(2):
        put(f"sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor", f"{governor}\n")
    return root


def test_parsers():
    assert config_facts.parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert config_facts.parse_cpulist(None) == [] and config_facts.parse_cpulist("x-y") == []
    acs = config_facts.parse_acs(LSPCI_REDIRECT)
    assert acs["read"] and acs["redirecting"] == ["00:01.0"] and acs["acsctl_lines"] == 2
    denied = config_facts.parse_acs("00:01.0 PCI bridge: x\n\tCapabilities: <access denied>\n")
    assert not denied["read"] and "root" in denied["reason"]
    topo = config_facts.parse_topo(TOPO)
    assert topo["GPU0-GPU1"] == "NV12" and topo["GPU0-NIC0"] == "PXB" and "GPU1-GPU0" not in topo
    assert config_facts.parse_topo("No devices were found") == {}


def test_sysfs_reader_on_a_fake_tree(tmp_path):
    root = make_tree(tmp_path, width=8)
    pci = config_facts.read_pci(root, "0000:17:00.0")
    assert pci == {"numa_node": 0, "local_cpus": list(range(32)), "sysfs_current_gen": 4, "sysfs_current_width": 8,
                   "sysfs_max_gen": 4, "sysfs_max_width": 16}
    assert config_facts.read_pci(root, None) == {}
    nics = config_facts.read_nics(root)
    assert nics == [{"name": "mlx5_0", "bus_id": "0000:18:00.0", "numa_node": 0}]
    numa = config_facts.read_numa(root, cpus=[40, 41])
    assert numa["numa_nodes"] == {"0": list(range(32)), "1": list(range(32, 64))}
    assert numa["process_cpus"] == [40, 41] and numa["numa_balancing"] == 1


def test_read_facts_with_the_fake_nvml_and_a_fake_tree(fake_cuda, tmp_path):  # noqa: F811
    fake = fake_cuda("A100-SXM4-80GB", "A100-SXM4-80GB")
    nv = fake.nvml
    # the fake implements the probe's queries; the report's extra ones are added on the instance
    nv.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=h.bus_id.encode())
    nv.nvmlDeviceGetPersistenceMode = lambda h: 1
    nv.nvmlDeviceGetApplicationsClock = lambda h, kind: 1140
    nv.nvmlDeviceGetDefaultApplicationsClock = lambda h, kind: 1140
    nv.nvmlDeviceGetPowerManagementDefaultLimit = lambda h: 400_000
    nv.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0x1 | 0x40  # idle + HW thermal slowdown
    nv.nvmlDeviceGetMaxPcieLinkWidth = lambda h: 16
    nv.nvmlDeviceGetNvLinkState = lambda h, link: int(link < 12) if link < 12 else (_ for _ in ()).throw(
        nv.NVMLError("Invalid Argument"))
    fake.gpus[1].pcie_width = 8
    root = make_tree(tmp_path)
    calls = []

    def run(argv):
        calls.append(argv[0])
        return (0, LSPCI_REDIRECT) if argv[0] == "lspci" else (0, TOPO)

    facts = config_facts.read_facts(root=root, env={"NCCL_P2P_DISABLE": "1", "HOME": "/root"}, run=run, cpus=[0])
    assert json.loads(json.dumps(facts)) == facts  # plain data
    g0, g1 = facts["gpus"]
    assert g0["name"] == "NVIDIA A100-SXM4-80GB" and g0["bus_id"] == "0000:17:00.0" and g0["numa_node"] == 0
    assert g0["app_clock_mhz"] == 1140 and g0["power_limit_w"] == 400 and g0["persistence"] is True
    assert g0["clock_event_reasons"] == ["GPU idle", "HW thermal slowdown"]
    assert g0["nvlink_active"] == 12 and g0["nvlink_queried"] == 12 and g0["mig"] is False and g0["ecc"] is True
    assert g1["pcie_width"] == 8 and g1["pcie_width_max"] == 16
    assert g0["retired_pages_pending"] is None and g0["remapped_rows"] is None  # not in the fake: None, no error
    assert facts["driver"]["driver_version"] == "999.99-fake" and facts["driver"]["available"]
    assert facts["nccl_env"] == {"NCCL_P2P_DISABLE": "1"} and facts["acs"]["redirecting"] == ["00:01.0"]
    assert facts["topology"]["GPU0-GPU1"] == "NV12" and calls == ["lspci", "nvidia-smi"]
    assert facts["modules"] == ["nvidia"] and facts["peer_memory_sysfs"] is False
    assert facts["iommu_groups"] == 2 and facts["hypervisor"] is False
    assert facts["cpu_governors"] == {"performance": 2}


def test_no_reader_raises_on_a_bare_machine(tmp_path, fake_cuda):  # noqa: F811
    fake = fake_cuda("H200")
    fake.nvml.init_error = "Driver Not Loaded"
    facts = config_facts.read_facts(root=tmp_path, env={}, run=lambda argv: None)
    assert facts["gpus"] == [] and "Driver Not Loaded" in facts["reasons"]["gpus"]
    assert facts["nics"] == [] and facts["numa_nodes"] == {} and facts["acs"]["reason"] == "lspci is not installed"
    assert facts["cpu_governors"] is None and facts["modules"] is None and facts["kernel_cmdline"] is None

    class Broken:
        def nvmlDeviceGetCount(self):
            raise RuntimeError("segfault in the binding")

    facts = config_facts.read_facts(root=tmp_path, env={}, run=lambda argv: None, nvml=Broken())
    assert facts["gpus"] == [] and "segfault" in facts["reasons"]["gpus"]

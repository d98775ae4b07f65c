"""Judges of the node around the GPUs: NUMA placement, the PCIe path between GPUs and NICs (ACS, IOMMU),
GPUDirect RDMA, NCCL's version and environment, NVLink, software versions and the CPU frequency governor.

Pure functions of the facts of :mod:`.config_facts` (no torch, no reading of the machine), each returning a
:class:`.config_judges.Verdict`. Chapter: *The reference check* (book/reference-check.ipynb), "The
configuration behind a training step".
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from .. import specs
from .config_judges import SLOW_PATH_ENV, Verdict, case_loss, no_gpu


def _version(text: Any) -> tuple[int, ...]:
    """``"2.19.4+cuda12.2"`` -> (2, 19, 4); unreadable -> ()."""
    nums = re.findall(r"\d+", str(text or "").split("+")[0])
    return tuple(int(n) for n in nums[:4])


def minimums() -> dict[str, str]:
    """The minimum versions NVIDIA's benchmarking recipes ask for (``report-prerequisites`` table)."""
    from .. import results

    return {r["item"]: r["minimum"] for r in results.table("report-prerequisites")["rows"]}


def judge_numa(f: Mapping[str, Any]) -> Verdict:
    if (v := no_gpu(f)) is not None:
        return v
    nodes = f.get("numa_nodes") or {}
    if len(nodes) < 2:
        return Verdict("ok" if nodes else "n/a", f"{len(nodes) or 'no'} NUMA node(s) in sysfs",
                       "one memory domain: nothing to place" if nodes else "not applicable here: no NUMA "
                       "information in sysfs")
    gpu_nodes = {g["index"]: g.get("numa_node") for g in f["gpus"] if g.get("numa_node") not in (None, -1)}
    cpus = set(f.get("process_cpus") or [])
    seen = [f"GPU{i} on node {n}" for i, n in gpu_nodes.items()]
    problems, notes, loss = [], [], None
    far_nics = [n["name"] for n in f.get("nics") or [] if n.get("numa_node") not in (None, -1)
                and n["numa_node"] not in gpu_nodes.values()]
    if far_nics:
        problems.append(f"NIC(s) {', '.join(far_nics)} on a NUMA node without a GPU")
        loss = case_loss("nccl412-a800-nic-through-cpu", "nccl412-a800-nic-on-gpu-switch-gdr")
    if cpus and gpu_nodes:
        used = {n for n, c in nodes.items() if cpus & set(c)}
        if len(used) > 1:
            notes.append(f"this process may run on {len(used)} NUMA nodes (not pinned)")
        elif used and not used & {str(n) for n in gpu_nodes.values()}:
            problems.append(f"this process is pinned to node {', '.join(sorted(used))}, away from every GPU")
    if f.get("numa_balancing"):
        notes.append("kernel.numa_balancing=1 (the kernel migrates pages between nodes)")
    observed = "; ".join(seen[:4] + problems + notes) or "no GPU reports a NUMA node"
    if problems:
        return Verdict("warn", observed, "traffic between a GPU and a NIC or CPU on another socket crosses the "
                       "inter-socket link: NCCL stages it through CPU memory", "network",
                       None if loss is None else (loss, loss), ("nccl412",))
    return Verdict("info" if notes else "ok", observed, "pin each rank to the CPUs of its GPU's node "
                   "(numactl --cpunodebind, Slurm --cpu-bind)" if notes else "GPUs, NICs and process aligned",
                   "host" if notes else "", None, ("nvidiadgxcbench",) if notes else ())


def judge_pcie_path(f: Mapping[str, Any]) -> Verdict:
    acs = f.get("acs") or {}
    cmdline = f.get("kernel_cmdline") or ""
    groups = f.get("iommu_groups")
    iommu_on = bool(groups) and not re.search(r"\biommu=pt\b|\b(intel|amd)_iommu=off\b", cmdline)
    parts = []
    if groups is not None:
        parts.append(f"{groups} IOMMU groups" + (" (translated, no iommu=pt)" if iommu_on else ""))
    if f.get("hypervisor"):
        parts.append("virtual machine")
    redirect = acs.get("redirecting") or []
    if acs.get("read"):
        parts.append(f"ACS redirect on {len(redirect)} bridge(s)" + (f": {', '.join(redirect[:4])}" if redirect
                                                                     else ""))
    loss = case_loss("nccl949-a100-vm-acs-redirect", "nccl949-a100-vm-acs-fixed")
    detail = ("ACS redirect sends every peer-to-peer PCIe transfer (GPU to NIC, GPU to GPU without NVLink) up "
              "to the root complex; IOMMU translation adds a lookup to each")
    if redirect:
        if f.get("hypervisor"):
            return Verdict("fail", "; ".join(parts), detail + ". In a virtual machine the fix is on the host: "
                           "enable ATS on each NIC and set ACS on the switches and root ports above the passed-"
                           "through GPUs and NICs to allow ATS", "network", (loss, loss),
                           ("nccl949", "nvidiaaievmconfig", "nvidianccltroubleshooting"))
        return Verdict("fail", "; ".join(parts), detail, "network", (loss, loss),
                       ("nccl949", "nccltests112", "nvidianccltroubleshooting"))
    if not f.get("gpus"):
        why = (f.get("reasons") or {}).get("gpus") or "no GPU"
        return Verdict("n/a", "; ".join(parts) or "nothing read", f"not applicable here: {why}; the settings "
                       "read are shown")
    if iommu_on:
        return Verdict("warn", "; ".join(parts), detail + (". ACS not readable: " + acs["reason"] if not
                       acs.get("read") and acs.get("reason") else ""), "network", None,
                       ("nccltests115", "nvidianccltroubleshooting"))
    if not acs.get("read"):
        return Verdict("info", "; ".join(parts + [acs.get("reason") or "ACS not read"]),
                       "run the report as root (or lspci -vvv | grep ACSCtl) to read ACS", "network")
    return Verdict("ok", "; ".join(parts), "peer-to-peer PCIe traffic stays below the switches")


def judge_gpudirect(f: Mapping[str, Any]) -> Verdict:
    nics = f.get("nics") or []
    if not nics:
        return Verdict("n/a", "no InfiniBand/RoCE adapter", "not applicable here: GPUDirect RDMA serves "
                       "traffic between nodes, and this machine has no RDMA adapter")
    mods = set(f.get("modules") or ())
    loaded = sorted(mods & {"nvidia_peermem", "nv_peer_mem"})
    if loaded or f.get("peer_memory_sysfs"):
        return Verdict("ok", f"{', '.join(loaded) or 'memory_peers/nv_mem'} with {len(nics)} RDMA adapter(s)",
                       "NICs read and write GPU memory directly")
    if f.get("modules") is None:
        return Verdict("n/a", f"{len(nics)} RDMA adapter(s); /proc/modules unreadable",
                       "not applicable here: the loaded kernel modules cannot be read")
    loss = case_loss("nccl412-a800-nic-through-cpu", "nccl412-a800-nic-on-gpu-switch-gdr")
    return Verdict("fail", f"{len(nics)} RDMA adapter(s), no nvidia_peermem / nv_peer_mem loaded",
                   "without the peer-memory module NCCL stages every inter-node transfer through CPU memory; "
                   "the published size is a lower bound: one NIC reached through the CPU on a one-NIC node "
                   "(16 instead of 24 GB/s), where a node with a NIC per GPU stages all of them",
                   "network", (loss, loss), ("nccl412", "nccl489"), at_least=True)


def judge_nccl(f: Mapping[str, Any]) -> Verdict:
    version = (f.get("versions") or {}).get("nccl")
    env = f.get("nccl_env") or {}
    minimum = minimums().get("nccl", "")
    risky = [f"{k}={v}" for k, v in env.items() if k in SLOW_PATH_ENV
             and not (k == "NCCL_NVLS_ENABLE" and v.strip() not in ("0",))]
    observed = f"NCCL {version or 'not found'}" + (f"; set: {', '.join(f'{k}={v}' for k, v in env.items())}"
                                                    if env else "; no NCCL_* variable set")
    if risky:
        why = "; ".join(SLOW_PATH_ENV[r.split("=")[0]] for r in risky)
        return Verdict("warn", observed, f"{', '.join(risky)}: {why}", "nvlink", None,
                       ("nvidianccltroubleshooting", "nccl199"))
    if version and _version(version) < _version(minimum):
        return Verdict("warn", observed, f"older than the {minimum} NVIDIA's benchmark recipes require",
                       "network", None, ("nvidiadgxcbench",))
    if not version:
        return Verdict("n/a", observed, "not applicable here: no NCCL (a CPU-only torch, or torch missing)")
    return Verdict("ok", observed, f"at least {minimum}, no variable forcing a slower path")


def judge_nvlink(f: Mapping[str, Any], spec: specs.GPUSpec | None = None) -> Verdict:
    if (v := no_gpu(f)) is not None:
        return v
    expected = spec.nvlink_links if spec is not None and spec.nvlink_generation else None
    if spec is not None and not spec.form_factor.startswith("SXM"):
        expected = None  # PCIe cards: a bridge, if any, is optional
    down, worst = [], 0.0
    for g in f["gpus"]:
        active = g.get("nvlink_active")
        if expected and active is not None and active < expected:
            down.append(f"GPU{g['index']}: {active} of {expected} links up")
            worst = max(worst, 1 - active / expected)
    topo = f.get("topology") or {}
    gpu_pairs = {k: v for k, v in topo.items() if k.count("GPU") == 2}
    no_nv = sorted(k for k, v in gpu_pairs.items() if not v.startswith("NV"))
    if down or (expected and no_nv):
        obs = "; ".join(down + ([f"{len(no_nv)} GPU pair(s) without NVLink: {', '.join(no_nv[:3])}"] if no_nv
                                 else []))
        return Verdict("fail", obs, "collectives run at the speed of the slowest link of the ring",
                       "nvlink", (worst, worst) if worst else None)
    counts = sorted({g.get("nvlink_active") for g in f["gpus"] if g.get("nvlink_active") is not None})
    if not counts and not gpu_pairs:
        return Verdict("n/a", "no NVLink state", "not applicable here: a PCIe GPU, or neither NVML nor "
                       "nvidia-smi topo -m reported NVLink")
    obs = f"{'/'.join(map(str, counts)) or '?'} links up per GPU" + (f" of {expected}" if expected else "")
    if gpu_pairs:
        obs += f"; topology: {', '.join(sorted(set(gpu_pairs.values())))} between GPUs"
    return Verdict("ok", obs, "every link trained")


def judge_versions(f: Mapping[str, Any]) -> Verdict:
    v = f.get("versions") or {}
    mins = minimums()
    observed = (f"driver {v.get('driver') or '-'} (CUDA {v.get('cuda_driver') or '-'}), torch {v.get('torch') or '-'}"
                f" (CUDA {v.get('cuda_runtime') or '-'})")
    runtime, supported = _version(v.get("cuda_runtime")), _version(v.get("cuda_driver"))
    if runtime and supported and runtime[:2] > supported[:2]:
        return Verdict("fail", observed, "torch's CUDA is newer than the driver supports", "compute", None)
    old = [f"{name} {have} < {mins[key]}" for key, name, have in (("driver", "driver", v.get("driver")),
                                                                   ("cuda", "CUDA", v.get("cuda_runtime")))
           if have and key in mins and _version(have) < _version(mins[key])]
    if old:
        return Verdict("warn", observed, f"older than NVIDIA's recipes require: {'; '.join(old)}", "compute", None,
                       ("nvidiadgxcbench",))
    if not v.get("driver"):
        why = (f.get("reasons") or {}).get("gpus") or "no NVIDIA driver"
        return Verdict("n/a", observed, f"not applicable here: {why}")
    return Verdict("ok", observed, "recent enough for NVIDIA's recipes; compare them with the reference's")


def judge_governor(f: Mapping[str, Any]) -> Verdict:
    govs = f.get("cpu_governors")
    if not govs:
        why = (f.get("reasons") or {}).get("cpu_governors") or "no cpufreq"
        return Verdict("n/a", "not readable", f"not applicable here: {why}")
    observed = ", ".join(f"{n} CPUs {g}" for g, n in sorted(govs.items()))
    if set(govs) - {"performance"}:
        return Verdict("warn", observed, "CPU cores ramp their clock on demand: data loading and kernel launches "
                       "run slower in bursts", "host", None)
    return Verdict("ok", observed, "")

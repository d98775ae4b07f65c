"""Readers: the facts the configuration checks judge, read from NVML (``nvidia-ml-py``), sysfs and procfs,
the environment and the tools present (``nvidia-smi topo -m``, ``lspci -vvv``).

Every reader returns plain data (a JSON-serialisable dict) and never raises: what it cannot read is None,
with the reason in ``facts["reasons"][<fact>]``. The judging is elsewhere (:mod:`.config_checks`, pure), so
that the checks are tested on fake sysfs trees and the fake NVML of the test suite. The filesystem root
(``root``), the environment (``env``), the command runner (``run``), the NVML module (``nvml``) and the
process's CPUs (``cpus``) are arguments for the same reason.

No torch import: versions come from the :class:`ampere.device.DeviceInfo` when the caller has one, else
from the installed distributions. Chapter: *The reference check* (book/reference-check.ipynb), "The
configuration behind a training step".
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

#: NVML clock-event (throttle) reason bits (``nvmlClocksEventReason*``) and the names the report prints
CLOCK_EVENT_BITS: tuple[tuple[int, str], ...] = (
    (0x1, "GPU idle"), (0x2, "applications clocks setting"), (0x4, "SW power cap"), (0x8, "HW slowdown"),
    (0x10, "sync boost"), (0x20, "SW thermal slowdown"), (0x40, "HW thermal slowdown"),
    (0x80, "HW power brake slowdown"), (0x100, "display clock setting"),
)
#: PCIe transfer rate per lane (GT/s, as sysfs prints it) -> generation
_GT_PER_S_GEN = {"2.5": 1, "5.0": 2, "5": 2, "8.0": 3, "8": 3, "16.0": 4, "16": 4, "32.0": 5, "32": 5, "64.0": 6,
                 "64": 6}
#: distributions of pip's torch that ship NCCL, newest first
_NCCL_DISTS = ("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11")
#: NCCL's peer-memory kernel modules (GPUDirect RDMA): the driver's, then the older Mellanox one
PEER_MEMORY_MODULES = ("nvidia_peermem", "nv_peer_mem")

Runner = Callable[[Sequence[str]], "tuple[int, str] | None"]


def run_command(argv: Sequence[str], timeout_s: float = 10.0) -> tuple[int, str] | None:
    """(exit code, stdout + stderr) of a tool, or None when the tool is not installed or hangs."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.returncode, proc.stdout + proc.stderr


def _read(root: Path, rel: str) -> str | None:
    try:
        return (root / rel.lstrip("/")).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def parse_cpulist(text: str | None) -> list[int]:
    """``"0-3,8,10-11"`` (sysfs ``cpulist``) -> [0, 1, 2, 3, 8, 10, 11]; empty or unreadable -> []."""
    out: list[int] = []
    for part in (text or "").replace("\n", ",").split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def _sysfs_bus_id(nvml_bus_id: Any) -> str | None:
    """NVML's ``"00000000:68:00.0"`` -> sysfs's ``"0000:68:00.0"``."""
    if isinstance(nvml_bus_id, bytes):
        nvml_bus_id = nvml_bus_id.decode(errors="replace")
    if not isinstance(nvml_bus_id, str) or ":" not in nvml_bus_id:
        return None
    domain, rest = nvml_bus_id.split(":", 1)
    return f"{int(domain, 16) & 0xFFFF:04x}:{rest.lower()}" if re.fullmatch(r"[0-9A-Fa-f]+", domain) else None


def read_pci(root: Path, bus_id: str | None) -> dict[str, Any]:
    """NUMA node, local CPUs and PCIe link (current and maximum) of a PCI device from sysfs."""
    if not bus_id:
        return {}
    base = f"sys/bus/pci/devices/{bus_id}"
    out: dict[str, Any] = {"numa_node": _int(_read(root, f"{base}/numa_node")),
                           "local_cpus": parse_cpulist(_read(root, f"{base}/local_cpulist")) or None}
    for which in ("current", "max"):
        speed = _read(root, f"{base}/{which}_link_speed")
        m = re.match(r"([\d.]+)\s*GT/s", speed or "")
        out[f"sysfs_{which}_gen"] = _GT_PER_S_GEN.get(m.group(1)) if m else None
        out[f"sysfs_{which}_width"] = _int(_read(root, f"{base}/{which}_link_width"))
    return out


def _nvml_gpu(nvml: Any, handle: Any) -> tuple[dict[str, Any], list[str]]:
    """One GPU's settings through NVML; each query that fails leaves its field None and a note."""
    g: dict[str, Any] = {}
    notes: list[str] = []

    def ask(key: str, name: str, *args: Any, post: Callable[[Any], Any] = lambda v: v) -> None:
        fn = getattr(nvml, name, None)
        if fn is None:
            g.setdefault(key, None)
            return
        try:
            g[key] = post(fn(handle, *args))
        except Exception as exc:  # NotSupported, NoPermission, an older driver ...
            g.setdefault(key, None)
            notes.append(f"{name}: {type(exc).__name__}: {exc}"[:160])

    sm = getattr(nvml, "NVML_CLOCK_SM", 1)
    text = lambda v: v.decode(errors="replace") if isinstance(v, bytes) else str(v)  # noqa: E731
    ask("name", "nvmlDeviceGetName", post=text)
    ask("bus_id", "nvmlDeviceGetPciInfo", post=lambda p: _sysfs_bus_id(getattr(p, "busId", None)))
    ask("sm_clock_mhz", "nvmlDeviceGetClockInfo", sm)
    ask("sm_clock_max_mhz", "nvmlDeviceGetMaxClockInfo", sm)
    ask("app_clock_mhz", "nvmlDeviceGetApplicationsClock", sm)
    ask("default_app_clock_mhz", "nvmlDeviceGetDefaultApplicationsClock", sm)
    ask("clock_event_reasons", "nvmlDeviceGetCurrentClocksEventReasons",
        post=lambda bits: [n for b, n in CLOCK_EVENT_BITS if int(bits) & b])
    ask("power_limit_w", "nvmlDeviceGetEnforcedPowerLimit", post=lambda mw: mw / 1000)
    ask("default_power_limit_w", "nvmlDeviceGetPowerManagementDefaultLimit", post=lambda mw: mw / 1000)
    ask("persistence", "nvmlDeviceGetPersistenceMode", post=lambda v: bool(v))
    ask("ecc", "nvmlDeviceGetEccMode", post=lambda v: bool(v[0]))
    ask("retired_pages_pending", "nvmlDeviceGetRetiredPagesPendingStatus", post=lambda v: bool(v))
    ask("remapped_rows", "nvmlDeviceGetRemappedRows",
        post=lambda v: {"correctable": int(v[0]), "uncorrectable": int(v[1]), "pending": bool(v[2]),
                        "failure": bool(v[3])})
    ask("mig", "nvmlDeviceGetMigMode", post=lambda v: bool(v[0]))
    ask("pcie_gen", "nvmlDeviceGetCurrPcieLinkGeneration")
    ask("pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration")
    ask("pcie_width", "nvmlDeviceGetCurrPcieLinkWidth")
    ask("pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth")
    links = getattr(nvml, "nvmlDeviceGetNvLinkState", None)
    g["nvlink_active"] = g["nvlink_queried"] = None
    if links is not None:
        active = queried = 0
        for link in range(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18))):
            try:
                state = links(handle, link)
            except Exception:  # past the last link of this GPU, or no NVLink at all
                break
            queried += 1
            active += int(bool(state))
        g["nvlink_active"], g["nvlink_queried"] = (active, queried) if queried else (None, None)
    return g, notes


def read_gpus(nvml: Any = None, root: Path = Path("/")) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every GPU NVML sees, with its sysfs facts; and the driver facts (version, CUDA the driver supports).

    ``nvml`` defaults to ``ampere.device.nvml()`` (initialised once per process). Returns ([], {"reason": ...})
    when NVML cannot be used (no NVIDIA driver on this machine).
    """
    if nvml is None:
        from .. import device

        nvml, error = device.nvml()
        if nvml is None:
            detail = re.sub(r"^NVML unavailable \((?:\w+: )?(.*)\)$", r"\1", error or "")
            return [], {"available": False, "reason": f"no NVIDIA driver ({detail or 'NVML unavailable'})"}
    driver: dict[str, Any] = {"available": True, "reason": None}
    try:
        count = int(nvml.nvmlDeviceGetCount())
    except Exception as exc:
        return [], {"available": False, "reason": f"NVML nvmlDeviceGetCount: {exc}"}
    for key, name, post in (("driver_version", "nvmlSystemGetDriverVersion",
                             lambda v: v.decode() if isinstance(v, bytes) else str(v)),
                            ("cuda_driver_version", "nvmlSystemGetCudaDriverVersion",
                             lambda v: f"{int(v) // 1000}.{int(v) % 1000 // 10}")):
        try:
            driver[key] = post(getattr(nvml, name)())
        except Exception:
            driver[key] = None
    gpus = []
    for i in range(count):
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
        except Exception as exc:
            gpus.append({"index": i, "notes": [f"no NVML handle: {exc}"]})
            continue
        g, notes = _nvml_gpu(nvml, handle)
        g.update({"index": i, "notes": notes})
        g.update(read_pci(root, g.get("bus_id")))
        gpus.append(g)
    return gpus, driver


def read_nics(root: Path = Path("/")) -> list[dict[str, Any]]:
    """RDMA adapters (``/sys/class/infiniband``: InfiniBand and RoCE) with their PCI address and NUMA node."""
    base = root / "sys/class/infiniband"
    out = []
    try:
        names = sorted(p.name for p in base.iterdir())
    except OSError:
        return []
    for name in names:
        try:
            bus_id = (base / name / "device").resolve().name
        except OSError:
            bus_id = None
        out.append({"name": name, "bus_id": bus_id,
                    "numa_node": _int(_read(root, f"sys/class/infiniband/{name}/device/numa_node"))})
    return out


def read_numa(root: Path = Path("/"), cpus: Sequence[int] | None = None) -> dict[str, Any]:
    """NUMA nodes and their CPUs, the CPUs this process may run on, and ``kernel.numa_balancing``."""
    nodes: dict[str, list[int]] = {}
    try:
        for p in sorted((root / "sys/devices/system/node").glob("node[0-9]*")):
            nodes[p.name[4:]] = parse_cpulist(_read(root, f"sys/devices/system/node/{p.name}/cpulist"))
    except OSError:
        pass
    if cpus is None:
        try:
            cpus = sorted(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = None
    return {"numa_nodes": nodes, "process_cpus": list(cpus) if cpus is not None else None,
            "numa_balancing": _int(_read(root, "proc/sys/kernel/numa_balancing"))}


def parse_acs(text: str) -> dict[str, Any]:
    """``lspci -vvv`` output -> which bridges redirect peer-to-peer traffic (``ACSCtl: ... ReqRedir+``).

    ``read`` is False when lspci could not read the extended capabilities (``<access denied>``: it needs
    root) and found no ``ACSCtl`` line.
    """
    device, redirect, seen = None, [], 0
    for line in text.splitlines():
        m = re.match(r"^([0-9a-fA-F]{2,4}:[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2})?\.[0-7])\s", line)
        if m:
            device = m.group(1)
        elif "ACSCtl:" in line:
            seen += 1
            if re.search(r"\b(ReqRedir|CmpltRedir)\+", line) and device and device not in redirect:
                redirect.append(device)
    denied = "access denied" in text
    return {"read": bool(seen), "acsctl_lines": seen, "redirecting": redirect,
            "reason": None if seen else ("lspci needs root to read the ACS capability" if denied
                                         else "no ACSCtl line in lspci -vvv (no ACS-capable bridge)")}


def parse_topo(text: str) -> dict[str, str]:
    """``nvidia-smi topo -m`` -> {"GPU0-GPU1": "NV12", "GPU0-NIC0": "PXB", ...} (upper triangle, no self)."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    header = next((ln for ln in lines if re.match(r"^\s+GPU0\b", ln)), None)
    if header is None:
        return {}
    cols = [c for c in header.split() if re.fullmatch(r"(GPU|NIC|mlx5_)\w*", c)]
    out: dict[str, str] = {}
    for ln in lines:
        parts = ln.split()
        if not parts or parts[0] not in cols:
            continue
        row = parts[0]
        for col, cell in zip(cols, parts[1:1 + len(cols)]):
            if col != row and f"{col}-{row}" not in out:
                out[f"{row}-{col}"] = cell
    return out


def read_versions(info: Any = None) -> dict[str, Any]:
    """torch, its CUDA and NCCL versions: from the device probe when given, else from installed packages."""
    from importlib import metadata

    def dist(*names: str) -> str | None:
        for n in names:
            try:
                return metadata.version(n)
            except metadata.PackageNotFoundError:
                continue
        return None

    return {"torch": getattr(info, "torch_version", None) or dist("torch"),
            "cuda_runtime": getattr(info, "cuda_version", None),
            "nccl": getattr(info, "nccl_version", None) or dist(*_NCCL_DISTS)}


def read_facts(info: Any = None, root: str | os.PathLike[str] = "/", env: Mapping[str, str] | None = None,
               run: Runner | None = None, nvml: Any = None, cpus: Sequence[int] | None = None) -> dict[str, Any]:
    """Everything the configuration checks judge, as one JSON-serialisable dict (never raises).

    ``info`` is the :class:`ampere.device.DeviceInfo` of the run (versions, the catalogue GPU); the other
    arguments replace the machine for tests: ``root`` the filesystem root, ``env`` the environment (names
    to strings), ``run(argv) -> (exit code, output) or None`` the command runner, ``nvml`` an NVML binding
    (an object with ``nvmlDeviceGetCount``), ``cpus`` this process's CPUs. What the machine does not let it
    read is recorded, never raised; an argument of the wrong kind is refused (``ValueError``/``TypeError``).
    Chapter: *The reference check*.
    """
    from .. import check
    from .arguments import device_info, path

    info = check.optional(device_info, "info", info)
    root = Path(path("root", root))
    env = dict(os.environ) if env is None else check.mapping("env", env)
    for k, v in env.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"env must map names to strings (like os.environ), got {k!r}: {v!r:.40}")
    run = run_command if run is None else check.function("run", run)
    if nvml is not None and not callable(getattr(nvml, "nvmlDeviceGetCount", None)):
        raise TypeError(f"nvml must be an NVML binding (pynvml, with nvmlDeviceGetCount), got {nvml!r:.60} "
                        f"({type(nvml).__name__})")
    cpus = check.optional(check.sequence, "cpus", cpus, lambda n, c: check.nonneg_int(n, c, maximum=1 << 20),
                          min_len=0, max_len=1 << 20)
    facts: dict[str, Any] = {"reasons": {}}
    try:
        gpus, driver = read_gpus(nvml, root)
    except Exception as exc:  # a broken NVML binding must not lose the other facts
        gpus, driver = [], {"available": False, "reason": f"NVML: {type(exc).__name__}: {exc}"}
    facts["gpus"], facts["driver"] = gpus, driver
    if not driver.get("available"):
        facts["reasons"]["gpus"] = driver.get("reason")
    facts["spec_name"] = getattr(info, "spec_name", None)
    facts["nics"] = read_nics(root)
    facts.update(read_numa(root, cpus))
    cmdline = _read(root, "proc/cmdline")
    facts["kernel_cmdline"] = cmdline
    try:
        facts["iommu_groups"] = sum(1 for _ in (root / "sys/kernel/iommu_groups").iterdir())
    except OSError:
        facts["iommu_groups"] = None
    cpuinfo = _read(root, "proc/cpuinfo")
    facts["hypervisor"] = None if cpuinfo is None else bool(re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.M))
    lspci = run(["lspci", "-vvv"])
    if lspci is None:
        facts["acs"] = {"read": False, "redirecting": [], "reason": "lspci is not installed"}
    else:
        facts["acs"] = parse_acs(lspci[1])
    modules = _read(root, "proc/modules")
    facts["modules"] = None if modules is None else sorted({ln.split()[0] for ln in modules.splitlines() if ln})
    facts["peer_memory_sysfs"] = (root / "sys/kernel/mm/memory_peers/nv_mem/version").exists()
    facts["nccl_env"] = {k: v for k, v in sorted(env.items()) if k.startswith("NCCL_")}
    facts["versions"] = {**read_versions(info), "driver": driver.get("driver_version"),
                         "cuda_driver": driver.get("cuda_driver_version")}
    topo = run(["nvidia-smi", "topo", "-m"]) if gpus else None
    facts["topology"] = parse_topo(topo[1]) if topo and topo[0] == 0 else {}
    if gpus and not facts["topology"]:
        facts["reasons"]["topology"] = "nvidia-smi topo -m gave no matrix" if topo else "nvidia-smi not found"
    govs: dict[str, int] = {}
    for p in sorted((root / "sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_governor")):
        g = _read(root, str(p.relative_to(root)))
        if g:
            govs[g] = govs.get(g, 0) + 1
    facts["cpu_governors"] = govs or None
    if not govs:
        facts["reasons"]["cpu_governors"] = "no cpufreq in sysfs (a virtual machine or a container hides it)"
    return facts

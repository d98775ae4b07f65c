"""The configuration checks: each a named piece of data (what the setting is, how it is read, the expected
value, the cost of getting it wrong and the fix) with a small pure judge; the results; the findings ranked
by expected throughput loss.

Pure: no torch, no matplotlib, no reading of the machine (:mod:`.config_facts` reads, this file judges).
The cost of a setting on the resource it affects comes from a published case (``ampere/data``); it becomes
a loss of training throughput through the share of a training step that resource takes, from the Megatron
model of a reference run (:func:`step_shares`). Chapter: *The reference check*
(book/reference-check.ipynb), "The configuration behind a training step" and "Findings, ranked".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .. import check, specs
from . import config_judges as gj
from . import node_judges as nj
from .arguments import checked_rows, loss_pair, mapping_list
from .config_judges import RESOURCES, STATUSES, Verdict


@dataclass(frozen=True)
class ConfigCheck:
    """One named check: the teaching text and the judge (``judge(facts, spec) -> Verdict``)."""

    name: str
    title: str
    what: str  # what the setting does to a training step
    how: str  # how the report reads it
    expected: str
    cost: str  # the cost of getting it wrong, with its source where one exists
    fix: str
    judge: Callable[[Mapping[str, Any], Any], Verdict] = field(repr=False, compare=False)
    prescreen: str = ""  # what NVIDIA's Exemplar prescreen reads for the same setting ("" if nothing)

    def __post_init__(self) -> None:
        for name in ("name", "title", "what", "how", "expected", "cost", "fix"):
            check.string(name, getattr(self, name), max_len=1000)
        check.string("prescreen", self.prescreen, allow_empty=True, max_len=1000)
        check.function("judge", self.judge)


def _plain(fn: Callable[[Mapping[str, Any]], Verdict]) -> Callable[[Mapping[str, Any], Any], Verdict]:
    return lambda facts, spec: fn(facts)


#: Every check of the report, in the order of a training step: the GPU, its host, the fabric, the software.
CHECKS: tuple[ConfigCheck, ...] = (
    ConfigCheck("gpu-clocks", "GPU clocks and application clocks",
                "Tensor-core throughput is proportional to the SM clock; the GPU boosts above its application "
                "clock unless power, heat or a lowered setting holds it back.",
                "NVML: SM clock, maximum, application and default application clocks, clock-event reasons",
                "application clock = default; no thermal, power-brake or HW-slowdown reason active",
                "up to the clock ratio on compute-bound work", "nvidia-smi -rac (reset application clocks); "
                "check cooling and power delivery if a slowdown reason is active", _plain(gj.judge_clocks),
                "nvidia-smi -q (clocks, clock-event reasons)"),
    ConfigCheck("power-limit", "Power limit",
                "Under load a tensor-core GPU runs at the clock its power limit allows, not at the boost clock.",
                "NVML: enforced and default power limits", "enforced limit = default (the board's TDP)",
                "at most the power cut, usually less: 300 W PCIe vs 400 W SXM4 A100 cards differ by a few "
                "percent in the best BF16 matmul (Bekman 2024, confounded with other differences)",
                "nvidia-smi -pl <default W> (or the site's power-capping policy)", gj.judge_power,
                "nvidia-smi -q (power readings)"),
    ConfigCheck("persistence-mode", "Persistence mode",
                "Without it the driver unloads when no process uses the GPU, and every job start pays the "
                "initialisation again.", "NVML: persistence mode", "enabled",
                "start-up latency per process; no steady-state loss", "nvidia-smi -pm 1 (or nvidia-persistenced)",
                _plain(gj.judge_persistence), "nvidia-smi -q"),
    ConfigCheck("ecc", "ECC and retired or remapped memory",
                "ECC protects HBM contents; a pending row remap or page retirement waits for a GPU reset, and "
                "a failed remap means the GPU must be replaced.",
                "NVML: ECC mode, retired pages pending, remapped rows", "ECC on; nothing pending; no failure",
                "a crash or silent corruption rather than a slowdown", "reset the GPU (nvidia-smi -r) when idle; "
                "replace it after a remap failure", _plain(gj.judge_ecc),
                "nvidia-smi --query-gpu (uncorrected ECC errors, row remap pending or failed): warns"),
    ConfigCheck("mig-mode", "MIG mode",
                "In MIG mode the GPU is split into instances; even the largest has fewer SMs than the whole GPU.",
                "NVML: current MIG mode", "disabled on a training node",
                "the SMs outside the largest instance (A100: 10 of 108)", "nvidia-smi -mig 0 and a GPU reset",
                gj.judge_mig, "nvidia-smi -q"),
    ConfigCheck("pcie-link", "PCIe link generation and width",
                "Host-to-GPU copies (data loading, checkpoints, offload) and, without NVLink, GPU-to-GPU "
                "traffic cross this link; bandwidth is proportional to the lane count and doubles per generation.",
                "NVML (current and maximum generation and width), sysfs current/max_link_speed and _width",
                "current width = maximum; generation = maximum under load (it drops at rest)",
                "the missing lanes' share of host transfers", "reseat the card or riser; check the slot's "
                "bifurcation in the BIOS", _plain(gj.judge_pcie), "lspci -v, nvidia-smi -q"),
    ConfigCheck("numa-affinity", "NUMA affinity of GPUs, NICs and the process",
                "Each GPU and NIC hangs off one CPU socket; traffic to another socket's memory, NIC or CPU "
                "crosses the inter-socket link.",
                "sysfs numa_node of each GPU and RDMA NIC, node cpulists, the process's CPU affinity, "
                "kernel.numa_balancing", "every NIC on a node with a GPU; each rank pinned to its GPU's node",
                "a NIC reached through the CPU: 16 instead of 24 GB/s between nodes on a node with one HDR NIC "
                "(NCCL maintainer, NVIDIA/nccl#412; the same figure sizes the gpudirect-rdma check)",
                "pin ranks (numactl --cpunodebind, Slurm --cpu-bind); use the NIC next to each GPU (NCCL_IB_HCA)",
                _plain(nj.judge_numa), "numactl -H, kernel.numa_balancing, nvidia-smi topo -m"),
    ConfigCheck("acs-iommu", "ACS and IOMMU on the PCIe path",
                "Access Control Services can redirect peer-to-peer PCIe transfers (GPU to NIC, GPU to GPU) "
                "through the root complex; IOMMU translation adds a lookup to each.",
                "lspci -vvv (ACSCtl, needs root), /proc/cmdline, /sys/kernel/iommu_groups, hypervisor flag",
                "no ReqRedir+/CmpltRedir+ on bridges between GPUs and NICs; iommu=pt or IOMMU off on bare metal",
                "27 instead of 48 GB/s between A100 VMs until ACS was set right (NVIDIA/nccl#949)",
                "bare metal: disable ACS redirection in the BIOS or with setpci, iommu=pt on the kernel command "
                "line; in a VM: enable ATS on each NIC and set ACS on the host's switches and root ports to allow "
                "ATS (NVIDIA AI Enterprise VM guide)",
                _plain(nj.judge_pcie_path), "lspci -v, /proc/cmdline, systemd-detect-virt, dmesg (SMMU)"),
    ConfigCheck("gpudirect-rdma", "GPUDirect RDMA (peer-memory module)",
                "With nvidia_peermem (or the older nv_peer_mem) the NIC reads and writes GPU memory directly; "
                "without it every inter-node transfer is staged through CPU memory.",
                "/proc/modules, /sys/kernel/mm/memory_peers/nv_mem, /sys/class/infiniband",
                "module loaded on every node with RDMA adapters", "at least the NIC-placement cost of "
                "NVIDIA/nccl#412 (16 instead of 24 GB/s on a node with one HDR NIC); a node with a NIC per GPU "
                "stages all of them through CPU memory, a loss no published figure sizes",
                "modprobe nvidia_peermem (and load it at boot)", _plain(nj.judge_gpudirect),
                "ibv_devinfo, IB port state, GPU-initiated transport readiness (PeerMappingOverride or gdrdrv)"),
    ConfigCheck("nccl", "NCCL version and environment",
                "NCCL picks the algorithm, protocol, channels and transports per size and topology; "
                "environment variables can force slower choices.",
                "the NCCL torch ships (device probe or pip metadata), NCCL_* variables",
                "NCCL >= the version NVIDIA's recipes require; no variable forcing a slower path",
                "NCCL_P2P_DISABLE=1 on an NVLink node sends GPU traffic through host memory",
                "unset the variable, or set it only where a documented platform needs it", _plain(nj.judge_nccl),
                "enroot environ.d: NCCL_IB_HCA or MELLANOX_VISIBLE_DEVICES set"),
    ConfigCheck("nvlink", "NVLink state and topology",
                "On SXM boards every GPU pair talks over NVLink through NVSwitch; one link down slows every "
                "ring through that GPU.", "NVML link state per link; nvidia-smi topo -m",
                "all links up (A100: 12, H100/H200: 18); NV# between every GPU pair",
                "the down links' share of NVLink bandwidth", "reset the GPU or the node; escalate a link that "
                "stays down (hardware)", nj.judge_nvlink, "nvidia-smi nvlink -s and -e (inactive links, bit-error "
                "rate), nvidia-smi topo -m"),
    ConfigCheck("versions", "Driver, CUDA and torch versions",
                "Kernels, collectives and their defaults change between versions; the reference's versions "
                "are part of the reference.", "NVML driver and CUDA-driver versions; torch and its CUDA",
                "versions at least those NVIDIA's recipes require, and equal to the reference's",
                "not a fixed number: compare with the reference", "upgrade to the versions of the reference",
                _plain(nj.judge_versions), "the recipes' prerequisites (CUDA, driver, NCCL minimums)"),
    ConfigCheck("cpu-governor", "CPU frequency governor",
                "The CPU feeds the GPU: data loading, Python, kernel launches. A power-saving governor ramps "
                "cores up only under sustained load.",
                "sysfs scaling_governor of every CPU", "performance",
                "workload-dependent: the CPU-bound part of a step", "cpupower frequency-set -g performance",
                _plain(nj.judge_governor), "lscpu, scaling_governor, CPU C-states"),
)


def check_names() -> list[str]:
    """The names of :data:`CHECKS`, in the order of a training step."""
    return [c.name for c in CHECKS]


def judge_all(facts: Mapping[str, Any], spec: str | specs.GPUSpec | None = None,
              shares: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """Judge every check on ``facts``: one dict per check (its text and its verdict) with the expected
    loss of training throughput (:func:`throughput_loss`). A judge that raises becomes an "n/a" row naming
    the error: the report never stops on a check. Chapter: *The reference check*."""
    if not isinstance(facts, Mapping):
        raise TypeError(f"facts must be a mapping (ampere.report.read_facts()); got {type(facts).__name__}")
    spec = None if spec is None else specs.get(check.gpu("spec", spec))
    shares = step_shares(spec) if shares is None else _shares("shares", shares)
    rows = []
    for c in CHECKS:
        try:
            v = c.judge(facts, spec)
        except Exception as exc:  # a judge must never take the report down
            v = Verdict("n/a", "could not be judged", f"not applicable here: {type(exc).__name__}: {exc}"[:200])
        text = {k: getattr(c, k) for k in ("name", "title", "what", "how", "expected", "cost", "fix")}
        rows.append({**text, **asdict(v), "loss": list(v.loss) if v.loss else None,
                     "throughput_loss": throughput_loss(v, shares)})
    return rows


def _node_network(spec: str | specs.GPUSpec | None = None) -> Any:
    """The network of the DGX node a GPU comes in, as an :class:`ampere.fabrics.NodeNetwork`: DGX A100
    (8 x HDR 200 Gb/s) for the A100 SXM4 cards, DGX H100 (8 x NDR 400 Gb/s ConnectX-7) for the H100 SXM5, and
    the same 8 x 400 Gb/s for the H200 (the BasePOD reference architecture lists DGX H200 and H100 with the same
    adapters), with the GPU's own NVLink. Other GPUs (PCIe cards, older SXM) have no DGX of their own in the
    package: the DGX A100's network is assumed, and its name says so. Chapter: *The reference check*."""
    from .. import fabrics

    if spec is None:
        return fabrics.DGX_A100
    spec = specs.get(check.gpu("spec", spec))
    sxm = spec.form_factor.startswith("SXM") and spec.nvlink_bytes_per_s > 0
    base = fabrics.DGX_H100 if sxm and spec.architecture == "Hopper" else fabrics.DGX_A100
    if base.gpu == spec.name:
        return base
    if not sxm or spec.architecture not in ("Ampere", "Hopper"):
        return base.with_(name=f"{base.name} network (assumed for {spec.name})")
    name = "DGX H200" if spec.name.startswith("H200") else f"{base.name} network, {spec.name}"
    return base.with_(gpu=spec.name, intra_bytes_per_s=fabrics.nvlink_effective_bytes_per_s(spec), name=name)


def step_shares(spec: str | specs.GPUSpec | None = None, network: Any = None) -> dict[str, Any]:
    """Share of a training step in compute, NVLink collectives and network collectives, from the Megatron
    model of Table 1's 18B run (tensor 8 over NVLink, data-parallel 32 over InfiniBand) on ``spec``
    (A100-SXM4-80GB by default) in the node it comes in (:func:`_node_network`: an H100 talks over the DGX
    H100's 400 Gb/s adapters, not the DGX A100's 200 Gb/s). Host transfers are not in the model: share None (a
    loss there stays unknown); start-up costs nothing in the steady state: share 0. ``network`` (an
    :class:`ampere.fabrics.NodeNetwork`) replaces the node's network, to ask what another one would change.
    The answer's ``node network`` names the network, ``reference`` the run."""
    from .. import fabrics, megatron

    spec = specs.get(check.gpu("spec", "A100-SXM4-80GB" if spec is None else spec))
    if network is not None and not isinstance(network, fabrics.NodeNetwork):
        raise TypeError(f"network must be an ampere.fabrics.NodeNetwork (fabrics.DGX_A100, DGX_H100), got "
                        f"{network!r:.60} ({type(network).__name__})")
    net = _node_network(spec) if network is None else network
    row = next(r for r in megatron.TABLE1 if r["name"] == "18B")
    est = megatron.estimate(megatron.table1_config(row), row["gpus"], row["batch"], row["tensor"],
                            row["pipeline"], row["microbatch"], gpu=spec.name, network=net)
    s = est.shares()
    nvlink = s.get("tensor-parallel all-reduce", 0.0)
    network = s.get("data-parallel all-reduce", 0.0) + s.get("pipeline sends", 0.0)
    return {"compute": 1.0 - nvlink - network, "nvlink": nvlink, "network": network, "host": None, "startup": 0.0,
            "node network": f"{net.name}: {net.hcas_per_node} x {net.hca_bytes_per_s * 8 / 1e9:.0f} Gb/s",
            "reference": f"Megatron model, Table 1 {row['name']} layout on {est.gpu}"}


def _shares(name: str, shares: Any) -> dict[str, Any]:
    """Step shares as :func:`step_shares` gives them: each resource's share a fraction or None."""
    out = check.mapping(name, shares)
    for k, x in out.items():
        if k in RESOURCES and x is not None:
            out[k] = check.fraction(f"{name}[{k!r}]", x)
    return out


def throughput_loss(v: Verdict, shares: Mapping[str, Any]) -> list[float] | None:
    """(low, high) fraction of training throughput lost when ``v.resource`` loses ``v.loss`` of its
    throughput: the step grows by share x l / (1 - l). None when the loss or the share is unknown.
    ``v`` is a :class:`Verdict`, ``shares`` what :func:`step_shares` returns. Chapter: *The reference check*."""
    if not isinstance(v, Verdict):
        raise TypeError(f"v must be an ampere.report.Verdict, got {v!r:.60} ({type(v).__name__})")
    shares = _shares("shares", shares)
    if v.loss is None or shares.get(v.resource) is None:
        return None
    share = float(shares[v.resource])
    out = []
    for lost in v.loss:
        lost = min(max(float(lost), 0.0), 0.99)
        growth = share * lost / (1 - lost)
        out.append(growth / (1 + growth))
    return out


_SEVERITY = {s: i for i, s in enumerate(STATUSES)}


def findings(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The checks that failed or warn, ranked by expected loss of training throughput (the high end of its
    range, largest first); those no published figure sizes come after, failures before warnings; each
    with its fix. ``rows`` are :func:`judge_all`'s; a loss marked ``at_least`` prints as "at least"."""
    rows = checked_rows("rows", rows)
    for i, r in enumerate(rows):
        r["throughput_loss"] = loss_pair(f"rows[{i}]['throughput_loss']", r.get("throughput_loss"))
    bad = [r for r in rows if r["status"] in ("fail", "warn")]

    def key(r: Mapping[str, Any]) -> tuple[bool, float, int]:
        loss = r.get("throughput_loss")
        return (loss is None, -(loss[1] if loss else 0.0), _SEVERITY[r["status"]])

    return [{"rank": i + 1, "check": r["name"], "status": r["status"], "observed": r.get("observed", ""),
             "expected loss": _loss_text(r.get("throughput_loss"), bool(r.get("at_least"))), "fix": r.get("fix", "")}
            for i, r in enumerate(sorted(bad, key=key))]


def _loss_text(loss: Sequence[float] | None, at_least: bool = False) -> str:
    if loss is None:
        return "unknown"
    lo, hi = (100 * x for x in loss)
    if hi < 0.05:
        return "none (steady state)"
    if at_least:
        return f"at least {lo:.1f} %"
    return f"{hi:.1f} %" if abs(hi - lo) < 0.05 else f"{lo:.1f}-{hi:.1f} %"


def check_rows(rows: Sequence[Mapping[str, Any]], wide: bool = False) -> list[dict[str, str]]:
    """Printable rows of :func:`judge_all`: check, status, observed, why (and expected, fix when ``wide``)."""
    wide = check.boolean("wide", wide)
    out = []
    for r in mapping_list("rows", rows, ("name", "status", "observed", "detail", "expected", "fix")):
        why = r["detail"] or r["expected"]
        row = {"check": r["name"], "status": r["status"], "observed": r["observed"], "why": why}
        if wide:
            row.update(expected=r["expected"], fix=r["fix"])
        out.append(row)
    return out


def catalogue_rows(prescreen: bool = False) -> list[dict[str, str]]:
    """The checks as the chapter teaches them: what each setting does, the expected value, the cost; with
    ``prescreen``, the check and what NVIDIA's Exemplar prescreen collects or checks for the same setting."""
    if check.boolean("prescreen", prescreen):
        return [{"check": c.name, "NVIDIA's prescreen": c.prescreen or "-"} for c in CHECKS]
    return [{"check": c.name, "what it does to a step": c.what, "expected": c.expected, "cost when wrong": c.cost}
            for c in CHECKS]


def share_rows(gpus: Sequence[str] = ("A100-SXM4-80GB", "H100-SXM5-80GB")) -> list[dict[str, str]]:
    """:func:`step_shares` of each of ``gpus`` as printable rows (percent of the step, and the node network
    the step runs on)."""
    rows = []
    for g in check.gpus("gpus", gpus, max_len=len(specs.names())):
        s = step_shares(g)
        rows.append({"GPU": g, "network": s["node network"].split(": ")[1],
                     "compute": f"{100 * s['compute']:.0f} %", "NVLink collectives": f"{100 * s['nvlink']:.0f} %",
                     "network collectives": f"{100 * s['network']:.0f} %"})
    return rows

"""Judges: small pure functions that turn the facts of :mod:`.config_facts` into a verdict for one
configuration check (status, what was observed, why, and the throughput lost on the resource it affects).

Pure: no torch, no matplotlib, no reading of the machine (the facts are the input). The published figures
a judge uses (the cost of a setting) come from ``ampere/data`` through :func:`case_loss`.
Chapter: *The reference check* (book/reference-check.ipynb), "The configuration behind a training step".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .. import check, specs

#: statuses, from the worst; "info" is a reading with nothing wrong in it, "n/a" a check that cannot apply
STATUSES: tuple[str, ...] = ("fail", "warn", "info", "ok", "n/a")
#: clock-event reasons that mean the GPU slowed down (the others are normal: idle, sync boost ...)
SLOWDOWN_REASONS = frozenset({"SW power cap", "HW slowdown", "SW thermal slowdown", "HW thermal slowdown",
                              "HW power brake slowdown"})
#: NCCL variables that, set, take NCCL off its fastest path for the machine (NCCL documentation)
SLOW_PATH_ENV: dict[str, str] = {
    "NCCL_P2P_DISABLE": "GPU-to-GPU traffic goes through host shared memory instead of NVLink or PCIe P2P",
    "NCCL_SHM_DISABLE": "no shared-memory transport: intra-node traffic that cannot use P2P goes over the network",
    "NCCL_IB_DISABLE": "InfiniBand/RoCE is not used: inter-node traffic falls back to TCP sockets",
    "NCCL_NET_GDR_LEVEL": "limits GPU Direct RDMA to NICs this close to the GPU (0/LOC turns it off)",
    "NCCL_ALGO": "forces the collective algorithm instead of NCCL's per-size choice",
    "NCCL_PROTO": "forces the protocol (Simple, LL, LL128) instead of NCCL's per-size choice",
    "NCCL_MAX_NCHANNELS": "caps the channels, hence the links and SMs a collective uses",
    "NCCL_NVLS_ENABLE": "0 turns off NVLink SHARP (the in-switch all-reduce of Hopper NVSwitch systems)",
    "NCCL_CROSS_NIC": "changes how rings map onto NICs of a rail-optimised fabric",
}


#: the parts of a training step a setting acts on ("" for none)
RESOURCES: tuple[str, ...] = ("compute", "nvlink", "network", "host", "startup", "correctness", "")


@dataclass(frozen=True)
class Verdict:
    """A judge's answer. ``loss`` is (low, high) fraction of the throughput of ``resource`` (one of
    :data:`RESOURCES`) lost, or None when no source gives a size; ``at_least`` marks a published figure
    that is a lower bound of the loss (measured on a smaller or simpler machine than the one judged).
    Chapter: *The reference check*."""

    status: str
    observed: str
    detail: str = ""
    resource: str = ""
    loss: tuple[float, float] | None = None
    sources: tuple[str, ...] = ()
    at_least: bool = False

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status={self.status!r}; allowed: {', '.join(STATUSES)}")
        check.string("observed", self.observed, allow_empty=True, max_len=4000)
        check.string("detail", self.detail, allow_empty=True, max_len=4000)
        check.one_of("resource", self.resource, RESOURCES)
        from .arguments import loss_pair

        object.__setattr__(self, "loss", loss_pair("loss", self.loss))
        object.__setattr__(self, "sources", tuple(check.names("sources", self.sources, _bib_keys(), min_len=0,
                                                              max_len=32)))
        check.boolean("at_least", self.at_least)


def _bib_keys() -> tuple[str, ...]:
    """The keys of book/references.bib (``ampere/data/tables/sources.json``): what a verdict may cite."""
    from .. import results

    return tuple(r["key"] for r in results.table("sources")["rows"])


def no_gpu(facts: Mapping[str, Any]) -> Verdict | None:
    """The "not applicable here" verdict of a GPU check on a machine NVML sees no GPU on, else None."""
    if facts.get("gpus"):
        return None
    why = (facts.get("reasons") or {}).get("gpus") or "NVML reports no GPU"
    return Verdict("n/a", "no NVIDIA GPU", f"not applicable here: {why}")


def case_loss(record_id: str, good_id: str | None = None, figure: str = "busbw_gb_per_s",
              reference: str | None = None) -> float:
    """The fraction of bandwidth a published case lost: 1 - bad / good, from ``config-case`` records
    (the good value from another record, or from the ``reference`` figure of the same record)."""
    from .. import results

    recs = {r.id: r for r in results.records(benchmark="config-case", kind="published")}
    bad = recs[record_id]
    good = recs[good_id].figures[figure] if good_id else bad.figures[reference or f"expected_{figure}"]
    return 1 - bad.figures[figure] / good


def power_sensitivity() -> float:
    """Fraction of best BF16 matmul throughput lost per fraction of power limit cut, from the published pair
    of A100 80GB cards (PCIe at its TDP vs SXM4 at its TDP, Bekman 2024's MAMF table). Confounded: the two
    cards also differ in HBM bandwidth and the runs in software; a scale, not a law."""
    from .. import gemm, results

    by_id = {r.id: r for r in results.records(benchmark="matmul", kind="published")}
    pcie, sxm = by_id["mamf-a100-pcie-80gb-bf16"], by_id["mamf-a100-sxm4-80gb-bf16"]
    lost = 1 - gemm.matmul_tflops(pcie) / gemm.matmul_tflops(sxm)
    cut = 1 - specs.get(pcie.gpu).tdp_w / specs.get(sxm.gpu).tdp_w
    return lost / cut


def _gpu_names(gpus: list[Mapping[str, Any]], items: list[str]) -> str:
    return "; ".join(items) if items else f"{len(gpus)} GPU(s)"


def judge_clocks(f: Mapping[str, Any]) -> Verdict:
    if (v := no_gpu(f)) is not None:
        return v
    bad, slow, seen, worst = [], [], [], 0.0
    for g in f["gpus"]:
        app, dflt, mx = g.get("app_clock_mhz"), g.get("default_app_clock_mhz"), g.get("sm_clock_max_mhz")
        seen.append(f"GPU{g['index']}: app {app or '?'} / default {dflt or '?'} / max {mx or '?'} MHz")
        if app and dflt and app < dflt:
            bad.append(f"GPU{g['index']} application clock {app} MHz < default {dflt} MHz")
            worst = max(worst, 1 - app / dflt)
        reasons = sorted(set(g.get("clock_event_reasons") or ()) & SLOWDOWN_REASONS)
        if reasons:
            slow.append(f"GPU{g['index']}: {', '.join(reasons)}")
    if slow:
        return Verdict("fail", "; ".join(slow), "the GPU is slowing itself down right now (read at rest, after "
                       "the probes): cooling, power delivery or a power cap", "compute", None)
    if bad:
        return Verdict("warn", "; ".join(bad), "application clocks lowered below the default "
                       "(nvidia-smi -ac): compute-bound kernels lose up to the clock ratio", "compute", (0.0, worst))
    if not any(g.get("app_clock_mhz") or g.get("sm_clock_max_mhz") for g in f["gpus"]):
        return Verdict("n/a", "clocks not readable", "not applicable here: NVML did not report the clocks")
    return Verdict("ok", seen[0] + (f" (and {len(seen) - 1} more)" if len(seen) > 1 else ""),
                   "default application clocks, no slowdown reason active; the boost clock above them is "
                   "the GPU's to take under load")


def judge_power(f: Mapping[str, Any], spec: specs.GPUSpec | None = None) -> Verdict:
    if (v := no_gpu(f)) is not None:
        return v
    low, seen, worst = [], [], 0.0
    for g in f["gpus"]:
        p, d = g.get("power_limit_w"), g.get("default_power_limit_w")
        d = d or (spec.tdp_w if spec else None)
        seen.append(f"GPU{g['index']}: {p or '?'} W of {d or '?'} W")
        if p and d and p < 0.99 * d:
            low.append(f"GPU{g['index']} limit {p:.0f} W < default {d:.0f} W")
            worst = max(worst, 1 - p / d)
    if low:
        k = power_sensitivity()
        return Verdict("warn", "; ".join(low), "a lowered power limit (nvidia-smi -pl) lowers the clock of "
                       f"tensor-core work: about {k:.2f} x the cut (published A100 PCIe vs SXM4 pair), at most "
                       "the cut; in synchronous training the slowest GPU paces every step", "compute",
                       (k * worst, worst), ("bekman2024mle",))
    if not any(g.get("power_limit_w") for g in f["gpus"]):
        return Verdict("n/a", "power limit not readable", "not applicable here: NVML did not report it")
    return Verdict("ok", seen[0], "enforced limit at the default")


def judge_persistence(f: Mapping[str, Any]) -> Verdict:
    if (v := no_gpu(f)) is not None:
        return v
    off = [f"GPU{g['index']}" for g in f["gpus"] if g.get("persistence") is False]
    if off:
        return Verdict("warn", f"off on {', '.join(off)}", "every new process re-initialises the GPU: start-up "
                       "latency, no steady-state throughput loss", "startup", (0.0, 0.0))
    if all(g.get("persistence") is None for g in f["gpus"]):
        return Verdict("n/a", "not readable", "not applicable here: NVML did not report the persistence mode")
    return Verdict("ok", "enabled", "the driver stays loaded between jobs")


def judge_ecc(f: Mapping[str, Any]) -> Verdict:
    if (v := no_gpu(f)) is not None:
        return v
    broken, pending, off = [], [], []
    for g in f["gpus"]:
        rows = g.get("remapped_rows") or {}
        if rows.get("failure"):
            broken.append(f"GPU{g['index']}: row remapping failed")
        elif (rows.get("pending") and rows.get("uncorrectable")) or g.get("retired_pages_pending"):
            broken.append(f"GPU{g['index']}: uncorrectable error, remap or retirement pending a reset")
        elif rows.get("pending"):
            pending.append(f"GPU{g['index']}: {rows.get('correctable', '?')} correctable row remap(s) pending "
                           "a reset")
        if g.get("ecc") is False:
            off.append(f"GPU{g['index']}")
    if broken:
        return Verdict("fail", "; ".join(broken), "memory with an uncorrectable error still in service: the "
                       "next error can end the job", "correctness", None)
    if pending:
        return Verdict("warn", "; ".join(pending), "the remap takes effect at the next GPU reset; until then the "
                       "faulty row stays in service", "correctness", None)
    if off:
        return Verdict("warn", f"ECC off on {', '.join(off)}", "no protection of HBM contents: silent corruption "
                       "of a long training run", "correctness", (0.0, 0.0))
    if all(g.get("ecc") is None for g in f["gpus"]):
        return Verdict("n/a", "not readable", "not applicable here: NVML did not report the ECC mode")
    return Verdict("ok", "ECC on, no pending remap or retirement", "")


def judge_mig(f: Mapping[str, Any], spec: specs.GPUSpec | None = None) -> Verdict:
    if (v := no_gpu(f)) is not None:
        return v
    on = [f"GPU{g['index']}" for g in f["gpus"] if g.get("mig")]
    if not on:
        if all(g.get("mig") is None for g in f["gpus"]):
            return Verdict("n/a", "no MIG on these GPUs", "not applicable here: the GPU has no MIG mode")
        return Verdict("ok", "disabled", "the whole GPU is one device")
    loss = None
    detail = "a training node in MIG mode exposes slices, not GPUs"
    if spec is not None:
        try:
            from .. import mig_geometry

            big = max(mig_geometry.profiles(spec), key=lambda p: (p.compute_slices, p.memory_slices))
            sms = mig_geometry.instance_peaks(spec, big.name).sms
            loss = (1 - sms / spec.sm_count, 1 - sms / spec.sm_count)
            detail += f": even the largest instance ({big.name}) has {sms} of {spec.sm_count} SMs"
        except (ImportError, AttributeError, ValueError) as exc:
            detail += f" (SMs of the largest instance unknown: {exc})"[:200]
    return Verdict("fail", f"enabled on {', '.join(on)}", detail, "compute", loss, ("nvidiamig",))


def judge_pcie(f: Mapping[str, Any]) -> Verdict:
    if (v := no_gpu(f)) is not None:
        return v
    narrow, slow, seen, worst = [], [], [], 0.0
    for g in f["gpus"]:
        w = g.get("pcie_width") or g.get("sysfs_current_width")
        wm = g.get("pcie_width_max") or g.get("sysfs_max_width")
        gen = g.get("pcie_gen") or g.get("sysfs_current_gen")
        genm = g.get("pcie_gen_max") or g.get("sysfs_max_gen")
        seen.append(f"GPU{g['index']}: Gen{gen or '?'} x{w or '?'} of Gen{genm or '?'} x{wm or '?'}")
        if w and wm and w < wm:
            narrow.append(seen[-1])
            worst = max(worst, 1 - w / wm)
        elif gen and genm and gen < genm:
            slow.append(seen[-1])
    if narrow:
        return Verdict("fail", "; ".join(narrow), "fewer lanes than the slot and the GPU allow (a badly seated "
                       "card, a riser, a BIOS bifurcation): host<->GPU bandwidth drops with the lane count",
                       "host", (worst, worst))
    if slow:
        return Verdict("info", "; ".join(slow), "a lower generation at rest is normal (the GPU slows an idle link "
                       "to save power); re-read it under load", "host", None, ("nvgpumon215",))
    if not seen or all("?" in s for s in seen):
        return Verdict("n/a", "link not readable", "not applicable here: neither NVML nor sysfs gave the link")
    return Verdict("ok", seen[0] + (f" (and {len(seen) - 1} more)" if len(seen) > 1 else ""), "full link")

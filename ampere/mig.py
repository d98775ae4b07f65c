"""Multi-Instance GPU, the chapter module: figures of layouts, NVML, a measurement, costs, and the views.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb). The models live in two shared
layers, both pure Python (no torch): :mod:`ampere.mig_geometry` (profile tables as data, placements,
layouts, what an instance owns) and :mod:`ampere.mig_sim` (the isolation event simulator). This module
re-exports their public names, so ``mig.instance_peaks``, ``mig.mig_gpus`` or ``mig.simulate`` keep
working, and adds what the chapter shows and measures:

* figures of layouts and of the isolation study (:func:`plot_layout`, :func:`plot_isolation`, ...);
* a read-only NVML report that never raises (:func:`nvml_mig_report`, :func:`compare_with_driver`);
* a measurement of the GPU or MIG instance this process runs on (:func:`measure_instance`,
  ``python -m ampere bench mig``), and its view beside recorded and published instance measurements
  (:func:`show_instance`);
* the cost of serving seven small models (:func:`serving_costs`) with the dated cloud prices of
  :mod:`ampere.pricing`;
* the chapter's tables as Markdown (``show_*``).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

from . import check, pricing, results, specs, views
from .mig_geometry import (COMPUTE_SLICES, MEMORY_SLICES, DocConflict, InstancePeaks, LayoutRow, LayoutUsage,
                           MigTable, Placement, Profile, addable, doc_conflicts, enumerate_layouts, format_layout,
                           instance_peaks, layout_maps, layout_rows, layouts_arg, mig_gpus, place, placement, profile,
                           profile_from_device_name, profiles, smallest_profile, table, usage, validate)
from .mig_sim import (MODES, SCENARIOS, IsolationRow, SimConfig, SimResult, TenantStats, VictimSummary, Workload,
                      default_tenants, isolation_study, service_time, simulate)

__all__ = [
    # geometry (ampere.mig_geometry)
    "Profile", "MigTable", "Placement", "MEMORY_SLICES", "COMPUTE_SLICES", "mig_gpus", "table", "profiles",
    "profile", "placement", "validate", "enumerate_layouts", "place", "addable", "LayoutUsage", "usage",
    "format_layout", "layout_maps", "LayoutRow", "layout_rows", "DocConflict", "doc_conflicts", "InstancePeaks",
    "instance_peaks", "profile_from_device_name", "smallest_profile",
    # isolation model (ampere.mig_sim)
    "Workload", "SimConfig", "TenantStats", "VictimSummary", "SimResult", "IsolationRow", "MODES", "SCENARIOS",
    "default_tenants", "simulate", "isolation_study", "service_time",
    # figures
    "plot_layout", "plot_layouts", "plot_layout_census", "plot_isolation",
    # NVML
    "MigInstance", "DriverProfile", "MigGpu", "MigReport", "nvml_mig_report", "DriverComparison",
    "compare_with_driver",
    # measurement
    "InstanceMeasurement", "measure_instance", "bench_main", "instance_points",
    # cost
    "ServingOption", "serving_costs",
    # views
    "profile_rows", "show_profiles", "show_doc_conflicts", "show_layouts", "show_validation", "show_isolation",
    "show_instance", "show_nvml", "show_prices", "show_serving", "media_owners",
]


# ---------------------------------------------------------------------------------------------------------
# Figures of layouts
# ---------------------------------------------------------------------------------------------------------

_PALETTE = ("#76b900", "#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#d62728", "#8c564b", "#e377c2")


def plot_layout(gpu: str | specs.GPUSpec, layout: Iterable[Any], ax: Any = None, title: str | None = None) -> Any:
    """Draw one layout: 8 memory slices above 7 compute slices, instances coloured, stranded slices hatched.

    Returns the matplotlib axes. Chapter: *Multi-Instance GPU*, figure "one layout".
    """
    from matplotlib.patches import Rectangle

    from . import plots

    spec = specs.get(gpu)
    t = table(spec)
    u = usage(spec, layout)
    placed = [placement(spec, n, s) for n, s in u.layout]
    if ax is None:
        _, ax = plots.figure("full")
    mem_gb = spec.memory_bytes / MEMORY_SLICES / 1e9
    rows = (("memory", 1.25, MEMORY_SLICES, u.memory_owner, u.stranded_memory),
            ("compute", 0.0, COMPUTE_SLICES, u.compute_owner, u.stranded_compute))
    for label, y, n, owner, stranded in rows:
        w = MEMORY_SLICES / n  # compute slices are drawn wider so both rows span the same width
        for i in range(n):
            o = owner[i]
            if o is not None:
                face, hatch, edge = _PALETTE[o % len(_PALETTE)], None, "white"
            elif i in stranded:
                face, hatch, edge = "#dddddd", "///", "#999999"
            else:
                face, hatch, edge = "white", None, "#999999"
            ax.add_patch(Rectangle((i * w, y), w, 1.0, facecolor=face, edgecolor=edge, hatch=hatch, lw=1.2))
            sub = f"{mem_gb:.0f} GB" if label == "memory" else (
                f"{t.sms_per_compute_slice} SMs" if t.sms_per_compute_slice else "GPC")
            ax.text(i * w + w / 2, y + 0.18, sub, ha="center", va="center", fontsize=8, color="#333333")
        ax.text(-0.15, y + 0.5, f"{label}\nslices", ha="right", va="center", fontsize=9)
    for k, p in enumerate(placed):
        for y, idx, n in ((1.25, p.memory, MEMORY_SLICES), (0.0, p.compute, COMPUTE_SLICES)):
            w = MEMORY_SLICES / n
            lo, hi = min(idx) * w, (max(idx) + 1) * w
            face = _PALETTE[k % len(_PALETTE)]
            ax.text((lo + hi) / 2, y + 0.6, p.name, ha="center", va="center", fontsize=8, color="white",
                    fontweight="bold", bbox={"facecolor": face, "edgecolor": "none", "pad": 2.0})
    ax.set_xlim(-1.6, MEMORY_SLICES + 0.05)
    ax.set_ylim(-0.1, 2.35)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for side in ("left", "bottom", "top", "right"):
        ax.spines[side].set_visible(False)
    sms = "" if u.sms_used is None else f"; {u.sms_used} of {u.total_sms} SMs in use"
    ax.set_title(title or f"{spec.name}: {format_layout(u.layout)}{sms}")
    plots.provenance_note(ax, f"model of {spec.name}; profiles and placements: MIG User Guide; hatched = stranded")
    return ax


def plot_layouts(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]], ax: Any = None,
                 profiles: Sequence[str] | None = None) -> Any:
    """All ``layouts`` as rows of instance bars on the memory-slice axis (a compact overview figure).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from matplotlib.patches import Rectangle

    from . import plots

    spec = specs.get(gpu)
    if ax is None:
        _, ax = plots.figure("tall")
    colour = {p.name: _PALETTE[i % len(_PALETTE)] for i, p in enumerate(table(spec).profiles)}
    layouts = layouts_arg(layouts)
    if not layouts:
        raise ValueError("layouts is empty: nothing to draw")
    n = len(layouts)
    for row, lay in enumerate(layouts):
        y = n - 1 - row
        u = usage(spec, lay, profiles)
        for name, s in u.layout:
            p = placement(spec, name, s)
            ax.add_patch(Rectangle((s + 0.04, y + 0.1), p.profile.memory_slices - 0.08, 0.8,
                                   facecolor=colour[name], edgecolor="white"))
        for i in u.stranded_memory:
            ax.add_patch(Rectangle((i + 0.04, y + 0.1), 0.92, 0.8, facecolor="#eeeeee", edgecolor="#bbbbbb",
                                   hatch="///"))
    used = [name for name in colour if any(name == n for lay in layouts for n, _ in lay)]
    handles = [Rectangle((0, 0), 1, 1, facecolor=colour[name]) for name in used]
    ax.legend(handles, used, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.set_xlim(0, MEMORY_SLICES)
    ax.set_ylim(0, n)
    ax.set_xticks([i + 0.5 for i in range(MEMORY_SLICES)], [str(i) for i in range(MEMORY_SLICES)])
    ax.set_yticks([])
    ax.grid(False)
    ax.set_xlabel("memory slice (placement start index)")
    ax.set_title(f"{spec.name}: {n} maximal layouts")
    plots.provenance_note(ax, f"model of {spec.name}; hatched = stranded memory slice")
    return ax


def plot_layout_census(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]], ax: Any = None,
                       profiles: Sequence[str] | None = None) -> Any:
    """Maximal layouts counted by number of instances, stacked by SMs in use (how much each one strands).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from . import plots

    spec = specs.get(gpu)
    rows = layout_rows(spec, layouts, profiles)
    if any(r.sms is None for r in rows):
        raise ValueError(f"gpu={spec.name!r}: the table lacks SM counts; the census needs them")
    if ax is None:
        _, ax = plots.figure("full")
    levels = sorted({r.sms for r in rows}, reverse=True)
    xs = list(range(1, COMPUTE_SLICES + 1))
    bottom = [0] * len(xs)
    shades = ("#4f7c00", "#76b900", "#b8d97a", "#e0eec0", "#f4f9ea")
    for k, sms in enumerate(levels):
        counts = [sum(1 for r in rows if r.instances == x and r.sms == sms) for x in xs]
        ax.bar(xs, counts, bottom=bottom, color=shades[k % len(shades)], edgecolor="white",
               label=f"{sms} SMs in use")
        bottom = [b + c for b, c in zip(bottom, counts)]
    ax.set_ylim(0, 1.1 * max(bottom))  # headroom: the tallest stack must not touch the frame
    ax.set_xlabel("instances in the layout")
    ax.set_ylabel("maximal layouts")
    ax.set_title(f"{spec.name}: {len(rows)} maximal layouts by size and SMs in use")
    plots.legend_outside(ax)
    plots.provenance_note(ax, f"model of {spec.name}; enumerate_layouts()")
    return ax


def plot_isolation(rows: Sequence[IsolationRow], ax: Any = None) -> Any:
    """Grouped bars: victims' p99 latency per sharing mode, one bar per scenario (log scale).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from . import plots

    if ax is None:
        _, ax = plots.figure("wide")
    rows = list(rows)
    if not rows or not all(isinstance(r, IsolationRow) for r in rows):
        raise ValueError("rows must be a non-empty list of IsolationRow (from isolation_study)")
    modes = list(dict.fromkeys(r.mode for r in rows))
    scen = list(dict.fromkeys(r.scenario for r in rows))
    colours = {"quiet": "#76b900", "hbm-bully": "#d62728", "pcie-bully": "#1f77b4"}
    width = 0.8 / len(scen)
    for k, sc in enumerate(scen):
        xs, ys = [], []
        for m_i, m in enumerate(modes):
            for r in rows:
                if r.mode == m and r.scenario == sc:
                    xs.append(m_i + (k - (len(scen) - 1) / 2) * width)
                    ys.append(r.victim_p99_ms)
        ax.bar(xs, ys, width=width * 0.95, label=sc, color=colours.get(sc, None))
    ax.set_xticks(range(len(modes)), modes)
    ax.set_yscale("log")
    from matplotlib.ticker import NullFormatter

    values = [r.victim_p99_ms for r in rows if r.victim_p99_ms == r.victim_p99_ms]
    ticks = [m * 10.0**e for e in range(-2, 5) for m in (1, 2, 5)
             if min(values) / 2 <= m * 10.0**e <= max(values) * 2]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("victims' p99 latency (ms, log)")
    ax.set_title("Six well-behaved tenants and a seventh: p99 latency by sharing mode")
    plots.legend_outside(ax)
    plots.provenance_note(ax, "model (discrete-event simulation, seeded); assumptions in the text")
    return ax


# ---------------------------------------------------------------------------------------------------------
# On a real GPU: MIG mode, instances and the driver's own profile table, through NVML, read-only
# ---------------------------------------------------------------------------------------------------------


@dataclass
class MigInstance:
    """One MIG device (a compute instance inside a GPU instance) as NVML reports it."""

    index: int  # MIG device index under its parent GPU
    name: str | None
    profile: str | None  # profile parsed from the name, e.g. "1g.5gb"
    uuid: str | None
    gpu_instance_id: int | None
    compute_instance_id: int | None
    sm_count: int | None
    memory_bytes: int | None
    placement: tuple[int, int] | None  # (start, size) on the memory-slice axis, when readable


@dataclass(frozen=True)
class DriverProfile:
    """One row of the driver's own GPU-instance profile table (NVML ``nvmlDeviceGetGpuInstanceProfileInfo``)."""

    id: int
    name: str | None
    slices: int  # compute slices
    max_count: int
    sm_count: int
    memory_mib: int
    placements: tuple[tuple[int, int], ...] | None  # (start, size) pairs; None when unreadable


@dataclass
class MigGpu:
    """One physical GPU: MIG mode, its instances, and (MIG enabled) the driver's profile table."""

    index: int
    name: str | None
    spec_name: str | None
    mig_capable: bool
    current_mode: bool | None  # None: unknown
    pending_mode: bool | None
    instances: list[MigInstance] = field(default_factory=list)
    driver_profiles: list[DriverProfile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class MigReport:
    """What NVML says about MIG on this machine. Built by :func:`nvml_mig_report`, which never raises."""

    nvml: bool  # NVML could be initialised
    driver_version: str | None
    gpus: list[MigGpu]
    this_process: str | None  # profile of the MIG instance this process runs in, when it runs in one
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """A human-readable report: the chapter prints it in a hardware-dependent cell."""
        lines = []
        if not self.nvml:
            lines.append("NVML did not answer on this machine (no NVIDIA driver):")
            lines.append("the chapter's tables are the MIG User Guide's.")
        else:
            lines.append(f"NVML ok, driver {self.driver_version or '?'}; {len(self.gpus)} GPU(s)")
        yes = {True: "enabled", False: "disabled", None: "unknown"}
        for g in self.gpus:
            lines.append(f"GPU {g.index}: {g.name or '?'} (spec {g.spec_name or 'not in catalogue'}), "
                         f"MIG {'capable' if g.mig_capable else 'not supported'}, mode {yes[g.current_mode]}"
                         + (f" (pending: {yes[g.pending_mode]})" if g.pending_mode != g.current_mode else ""))
            for m in g.instances:
                place_txt = f", placement {m.placement[0]}:{m.placement[1]}" if m.placement else ""
                mem = f", {m.memory_bytes / 2**30:.2f} GiB" if m.memory_bytes else ""
                lines.append(f"  MIG device {m.index}: {m.profile or m.name} GI {m.gpu_instance_id} "
                             f"CI {m.compute_instance_id}, {m.sm_count} SMs{mem}{place_txt}")
            if g.driver_profiles:
                lines.append(f"  driver profile table: {len(g.driver_profiles)} profiles "
                             "(compare_with_driver() checks them against the book's table)")
            lines += [f"  note: {n}" for n in g.notes]
        if self.this_process:
            lines.append(f"this process runs inside a MIG instance: {self.this_process}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _text(x: Any) -> str | None:
    if x is None:
        return None
    return x.decode(errors="replace") if isinstance(x, bytes) else str(x)


def _nvml_error_text(exc: Exception) -> str:
    value = getattr(exc, "value", None)
    hints = {4: "insufficient permissions (reading GPU-instance placements needs root or the MIG 'monitor' "
                "capability in /proc/driver/nvidia/capabilities/mig)",
             3: "not supported on this GPU or driver", 6: "not found"}
    return hints.get(value, f"{exc.__class__.__name__}: {exc}")


def nvml_mig_report(nvml: Any = None, device_name: str | None = None,
                    visible_devices: str | None = None) -> MigReport:
    """Read MIG mode, MIG devices and the driver's profile table through NVML, without root. Never raises.

    ``nvml`` is the NVML module to use (default: ``pynvml`` from nvidia-ml-py; tests pass a fake).
    ``device_name`` is the CUDA device name of this process (``probe().name``): "... MIG 1g.5gb" means
    this process runs inside that instance. ``visible_devices`` defaults to ``$CUDA_VISIBLE_DEVICES``
    (``MIG-<uuid>`` entries also reveal an instance). Every failure (no library, no driver, no permission,
    MIG disabled) becomes a note and the report says what it could not read.
    Chapter: *Multi-Instance GPU*, section "On a real GPU".
    """
    if device_name is not None and not isinstance(device_name, str):
        raise TypeError(f"device_name must be a string or None; got {device_name!r}")
    if visible_devices is not None and not isinstance(visible_devices, str):
        raise TypeError(f"visible_devices must be a string or None; got {visible_devices!r}")
    notes: list[str] = []
    gpus: list[MigGpu] = []
    driver = None
    this = profile_from_device_name(device_name)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "") if visible_devices is None else visible_devices
    mig_uuids = [v.strip() for v in str(visible).split(",") if v.strip().startswith("MIG-")]
    if nvml is None:
        try:
            import pynvml as nvml  # type: ignore[no-redef]  # provided by the nvidia-ml-py distribution
        except Exception:
            return MigReport(False, None, [], this, ["nvidia-ml-py (pynvml) is not installed"])
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return MigReport(False, None, [], this, [f"NVML could not start ({exc.__class__.__name__}): "
                                                 "no NVIDIA driver or library"])
    try:
        try:
            driver = _text(nvml.nvmlSystemGetDriverVersion())
        except Exception as exc:
            notes.append(f"driver version: {_nvml_error_text(exc)}")
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except Exception as exc:
            count = 0
            notes.append(f"device count: {_nvml_error_text(exc)}")
        for gi in range(count):
            gpus.append(_nvml_gpu(nvml, gi, mig_uuids))
        if not this and mig_uuids:
            for g in gpus:
                for m in g.instances:
                    if m.uuid and m.uuid in mig_uuids:
                        this = m.profile
        if count and not any(g.current_mode for g in gpus):
            notes.append("no GPU has MIG enabled; enabling it needs root (nvidia-smi -i 0 -mig 1) and an idle "
                         "GPU, so this chapter only reads: the layouts and the isolation model run on the CPU")
    except Exception as exc:  # anything unexpected from a driver or a fake: a note, never a traceback
        notes.append(f"NVML query failed: {exc.__class__.__name__}: {exc}")
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:
            pass
    return MigReport(True, driver, gpus, this, notes)


def _nvml_gpu(nvml: Any, index: int, mig_uuids: Sequence[str]) -> MigGpu:
    g = MigGpu(index=index, name=None, spec_name=None, mig_capable=False, current_mode=None, pending_mode=None)
    try:
        h = nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as exc:
        g.notes.append(f"handle: {_nvml_error_text(exc)}")
        return g
    try:
        g.name = _text(nvml.nvmlDeviceGetName(h))
    except Exception as exc:
        g.notes.append(f"name: {_nvml_error_text(exc)}")
    spec = specs.match(g.name)
    g.spec_name = spec.name if spec else None
    try:
        cur, pend = nvml.nvmlDeviceGetMigMode(h)
        g.current_mode, g.pending_mode = bool(cur), bool(pend)
        g.mig_capable = True
    except Exception as exc:
        g.mig_capable = bool(spec and spec.mig_max_instances)
        if getattr(exc, "value", None) == 3:
            g.notes.append("MIG is not supported on this GPU")
        else:
            g.notes.append(f"MIG mode: {_nvml_error_text(exc)}")
        return g
    if g.pending_mode != g.current_mode:
        g.notes.append("a MIG mode change is pending: it takes effect after a GPU reset")
    if not g.current_mode:
        return g
    # MIG devices (readable without root)
    try:
        slots = int(nvml.nvmlDeviceGetMaxMigDeviceCount(h))
    except Exception as exc:
        slots = 0
        g.notes.append(f"MIG device count: {_nvml_error_text(exc)}")
    for k in range(slots):
        try:
            mh = nvml.nvmlDeviceGetMigDeviceHandleByIndex(h, k)
        except Exception as exc:
            if getattr(exc, "value", None) != 6:  # NOT_FOUND: empty slot
                g.notes.append(f"MIG device {k}: {_nvml_error_text(exc)}")
            continue
        g.instances.append(_nvml_instance(nvml, h, mh, k, g.notes))
    if not g.instances:
        g.notes.append("MIG is enabled but no GPU instance exists (create some with nvidia-smi mig -cgi ... -C)")
    # the driver's own profile table (ID, slices, count, SMs, memory) and placements
    n_profiles = int(getattr(nvml, "NVML_GPU_INSTANCE_PROFILE_COUNT", 0))
    denied = False
    for pidx in range(n_profiles):
        info = None
        for args in ((h, pidx), (h, pidx, 1)):  # v2 (with the name) first, v1 for older drivers
            try:
                info = nvml.nvmlDeviceGetGpuInstanceProfileInfo(*args)
                break
            except Exception as exc:
                if getattr(exc, "value", None) == 4:
                    denied = True
                if getattr(exc, "value", None) != 13:  # only FUNCTION_NOT_FOUND is worth the v1 retry
                    break
        if info is None:
            continue  # profiles this GPU does not have answer NOT_SUPPORTED / INVALID_ARGUMENT
        placements = None
        try:
            placements = tuple(_nvml_placements(nvml, h, int(info.id)))
        except Exception as exc:
            g.notes.append(f"placements of profile {int(info.id)}: {_nvml_error_text(exc)}")
        g.driver_profiles.append(DriverProfile(
            id=int(info.id), name=profile_from_device_name("MIG " + (_text(getattr(info, "name", b"")) or "")),
            slices=int(info.sliceCount), max_count=int(info.instanceCount), sm_count=int(info.multiprocessorCount),
            memory_mib=int(info.memorySizeMB), placements=placements))
    if denied:
        g.notes.append("profile table: insufficient permissions")
    return g


def _nvml_placements(nvml: Any, h: Any, profile_id: int) -> list[tuple[int, int]]:
    import ctypes

    arr = (nvml.c_nvmlGpuInstancePlacement_t * 16)()
    count = ctypes.c_uint(16)
    nvml.nvmlDeviceGetGpuInstancePossiblePlacements(h, profile_id, arr, ctypes.byref(count))
    return [(int(arr[i].start), int(arr[i].size)) for i in range(int(count.value))]


def _nvml_instance(nvml: Any, parent: Any, mh: Any, k: int, notes: list[str]) -> MigInstance:
    def ask(fn: str, *args: Any) -> Any:
        try:
            return getattr(nvml, fn)(*args)
        except Exception as exc:
            notes.append(f"MIG device {k} {fn}: {_nvml_error_text(exc)}")
            return None

    name = _text(ask("nvmlDeviceGetName", mh))
    attrs = ask("nvmlDeviceGetAttributes", mh)
    gi = ask("nvmlDeviceGetGpuInstanceId", mh)
    inst = MigInstance(index=k, name=name, profile=profile_from_device_name(name),
                       uuid=_text(ask("nvmlDeviceGetUUID", mh)), gpu_instance_id=gi,
                       compute_instance_id=ask("nvmlDeviceGetComputeInstanceId", mh),
                       sm_count=int(attrs.multiprocessorCount) if attrs is not None else None,
                       memory_bytes=int(attrs.memorySizeMB) * 2**20 if attrs is not None else None,
                       placement=None)
    if gi is not None:  # placement needs the GPU-instance handle, which may need privileges
        try:
            info = nvml.nvmlGpuInstanceGetInfo(nvml.nvmlDeviceGetGpuInstanceById(parent, gi))
            inst.placement = (int(info.placement.start), int(info.placement.size))
        except Exception as exc:
            notes.append(f"MIG device {k} placement: {_nvml_error_text(exc)}")
    return inst


@dataclass(frozen=True)
class DriverComparison:
    """The book's profile against the driver's, for one profile ID of one GPU."""

    gpu: int  # NVML index
    id: int
    driver_name: str | None
    book_name: str | None  # None: a profile the book's table does not have
    book_sms: int | None
    driver_sms: int
    book_max: int | None
    driver_max: int
    book_placements: tuple[tuple[int, int], ...] | None
    driver_placements: tuple[tuple[int, int], ...] | None
    agree: bool  # every value the book has equals the driver's


def compare_with_driver(report: MigReport) -> list[DriverComparison]:
    """The book's table against the driver's, profile by profile, for every GPU with MIG enabled.

    Empty when no driver table could be read. Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    if not isinstance(report, MigReport):
        raise TypeError(f"report must be a MigReport (from nvml_mig_report()); got {report!r}")
    rows = []
    for g in report.gpus:
        if not g.driver_profiles or not g.spec_name:
            continue
        try:
            t = table(g.spec_name)
        except ValueError:
            continue
        by_id = {p.profile_id: p for p in t.profiles}
        for d in g.driver_profiles:
            p = by_id.get(d.id)
            book_pl = tuple((s, p.memory_slices) for s in p.starts) if p else None
            checks = []
            if p is not None:
                if p.sm_count is not None:
                    checks.append(p.sm_count == d.sm_count)
                checks.append(p.max_count == d.max_count)
                if d.placements is not None:
                    checks.append(sorted(book_pl or ()) == sorted(d.placements))
            rows.append(DriverComparison(
                gpu=g.index, id=d.id, driver_name=d.name, book_name=p.name if p else None,
                book_sms=p.sm_count if p else None, driver_sms=d.sm_count, book_max=p.max_count if p else None,
                driver_max=d.max_count, book_placements=book_pl, driver_placements=d.placements,
                agree=bool(p is not None and all(checks))))
    return rows


# ---------------------------------------------------------------------------------------------------------
# Measure the device this process runs on (a whole GPU, or the MIG instance it was given)
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstanceMeasurement:
    """A matmul and a copy on the device this process runs on, beside the model of its MIG profile."""

    device: str  # what ran: "NVIDIA A100-SXM4-40GB MIG 1g.5gb (sm80)" or "cpu (...)"
    backend: str  # "cuda" or "cpu"
    gpu: str | None  # catalogue name of the GPU (None: not in the catalogue, or the CPU)
    profile: str | None  # the MIG profile this process runs in (None: a whole device)
    precision: str  # "bf16" or "fp32"
    n: int  # matmul size n x n x n
    copy_bytes: int  # bytes of the copied buffer (a copy reads and writes them)
    matmul: Any  # ampere.timing.Measurement
    copy: Any  # ampere.timing.Measurement
    flops_per_s: float
    copy_bytes_per_s: float
    model: InstancePeaks | None  # None on the CPU, or without a catalogued GPU
    notes: tuple[str, ...] = ()

    @property
    def flops_ratio(self) -> float | None:
        return None if self.model is None else self.flops_per_s / self.model.flops

    @property
    def bandwidth_ratio(self) -> float | None:
        return None if self.model is None else self.copy_bytes_per_s / self.model.hbm_bytes_per_s


def measure_instance(device: Any = None, quick: bool = False, info: Any = None) -> InstanceMeasurement:
    """Matmul throughput and copy bandwidth of the current device, next to the model of its MIG profile.

    Inside a MIG instance (``probe().mig_instance``, e.g. "1g.5gb") the model is :func:`instance_peaks` of
    that profile: 14 SMs of compute and 1/8 of the HBM bandwidth for a 1g.5gb. On a whole GPU the model is
    the GPU's datasheet peak. On the CPU the two kernels run with tiny sizes (to exercise the code) and no
    model is compared. Chapter: *Multi-Instance GPU*, section "On a real GPU".
    """
    import torch

    from . import device as dev
    from . import timing

    quick = check.boolean("quick", quick)
    info = info or dev.probe()
    device = torch.device(device) if device is not None else dev.torch_device(info)
    cuda = device.type == "cuda"
    n = (2048 if quick else 4096) if cuda else 128
    dtype = torch.bfloat16 if (cuda and info.bf16_tensor) else torch.float32
    precision = "bf16" if dtype == torch.bfloat16 else "fp32"
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
    b = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
    c = torch.empty(n, n, device=device, dtype=dtype)
    mm = timing.benchmark(lambda: torch.matmul(a, b, out=c), label=f"matmul {n}^3 {precision}", device=device,
                          warmup_s=(0.3 if quick else 1.0) if cuda else None, params={"n": n, "dtype": precision})
    # 256 MiB even in quick mode: the copy's footprint (2 x 256 MiB) must dwarf the L2 (60 MiB on an H200).
    # Every timed copy is a cold one: the L2 is flushed before each call (calls_per_sample=1 says so
    # explicitly, whatever the harness's default for flushing).
    nbytes = 256 * 2**20 if cuda else 4 * 2**20
    src = torch.randn(nbytes // 4, generator=gen).to(device)
    dst = torch.empty_like(src)
    cp = timing.benchmark(lambda: dst.copy_(src), label=f"copy {nbytes / 2**20:.0f} MiB", device=device,
                          flush_l2=cuda, l2_bytes=info.l2_bytes if cuda else None,
                          calls_per_sample=1 if cuda else None, params={"bytes": nbytes})
    flops = mm.rate(2.0 * n**3)
    bw = cp.rate(2.0 * nbytes)  # a copy reads N and writes N bytes
    notes: list[str] = []
    model = None
    spec = info.spec if cuda else None
    if not cuda:
        notes.append("CPU: tiny sizes run the whole code path; a CPU is not a MIG instance, so no model is compared")
    elif spec is None:
        notes.append(f"{info.name} is not in the catalogue: no model to compare with")
    else:
        try:
            model = instance_peaks(spec, info.mig_instance, precision)
        except ValueError as exc:
            notes.append(str(exc))
        if model is not None and info.sm_count and model.sms != info.sm_count:
            notes.append(f"the device reports {info.sm_count} SMs, the table says {model.sms}")
    return InstanceMeasurement(device=info.label() if cuda else f"cpu ({info.name})", backend=device.type,
                               gpu=spec.name if spec else None, profile=info.mig_instance if cuda else None,
                               precision=precision, n=n, copy_bytes=nbytes, matmul=mm, copy=cp, flops_per_s=flops,
                               copy_bytes_per_s=bw, model=model, notes=tuple(notes))


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench mig``: record the NVML MIG report and measure this device (or instance).

    ``--device cpu`` runs the whole path on the CPU with tiny sizes (the result says ``backend: cpu``);
    without NVML the report is a note, never a traceback. Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from . import benchcli

    p = benchcli.bench_parser("mig", "Read MIG state through NVML and measure the GPU or MIG instance this "
                                     "process runs on (matmul and copy), next to the model of its profile.")
    args = p.parse_args(list(argv or []))
    info = benchcli.probe(args)
    report = nvml_mig_report(device_name=info.name if info.backend == "cuda" else None)
    meas = measure_instance(quick=args.quick, info=info)
    model = meas.model
    records = [
        {"params": {"kernel": "matmul", "profile": meas.profile, "precision": meas.precision, "n": meas.n},
         "measurement": meas.matmul.to_dict(),
         "derived": {"flops_per_s": meas.flops_per_s, "model_flops_per_s": model.flops if model else None,
                     "ratio": meas.flops_ratio}},
        {"params": {"kernel": "copy", "profile": meas.profile, "bytes": meas.copy_bytes},
         "measurement": meas.copy.to_dict(),
         "derived": {"copy_bytes_per_s": meas.copy_bytes_per_s,
                     "model_bytes_per_s": model.hbm_bytes_per_s if model else None, "ratio": meas.bandwidth_ratio}},
        {"params": {"what": "nvml_mig_report"}, "derived": report.to_dict()},
    ]
    agree = compare_with_driver(report)
    if agree:
        records.append({"params": {"what": "book_vs_driver_profiles"}, "derived": {"rows": [asdict(r) for r in agree]}})
    result = results.make_result("mig", info, {"quick": bool(args.quick), "profile": meas.profile,
                                               "device_option": args.device},
                                 records, notes=list(meas.notes) + report.notes)
    lines = [report.summary(), str(meas.matmul), str(meas.copy)]
    if model is not None:
        lines.append(f"matmul {meas.flops_per_s / 1e12:.1f} TFLOP/s = {meas.flops_ratio:.0%} of the model; "
                     f"copy {meas.copy_bytes_per_s / 1e9:.0f} GB/s = {meas.bandwidth_ratio:.0%} of the model")
    lines += [f"note: {n}" for n in meas.notes]
    lines.append(f"device backend: {meas.backend}")
    return benchcli.finish_bench(result, args, "\n".join(lines))


# ---------------------------------------------------------------------------------------------------------
# Economics: seven small models on one A100, or on seven cards
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServingOption:
    """One way to serve ``models`` small models, with its hourly cost range and per-model capacity."""

    label: str
    cards: str  # what is rented
    gpu: str  # catalogue name of the GPU rented
    mig_profile: str | None  # the instance each model gets (None: a whole card per model)
    usd_per_h: tuple[float, float]  # whole deployment, low..high
    per_model_usd_per_h: tuple[float, float]
    per_model_sms: int
    per_model_hbm_bytes_per_s: float
    per_model_memory_bytes: float
    service_ms: float  # one request alone on its share
    capacity_per_s: float  # requests/s per model at the utilisation cap
    feasible: bool  # capacity covers the demand
    usd_per_million: tuple[float, float]  # cost of a million requests at the given demand
    price_sources: tuple[str, ...]  # bib keys of the prices
    price_as_of: str


def serving_costs(demand_per_s: float = 100.0, models: int = 7, max_utilization: float = 0.7,
                  workload: Workload | None = None, config: SimConfig | None = None,
                  prices: Sequence[pricing.PriceQuote] | None = None) -> list[ServingOption]:
    """Serve ``models`` copies of ``workload`` at ``demand_per_s`` each: one A100 cut with MIG, or a card each.

    Options: a whole A100 80GB per model; one A100 80GB cut into ``models`` one-slice instances (1g.10gb);
    the same on hyperscaler 8-GPU instances, priced per GPU, one option per GPU model rented (an A100
    40GB instance is cut into 1g.5gb, an 80GB one into 1g.10gb: the one-slice profile of the GPU rented);
    and a small card per model (RTX A6000, RTX A2000). Capacity per model is ``max_utilization /
    service_time`` with the isolation model's service time on each model's share. Cost per million requests
    = hourly cost / (models x demand x 3600) x 1e6. Chapter: *Multi-Instance GPU*, section "What it costs".
    """
    demand_per_s = check.positive("demand_per_s", demand_per_s)
    models = check.positive_int("models", models, maximum=COMPUTE_SLICES)
    max_utilization = check.fraction("max_utilization", max_utilization, allow_zero=False)
    if workload is not None and not isinstance(workload, Workload):
        raise TypeError(f"workload must be a Workload or None; got {workload!r}")
    base = config if config is not None else SimConfig()
    if not isinstance(base, SimConfig):
        raise TypeError(f"config must be a SimConfig or None; got {config!r}")
    quotes = list(pricing.quotes() if prices is None else prices)
    if not all(isinstance(q, pricing.PriceQuote) for q in quotes):
        raise TypeError("prices must be a list of ampere.pricing.PriceQuote")
    w = workload or default_tenants("quiet", base)[0]

    def option(label: str, cards: str, gpu: str, count: int, per_gpu: tuple[float, float], sources: Sequence[str],
               as_of: str, mig: str | None) -> ServingOption:
        cfg = SimConfig(**{**asdict(base), "gpu": gpu, "mig_profile": None})
        spec = cfg.spec
        if mig:
            p = profile(spec, mig)
            sms, bw, mem = p.sm_count or 0, cfg.hbm_bytes_per_s * float(p.memory_fraction), \
                spec.memory_bytes * float(p.memory_fraction)
        else:
            sms, bw, mem = spec.sm_count, cfg.hbm_bytes_per_s, spec.memory_bytes
        t = service_time(w, sms, bw, cfg.pcie_bytes_per_s, cfg)
        cap = max_utilization / t
        cost = (per_gpu[0] * count, per_gpu[1] * count)
        per_million = (cost[0] / (models * demand_per_s * 3600) * 1e6, cost[1] / (models * demand_per_s * 3600) * 1e6)
        return ServingOption(label, cards, gpu, mig, cost, (cost[0] / models, cost[1] / models), int(sms), bw, mem,
                             t * 1e3, cap, cap >= demand_per_s, per_million, tuple(dict.fromkeys(sources)), as_of)

    single = {q.gpu: q for q in quotes if q.gpus == 1}
    rows = []
    a100 = single.get("A100-SXM4-80GB")
    if a100:
        one = smallest_profile(a100.gpu).name
        rows.append(option(f"{models} x A100 80GB, one model each", f"{models} GPUs", a100.gpu, models,
                           a100.per_gpu, [a100.source], a100.as_of, None))
        rows.append(option(f"1 x A100 80GB, {models} x {one} (MIG)", "1 GPU", a100.gpu, 1, a100.per_gpu,
                           [a100.source], a100.as_of, one))
    eights: dict[str, list[Any]] = {}
    for q in quotes:
        if q.gpus == 8 and specs.get(q.gpu).mig_max_instances:
            eights.setdefault(q.gpu, []).append(q)
    for gpu, qs in sorted(eights.items()):
        one = smallest_profile(gpu).name
        lo, hi = min(q.per_gpu[0] for q in qs), max(q.per_gpu[1] for q in qs)
        mem = round(specs.get(gpu).memory_bytes / 1e9)
        rows.append(option(f"1/8 of an 8 x A100 {mem}GB instance, {models} x {one} (MIG)", "1 GPU of 8", gpu, 1,
                           (lo, hi), [q.source for q in qs], qs[0].as_of, one))
    for gpu in ("RTX-A6000", "RTX-A2000-12GB"):
        q = single.get(gpu)
        if q:
            rows.append(option(f"{models} x {q.label.split(' (')[0]}, one model each", f"{models} GPUs", gpu, models,
                               q.per_gpu, [q.source], q.as_of, None))
    return rows


# ---------------------------------------------------------------------------------------------------------
# Views: the chapter's tables as Markdown, and the measurement beside recorded and published numbers
# ---------------------------------------------------------------------------------------------------------


def _show_md(text: str) -> None:
    from . import tables

    tables.show_md(text)


def _starts_text(p: Profile) -> str:
    return "{" + ",".join(map(str, p.starts)) + "}" + f":{p.memory_slices}"


def _source_line(keys: Iterable[str], what: str) -> str:
    labels = ", ".join(dict.fromkeys(views.cite_label(k) for k in keys if k))
    return f"*{what}: {labels}.*"


def profile_rows(gpu: str | specs.GPUSpec) -> list[dict[str, Any]]:
    """The profile table of ``gpu`` as rows for a Markdown table: slices, SMs, the nominal shares of
    capacity, bandwidth and L2, the maximum count, the placement rule and the media engines.

    Chapter: *Multi-Instance GPU*, "Slices".
    """
    spec = specs.get(gpu)
    rows = []
    for p in table(spec).profiles:
        f = float(p.memory_fraction)
        rows.append({"profile": f"`{p.name}`", "ID": p.profile_id, "g": p.compute_slices,
                     "memory slices": f"{p.memory_slices}/{MEMORY_SLICES}", "SMs": p.sm_count,
                     "GB": spec.memory_bytes * f / 1e9, "GB/s": spec.hbm_bytes_per_s * f / 1e9,
                     "L2 MiB": spec.l2_bytes * f / 2**20, "max": p.max_count, "placements": f"`{_starts_text(p)}`",
                     "media": p.media})  # NVDEC/JPEG/OFA
    return rows


def show_profiles(gpu: str | specs.GPUSpec) -> None:
    """Display the profile table of ``gpu`` (Markdown) with its sources. Chapter: *Multi-Instance GPU*."""
    from .tables import markdown_table

    spec = specs.get(gpu)
    t = table(spec)
    text = markdown_table(profile_rows(spec), formats={"GB": ".3g", "GB/s": ".0f",
                                                      "L2 MiB": ".1f"})
    keys = [t.profiles[0].source] + [p.sm_count_source for p in t.profiles if p.sm_count_source]
    _show_md(f"**{spec.name}**\n\n{text}\n\n" + _source_line(keys, "Profiles, placements and SM counts"))


def media_owners(gpu: str | specs.GPUSpec) -> dict[str, tuple[str, ...]]:
    """Which profiles of ``gpu`` get a JPEG decoder and which the optical-flow unit (the MIG guide's
    "Hardware Units" column): ``{"jpeg": (...), "ofa": (...)}``. Chapter: *Multi-Instance GPU*, "Slices"."""
    ps = profiles(gpu)
    return {"jpeg": tuple(p.name for p in ps if p.jpeg), "ofa": tuple(p.name for p in ps if p.ofa)}


def show_doc_conflicts() -> None:
    """Every row where NVIDIA's MIG guide prints a fraction its own placement rule contradicts (one line
    per profile table, not per product). Chapter: *Multi-Instance GPU*, "Where the documentation
    contradicts itself"."""
    from .tables import markdown_table

    rows = []
    for gpu in mig_gpus():
        if gpu != table(gpu).gpus[0]:
            continue
        for c in doc_conflicts(gpu):
            rows.append({"profile table": c.gpu, "profile": f"`{c.profile}`", "column": c.column,
                         "printed": c.printed, "placement": f"`{c.starts}`", "placement implies": c.implied_by_placement})
    _show_md(markdown_table(rows) + "\n\n" + _source_line(["nvidiamig"], "Printed fractions and placements"))


def show_validation(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]]) -> None:
    """A table of layouts and what :func:`validate` says about each (the normalised layout, or the error).

    Chapter: *Multi-Instance GPU*, "Layouts".
    """
    from .tables import markdown_table

    rows = []
    for lay in layouts_arg(layouts):
        lay = list(lay)
        try:
            ok = validate(gpu, lay)
            verdict = f"valid: `{format_layout(ok)}`"
        except ValueError as exc:
            verdict = str(exc)
        rows.append({"layout": f"`{format_layout(lay)}`", "validate says": verdict})
    _show_md(markdown_table(rows))


def show_layouts(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]], profiles: Sequence[str] | None = None,
                 title: str | None = None) -> None:
    """Every layout as a row (instance letters on the 8 memory and 7 compute slices, ``.`` = stranded),
    inside a collapsed dropdown. Chapter: *Multi-Instance GPU*, "Every way to cut an A100"."""
    from .tables import markdown_table

    rows = [{"#": r.n, "layout": f"`{r.layout}`", "instances": r.instances, "memory (8)": f"`{r.memory}`",
             "compute (7)": f"`{r.compute}`", "SMs": r.sms, "stranded memory / compute": f"{r.stranded_memory} / "
             f"{r.stranded_compute}"} for r in layout_rows(gpu, layouts, profiles)]
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a string or None; got {title!r}")
    title = title or f"The {len(rows)} maximal layouts of the {specs.get(gpu).name}"
    _show_md(f"````{{dropdown}} {title}\n{markdown_table(rows)}\n````")


def show_isolation(rows: Sequence[IsolationRow]) -> None:
    """The isolation study as a Markdown table. Chapter: *Multi-Instance GPU*, "Isolation, in a model"."""
    from .tables import markdown_table

    rows = list(rows)
    if not rows or not all(isinstance(r, IsolationRow) for r in rows):
        raise ValueError("rows must be a non-empty list of IsolationRow (from isolation_study)")
    table_rows = [{"sharing": r.mode, "7th tenant": r.scenario, "p50 ms": r.victim_p50_ms, "p99 ms": r.victim_p99_ms,
                   "p99 / quiet": r.p99_vs_quiet, "served/s": r.victim_throughput_per_s,
                   "bully/s": r.noisy_throughput_per_s} for r in rows]
    _show_md(markdown_table(table_rows, formats={"p50 ms": ".1f", "p99 ms": ".1f", "p99 / quiet": ".2f",
                                                 "served/s": ".0f", "bully/s": ".0f"}))


def _split_gpu(name: str) -> tuple[str, str | None]:
    """"A100-SXM4-80GB MIG 1g.10gb" -> ("A100-SXM4-80GB", "1g.10gb")."""
    base, _, prof = name.partition(" MIG ")
    return base, (prof or None)


def instance_points(info: Any = None, quick: bool = True) -> tuple[list[views.Point], list[views.Point]]:
    """The measurement section's evidence: (matmul points in TFLOP/s, copy points in GB/s).

    Measured here when ``info`` is a CUDA device; then every result of ``bench mig`` recorded in
    ``ampere/data``; then the published matmul throughputs of MIG instances. Each beside the model of its
    instance (:func:`instance_peaks`: the SM share of the dense peak, the memory-slice share of the
    bandwidth). Chapter: *Multi-Instance GPU*, "On a real GPU".
    """
    quick = check.boolean("quick", quick)
    matmul: list[views.Point] = []
    copy: list[views.Point] = []
    if info is not None and getattr(info, "backend", "cpu") == "cuda":
        m = measure_instance(info=info, quick=quick)
        where = m.profile or "whole GPU"
        gpu = m.gpu or str(getattr(info, "name", "this GPU"))
        matmul.append(views.Point(f"{where}: {m.precision} matmul {m.n}^3", gpu,
                                  m.model.flops / 1e12 if m.model else None, m.flops_per_s / 1e12, "TFLOP/s",
                                  kind="measured", source="measured here"))
        copy.append(views.Point(f"{where}: copy {m.copy_bytes / 2**20:.0f} MiB", gpu,
                                m.model.hbm_bytes_per_s / 1e9 if m.model else None, m.copy_bytes_per_s / 1e9,
                                "GB/s", kind="measured", source="measured here"))
    for rec in results.records(benchmark="mig", kind="measured"):
        base, prof = _split_gpu(rec.gpu)
        where = rec.params.get("profile") or prof or "whole GPU"
        if rec.params.get("kernel") == "matmul" and "flops_per_s" in rec.figures:
            model = rec.figures.get("model_flops_per_s")
            matmul.append(views.point(rec, "flops_per_s", f"{where}: {rec.params.get('precision', '')} matmul",
                                      None if model is None else model / 1e12, "TFLOP/s", scale=1e-12, gpu=base))
        elif rec.params.get("kernel") == "copy" and "copy_bytes_per_s" in rec.figures:
            model = rec.figures.get("model_bytes_per_s")
            copy.append(views.point(rec, "copy_bytes_per_s", f"{where}: copy", None if model is None else model / 1e9,
                                    "GB/s", scale=1e-9, gpu=base))
    for rec in results.records(benchmark="mig", kind="published"):
        base, prof = _split_gpu(rec.gpu)
        prec = rec.params["precision"]
        model = instance_peaks(base, prof, prec).flops / 1e12
        matmul.append(views.point(rec, f"{prec}_tflop_per_s", f"{prof or 'whole GPU'}: {prec} matmul, best n",
                                  model, "TFLOP/s", gpu=base))
    return matmul, copy


def show_instance(info: Any = None, quick: bool = True) -> None:
    """The measurement section in one call: a figure and a table of matmul throughput in MIG instances
    (and of copy bandwidth when one was measured or recorded), each number beside its instance's model,
    labelled with where it comes from. Measures when ``info`` is a CUDA GPU. Chapter: *Multi-Instance GPU*,
    "On a real GPU"."""
    matmul, copy = instance_points(info, quick=quick)
    views.show(matmul, title="Matmul in MIG instances: real vs the SM share of the dense peak",
               model_label="model (SM share)", real_label="real")
    if copy:
        views.show(copy, title="Copy bandwidth in MIG instances: real vs the memory-slice share",
                   model_label="model (slice share)", real_label="real", digits=0)


def show_nvml(info: Any = None, nvml: Any = None) -> None:
    """What the driver says about MIG on this machine, beside the book's table.

    With MIG enabled, the driver's own profile table is compared with the book's, profile by profile.
    Otherwise the table shows what ``nvidia-smi mig -lgipp`` and ``-lgip`` print on an A100 40GB according
    to NVIDIA's MIG User Guide, the reference a reader's own driver can be compared with; the NVML report
    of the machine that ran the page is in a collapsed note. Never raises for the machine's state.
    Chapter: *Multi-Instance GPU*, "On a real GPU".
    """
    import html

    from . import tables
    from .tables import markdown_table

    name = getattr(info, "name", None) if getattr(info, "backend", "cpu") == "cuda" else None
    report = nvml_mig_report(nvml=nvml, device_name=name)
    rows = compare_with_driver(report)
    if rows:
        def pl(v: Any) -> str:
            return "" if v is None else " ".join(f"{s}:{z}" for s, z in v)

        text = markdown_table([{"GPU": r.gpu, "ID": r.id, "profile": r.book_name or r.driver_name,
                                "SMs book / driver": f"{r.book_sms} / {r.driver_sms}",
                                "max book / driver": f"{r.book_max} / {r.driver_max}",
                                "driver placements": pl(r.driver_placements), "agree": r.agree} for r in rows])
        _show_md("**The book's profile table against this machine's driver**\n\n" + text)
    else:
        a100 = table("A100-SXM4-40GB")
        text = markdown_table([{"profile ID": p.profile_id, "profile": f"`{p.name}`",
                                "placements (-lgipp)": f"`{_starts_text(p)}`", "SMs (-lgip)": p.sm_count,
                                "instances available": p.max_count} for p in a100.profiles])
        _show_md("**What the driver reports on an A100 40GB** (`nvidia-smi mig -lgipp` and `-lgip`)\n\n" + text +
                 "\n\n" + _source_line(["nvidiamig"], "As printed in"))
    tables.show_html('<details class="ampere-device"><summary>What NVML reported on the machine behind this page'
                   f"</summary><pre>{html.escape(report.summary())}</pre></details>")


def _range(lo: float, hi: float, fmt: str = ".2f") -> str:
    return f"{lo:{fmt}}" if lo == hi else f"{lo:{fmt}}–{hi:{fmt}}"


def show_prices(quotes: Sequence[pricing.PriceQuote] | None = None) -> None:
    """The cloud prices the chapter uses, dated and sourced (author-year labels, no keys).

    Chapter: *Multi-Instance GPU*, "What it costs".
    """
    from .tables import markdown_table

    quotes = list(pricing.quotes() if quotes is None else quotes)
    gpus = {"A100-SXM4-80GB", "A100-SXM4-40GB", "RTX-A6000", "RTX-A2000-12GB"}
    rows = [{"what": q.label, "USD/h": _range(q.low_usd_per_h, q.high_usd_per_h),
             "USD/GPU-h": _range(*q.per_gpu), "as of": q.as_of, "source": views.cite_label(q.source),
             "note": q.note} for q in quotes if q.gpu in gpus]
    _show_md(markdown_table(rows))


def show_serving(options: Sequence[ServingOption]) -> None:
    """The serving options as a Markdown table. Chapter: *Multi-Instance GPU*, "What it costs"."""
    from .tables import markdown_table

    options = list(options)
    if not options or not all(isinstance(o, ServingOption) for o in options):
        raise ValueError("options must be a non-empty list of ServingOption (from serving_costs)")
    # headers that can wrap between words: the table must fit the page column (9 columns)
    rows = [{"option": o.label, "USD/h": _range(*o.usd_per_h), "USD per model-hour": _range(*o.per_model_usd_per_h),
             "SMs per model": o.per_model_sms, "GB/s per model": o.per_model_hbm_bytes_per_s / 1e9,
             "ms per request": o.service_ms, "requests/s per model": o.capacity_per_s,
             "USD per million requests": _range(*o.usd_per_million), "meets demand": o.feasible}
            for o in options]
    _show_md(markdown_table(rows, formats={"GB/s per model": ".0f", "ms per request": ".2f",
                                           "requests/s per model": ".0f"}))

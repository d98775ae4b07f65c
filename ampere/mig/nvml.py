"""MIG on the machine at hand, read through NVML: mode, instances, the driver's profile table. Never raises.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb), section "On a real GPU". Read-only
(no root needed, nothing is changed); every failure (no library, no driver, no permission, MIG disabled)
becomes a note. ``pynvml`` (nvidia-ml-py) is imported inside :func:`nvml_mig_report` only; no torch, no
matplotlib. :func:`compare_with_driver` checks the book's profile table against the driver's.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from .. import check, specs
from ..fields import check_fields
from .geometry import profile_from_device_name, table

__all__ = ["MigInstance", "DriverProfile", "MigGpu", "MigReport", "nvml_mig_report", "DriverComparison",
           "compare_with_driver"]


# ---------------------------------------------------------------------------------------------------------
# On a real GPU: MIG mode, instances and the driver's own profile table, through NVML, read-only
# ---------------------------------------------------------------------------------------------------------


@dataclass
class MigInstance:
    """One MIG device (a compute instance inside a GPU instance) as NVML reports it."""
    FIELD_RULES = {"bounds": {"index": (0, 4096), "gpu_instance_id": (0, 4096), "compute_instance_id": (0, 4096), "sm_count": (0, 1024)}}  # the checks of fields.check_fields


    index: int  # MIG device index under its parent GPU
    name: str | None
    profile: str | None  # profile parsed from the name, e.g. "1g.5gb"
    uuid: str | None
    gpu_instance_id: int | None
    compute_instance_id: int | None
    sm_count: int | None
    memory_bytes: int | None
    placement: tuple[int, int] | None  # (start, size) on the memory-slice axis, when readable

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass(frozen=True)
class DriverProfile:
    """One row of the driver's own GPU-instance profile table (NVML ``nvmlDeviceGetGpuInstanceProfileInfo``)."""
    FIELD_RULES = {"bounds": {"id": (0, 4096), "slices": (0, 64), "max_count": (0, 64), "sm_count": (0, 1024)}}  # the checks of fields.check_fields


    id: int
    name: str | None
    slices: int  # compute slices
    max_count: int
    sm_count: int
    memory_mib: int
    placements: tuple[tuple[int, int], ...] | None  # (start, size) pairs; None when unreadable

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass
class MigGpu:
    """One physical GPU: MIG mode, its instances, and (MIG enabled) the driver's profile table."""
    FIELD_RULES = {"bounds": {"index": (0, 4096)}}  # the checks of fields.check_fields


    index: int
    name: str | None
    spec_name: str | None
    mig_capable: bool
    current_mode: bool | None  # None: unknown
    pending_mode: bool | None
    instances: list[MigInstance] = field(default_factory=list)
    driver_profiles: list[DriverProfile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass
class MigReport:
    """What NVML says about MIG on this machine. Built by :func:`nvml_mig_report`, which never raises."""
    FIELD_RULES = {}  # the checks of fields.check_fields


    nvml: bool  # NVML could be initialised
    driver_version: str | None
    gpus: list[MigGpu]
    this_process: str | None  # profile of the MIG instance this process runs in, when it runs in one
    notes: list[str]

    def __post_init__(self) -> None:
        check_fields(self)

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
    if nvml is not None and not hasattr(nvml, "nvmlInit"):
        raise TypeError(f"nvml must be the pynvml module (or a double of it) or None; got {nvml!r:.60}")
    device_name = check.optional(check.string, "device_name", device_name, allow_empty=True)
    visible_devices = check.optional(check.string, "visible_devices", visible_devices, allow_empty=True)
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
    FIELD_RULES = {"bounds": {"gpu": (0, 4096), "id": (0, 4096), "book_sms": (0, 1024), "driver_sms": (0, 1024), "book_max": (0, 64), "driver_max": (0, 64)}}  # the checks of fields.check_fields


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

    def __post_init__(self) -> None:
        check_fields(self)


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

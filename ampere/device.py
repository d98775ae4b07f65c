"""What is this machine? ``probe()`` answers once, and every chapter gates its measurements on the answer.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), section "Which GPU am I on?"; every
chapter's first cell prints ``probe().summary()``.

Capabilities are decided from the compute capability, never from "a GPU is present": a free Colab T4
(sm75) is a GPU without TF32, BF16 tensor cores, 2:4 sparsity or MIG. ``AMPERE_DEVICE=cpu`` forces the
CPU path on a GPU machine (useful to check that a chapter's fallback works).

torch and nvidia-ml-py are imported lazily: the analytical parts of the package work without them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import platform
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

from . import check, specs

__all__ = ["DeviceInfo", "probe", "tf32_enabled", "tf32_state", "torch_device", "nvml", "nvml_handle",
           "pci_bus_id", "sparse_2to4_backends"]

ENV_FORCE = "AMPERE_DEVICE"
BACKENDS = ("cuda", "mps", "cpu")
SPARSE_BACKENDS = ("cutlass", "cusparselt")


@dataclass(frozen=True)
class DeviceInfo:
    """The result of :func:`probe`: the device, its capabilities and the software around it."""

    backend: str  # "cuda", "mps" or "cpu"
    name: str  # device name as the driver reports it (CPU model on the CPU path)
    compute_capability: tuple[int, int] | None = None
    memory_bytes: int | None = None  # total device memory the driver reports
    sm_count: int | None = None
    l2_bytes: int | None = None  # L2 size the device reports (trust it over datasheets)
    gpu_count: int = 0
    spec_name: str | None = None  # matched catalogue entry, see ampere.specs.match
    tf32: bool = False  # TF32 tensor cores (sm80+)
    bf16_tensor: bool = False  # BF16 tensor cores (sm80+)
    fp8_tensor: bool = False  # FP8 tensor cores (sm89+)
    int8_tensor: bool = False  # INT8 tensor cores usable from torch._int_mm (sm80+ in current torch)
    sparse_2to4: bool = False  # bool(sparse_2to4_backends): some 2:4 backend of this torch runs on this GPU
    sparse_2to4_backends: tuple[str, ...] = ()  # "cutlass" (sm8x only) and/or "cusparselt" (sm8x, sm90)
    mig_capable: bool = False  # the GPU supports MIG (A100, A30, H100, H200)
    mig_enabled: bool | None = None  # None: unknown (no NVML, no permission)
    mig_instance: str | None = None  # profile name when this process runs inside a MIG instance
    sm_clock_max_hz: float | None = None  # NVML max SM clock
    power_limit_w: float | None = None  # NVML enforced power limit
    ecc_enabled: bool | None = None  # NVML current ECC mode (None: unknown or not supported)
    pcie_link: str | None = None  # current PCIe link, e.g. "Gen4 x16" (NVML)
    torch_version: str | None = None
    cuda_version: str | None = None
    cudnn_version: int | None = None
    nccl_version: str | None = None
    driver_version: str | None = None
    python_version: str = field(default_factory=lambda: platform.python_version())
    cpu_name: str = ""
    cpu_count: int = 0
    torch_threads: int | None = None
    forced_cpu: bool = False
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        check.one_of("backend", self.backend, BACKENDS)
        check.string("name", self.name)
        if self.compute_capability is not None:
            cc = check.sequence("compute_capability", self.compute_capability, check.nonneg_int, min_len=2,
                                max_len=2)
            put("compute_capability", (cc[0], cc[1]))
        for name, limit in (("memory_bytes", 2 ** 44), ("sm_count", 10_000), ("l2_bytes", 2 ** 32),
                            ("torch_threads", 100_000)):
            check.optional(check.bounded_int, name, getattr(self, name), 1, limit, why="larger than any device")
        for name, limit in (("gpu_count", 1024), ("cpu_count", 100_000)):
            check.bounded_int(name, getattr(self, name), 0, limit, why="larger than any machine")
        check.optional(check.bounded_int, "cudnn_version", self.cudnn_version, 0, 10 ** 7,
                       why="cuDNN versions are numbers like 90100")
        if self.spec_name is not None:
            put("spec_name", check.gpu("spec_name", self.spec_name))
        for name in ("tf32", "bf16_tensor", "fp8_tensor", "int8_tensor", "sparse_2to4", "mig_capable", "forced_cpu"):
            put(name, check.boolean(name, getattr(self, name)))
        for name in ("mig_enabled", "ecc_enabled"):
            check.optional(check.boolean, name, getattr(self, name))
        put("sparse_2to4_backends", tuple(check.names("sparse_2to4_backends", self.sparse_2to4_backends,
                                                      SPARSE_BACKENDS, min_len=0)))
        for name, limit in (("sm_clock_max_hz", 1e10), ("power_limit_w", 1e5)):
            check.optional(check.positive, name, getattr(self, name), maximum=limit)
        for name in ("mig_instance", "pcie_link", "torch_version", "cuda_version", "nccl_version", "driver_version"):
            check.optional(check.string, name, getattr(self, name))
        check.string("python_version", self.python_version)
        check.string("cpu_name", self.cpu_name, allow_empty=True)
        put("notes", tuple(check.sequence("notes", self.notes, check.string, min_len=0)))

    @property
    def spec(self) -> specs.GPUSpec | None:
        return specs.get(self.spec_name) if self.spec_name else None

    @property
    def is_gpu(self) -> bool:
        return self.backend == "cuda"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["compute_capability"] = list(self.compute_capability) if self.compute_capability else None
        d["notes"] = list(self.notes)
        d["sparse_2to4_backends"] = list(self.sparse_2to4_backends)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "DeviceInfo":
        d = check.mapping("d", d)
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in d.items() if k in known}
        if kwargs.get("compute_capability") is not None:
            kwargs["compute_capability"] = tuple(kwargs["compute_capability"])
        kwargs["notes"] = tuple(kwargs.get("notes") or ())
        kwargs["sparse_2to4_backends"] = tuple(kwargs.get("sparse_2to4_backends") or ())
        return cls(**kwargs)

    def label(self) -> str:
        """Short provenance label: "NVIDIA H200 (sm90)" or "CPU: <model>"."""
        if self.backend == "cuda" and self.compute_capability:
            return f"{self.name} (sm{self.compute_capability[0]}{self.compute_capability[1]})"
        if self.backend == "mps":
            return f"Apple GPU ({self.name})"
        return f"CPU: {self.name}"

    def summary(self) -> str:
        """A human-readable report, printed by every chapter's first cell and ``python -m ampere info``."""
        yes = {True: "yes", False: "no", None: "unknown"}
        lines = [f"backend        {self.backend}" + (" (forced by AMPERE_DEVICE=cpu)" if self.forced_cpu else ""),
                 f"device         {self.label()}"]
        if self.backend == "cuda":
            mem = f"{self.memory_bytes / 2**30:.1f} GiB" if self.memory_bytes else "?"
            l2 = f"{self.l2_bytes / 2**20:.0f} MiB" if self.l2_bytes else "?"
            lines += [f"GPUs           {self.gpu_count}",
                      f"memory         {mem}, {self.sm_count} SMs, L2 {l2}",
                      f"catalogue spec {self.spec_name or 'none (the model path uses A100-SXM4-80GB)'}",
                      f"TF32 / BF16 TC {yes[self.tf32]} / {yes[self.bf16_tensor]}",
                      f"2:4 sparse TC  {yes[self.sparse_2to4]}"
                      + (f" ({', '.join(self.sparse_2to4_backends)})" if self.sparse_2to4_backends else ""),
                      f"MIG            capable: {yes[self.mig_capable]}, enabled: {yes[self.mig_enabled]}"
                      + (f", inside instance {self.mig_instance}" if self.mig_instance else "")]
            if self.sm_clock_max_hz:
                lines.append(f"max SM clock   {self.sm_clock_max_hz / 1e6:.0f} MHz"
                             + (f", power limit {self.power_limit_w:.0f} W" if self.power_limit_w else ""))
            if self.ecc_enabled is not None or self.pcie_link:
                lines.append(f"ECC / PCIe     {yes[self.ecc_enabled]} / {self.pcie_link or 'unknown'}")
        lines += [f"torch          {self.torch_version or 'not installed'}"
                  + (f", CUDA {self.cuda_version}" if self.cuda_version else "")
                  + (f", driver {self.driver_version}" if self.driver_version else ""),
                  f"python         {self.python_version}, {self.cpu_count} CPU cores"
                  + (f", {self.torch_threads} torch threads" if self.torch_threads else "")]
        lines += [f"note           {n}" for n in self.notes]
        return "\n".join(lines)


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


# -------------------------------------------------------------------------------------------------------
# NVML: initialised once per process (shut down at exit), and a CUDA device's handle found by PCI bus id.
# torch numbers GPUs as CUDA_VISIBLE_DEVICES lists them, NVML as the driver sees them: on a shared node
# "cuda:0" may be NVML's GPU 3, so matching by index would report another GPU's clocks, power and MIG mode.
# The probe and the timing harness both go through these two functions.
# -------------------------------------------------------------------------------------------------------

_NVML: dict[str, Any] = {"module": None, "pid": None, "error": None, "atexit": False}


def _nvml_shutdown() -> None:
    module, pid = _NVML["module"], _NVML["pid"]
    _NVML.update(module=None, pid=None, error=None)
    if module is not None and pid == os.getpid():
        with contextlib.suppress(Exception):
            module.nvmlShutdown()


def nvml() -> tuple[Any | None, str | None]:
    """``(pynvml, None)`` with NVML initialised, or ``(None, reason)`` when it cannot be.

    ``nvmlInit`` runs once per process (the module caches it; a forked or spawned child initialises its
    own) and ``nvmlShutdown`` runs at interpreter exit. A failure is cached too, so a machine without
    NVML pays for the attempt once. Chapter: *Architecture of the GA100*, "Which GPU am I on?".
    """
    try:
        import pynvml  # provided by the nvidia-ml-py distribution
    except ImportError:
        return None, "nvidia-ml-py is not installed"
    if _NVML["pid"] == os.getpid() and _NVML["module"] is sys.modules.get("pynvml", pynvml):
        return (None, _NVML["error"]) if _NVML["error"] else (_NVML["module"], None)
    if _NVML["module"] is not None and _NVML["pid"] == os.getpid():
        _nvml_shutdown()  # another pynvml module object was installed (tests): start again with it
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError subclasses, library not found
        _NVML.update(module=pynvml, pid=os.getpid(), error=f"NVML unavailable ({exc.__class__.__name__}: {exc})")
        return None, _NVML["error"]
    _NVML.update(module=pynvml, pid=os.getpid(), error=None)
    if not _NVML["atexit"]:
        _NVML["atexit"] = True
        atexit.register(_nvml_shutdown)
    return pynvml, None


def pci_bus_id(props: Any) -> str | None:
    """The NVML form ``"DDDDDDDD:BB:DD.0"`` of a CUDA device's PCI address, or None if torch does not expose it
    (``pci_domain_id``/``pci_bus_id``/``pci_device_id`` properties)."""
    if not all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        return None
    return f"{int(props.pci_domain_id):08X}:{int(props.pci_bus_id):02X}:{int(props.pci_device_id):02X}.0"


def nvml_handle(index: int) -> tuple[Any, str]:
    """NVML handle of torch CUDA device ``index`` and how it was matched (``"pci bus id"`` or ``"index"``).

    The match is by PCI bus id; only when torch does not report the PCI address (or NVML refuses it) does
    it fall back to the raw index, which is right only when ``CUDA_VISIBLE_DEVICES`` does not renumber the
    GPUs. Raises ``RuntimeError`` when NVML is not usable. Shared by :func:`probe` and
    :func:`ampere.timing.benchmark`.
    """
    index = check.bounded_int("index", index, 0, 1023, why="CUDA device numbers")
    import torch

    module, error = nvml()
    if module is None:
        raise RuntimeError(error or "NVML unavailable")
    bus = pci_bus_id(torch.cuda.get_device_properties(index))
    if bus is not None:
        try:
            return module.nvmlDeviceGetHandleByPciBusId(bus.encode()), "pci bus id"
        except Exception:
            pass
    return module.nvmlDeviceGetHandleByIndex(index), "index"


def _nvml_info(index: int) -> dict[str, Any]:
    """Driver version, MIG mode, clocks and power via NVML; every failure becomes a note, never an error."""
    out: dict[str, Any] = {"notes": []}
    pynvml, error = nvml()
    if pynvml is None:
        out["notes"].append(f"{error}: MIG state, clocks and driver version unknown")
        return out
    try:
        handle, matched = nvml_handle(index)
        out["nvml_match"] = matched
        if matched == "index" and os.environ.get("CUDA_VISIBLE_DEVICES"):
            out["notes"].append("NVML handle matched by index (no PCI bus id from torch): under "
                                "CUDA_VISIBLE_DEVICES the clocks and MIG mode may be another GPU's")

        def ask(key: str, fn, *args):
            try:
                out[key] = fn(*args)
            except Exception as exc:  # NotSupported, NoPermission, ...
                out["notes"].append(f"NVML {fn.__name__}: {exc}")

        ask("driver_version", pynvml.nvmlSystemGetDriverVersion)
        ask("mig_mode", pynvml.nvmlDeviceGetMigMode, handle)
        ask("sm_clock_max_mhz", pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_SM)
        ask("power_limit_mw", pynvml.nvmlDeviceGetEnforcedPowerLimit, handle)
        ask("ecc_mode", pynvml.nvmlDeviceGetEccMode, handle)
        ask("pcie_gen", pynvml.nvmlDeviceGetCurrPcieLinkGeneration, handle)
        ask("pcie_width", pynvml.nvmlDeviceGetCurrPcieLinkWidth, handle)
    except Exception as exc:
        out["notes"].append(f"NVML query failed: {exc}")
    if isinstance(out.get("driver_version"), bytes):
        out["driver_version"] = out["driver_version"].decode()
    return out


def sparse_2to4_backends(torch: Any, compute_capability: tuple[int, int] | None) -> tuple[str, ...]:
    """Which of PyTorch's 2:4 semi-structured backends can run on a GPU of this compute capability.

    ``"cutlass"``: PyTorch's CUTLASS kernels, built for sm8x only (A100, A30, A10, L4 ...); ``"cusparselt"``:
    NVIDIA's cuSPARSELt, on sm8x and sm90 (H100, H200) when this torch was built with it
    (``torch.backends.cusparselt.is_available()``, which does not check the architecture itself). A torch
    without ``torch.sparse.to_sparse_semi_structured`` has neither. Chapter: *Structured sparsity*.
    """
    if compute_capability is not None:
        compute_capability = tuple(check.sequence("compute_capability", compute_capability, check.nonneg_int,
                                                  min_len=2, max_len=2))
    if compute_capability is None or not hasattr(getattr(torch, "sparse", None), "to_sparse_semi_structured"):
        return ()
    major = int(compute_capability[0])
    csl = getattr(getattr(torch, "backends", None), "cusparselt", None)
    try:
        has_csl = bool(csl is not None and csl.is_available())
    except Exception:
        has_csl = False
    out = []
    if major == 8:
        out.append("cutlass")
    if has_csl and (major == 8 or tuple(compute_capability) == (9, 0)):
        out.append("cusparselt")
    return tuple(out)


def probe(index: int = 0, force: str | None = None) -> DeviceInfo:
    """Probe the machine: backend, device ``index``, matched spec, capability flags and versions.

    Never raises for missing hardware or libraries: what could not be read is None and explained in
    ``notes``. ``AMPERE_DEVICE=cpu`` or ``force="cpu"`` (``bench --device cpu``) forces the CPU path.
    """
    index = check.bounded_int("index", index, 0, 1023, why="CUDA device numbers")
    force = check.optional(check.one_of, "force", force, ("cpu",))
    forced = force == "cpu" or os.environ.get(ENV_FORCE, "").strip().lower() == "cpu"
    base: dict[str, Any] = {"cpu_name": _cpu_name(), "cpu_count": os.cpu_count() or 0, "forced_cpu": forced}
    notes: list[str] = []
    try:
        import torch
    except ImportError:
        return DeviceInfo(backend="cpu", name=base["cpu_name"], notes=("torch is not installed: model path only",),
                          **base)
    base["torch_version"] = torch.__version__
    base["torch_threads"] = torch.get_num_threads()
    if not forced and torch.cuda.is_available():
        return _probe_cuda(torch, index, base, notes)
    mps = getattr(torch.backends, "mps", None)
    if not forced and mps is not None and mps.is_available():
        notes.append("Apple GPU: no NVIDIA tensor-core features; chapters use the model path and CPU labs")
        return DeviceInfo(backend="mps", name=platform.machine(), notes=tuple(notes), **base)
    if forced:
        notes.append("AMPERE_DEVICE=cpu: GPU measurements are skipped, the model and recorded results are shown")
    else:
        notes.append("no CUDA GPU: the chapters show the models and the results recorded on real GPUs")
    return DeviceInfo(backend="cpu", name=base["cpu_name"], notes=tuple(notes), **base)


def _probe_cuda(torch: Any, index: int, base: dict[str, Any], notes: list[str]) -> DeviceInfo:
    count = torch.cuda.device_count()
    if not 0 <= index < count:
        raise ValueError(f"index={index!r} is out of range; this machine has {count} CUDA device(s)")
    props = torch.cuda.get_device_properties(index)
    cc = (int(props.major), int(props.minor))
    name = str(props.name)
    spec = specs.match(name)
    if spec is None:
        notes.append(f"{name} is not in the catalogue: measured figures are shown without a datasheet peak")
    sm80 = cc >= (8, 0)
    sparse_backends = sparse_2to4_backends(torch, cc)
    nv = _nvml_info(index)
    notes.extend(nv.pop("notes"))
    mig_mode = nv.get("mig_mode")
    mig_enabled = bool(mig_mode[0]) if isinstance(mig_mode, (tuple, list)) else None
    mig_instance = name.split(" MIG ", 1)[1].strip() if " MIG " in name else None
    # Outside the catalogue, MIG is known for the A30 and the A100/H100/H200 families.
    mig_capable = spec.mig_max_instances > 0 if spec else any(k in name for k in ("A100", "A30", "H100", "H200"))
    if mig_instance:
        mig_enabled = True
    power_mw = nv.get("power_limit_mw")
    ecc_mode = nv.get("ecc_mode")
    pcie = f"Gen{nv['pcie_gen']} x{nv['pcie_width']}" if nv.get("pcie_gen") and nv.get("pcie_width") else None
    nccl = None
    with contextlib.suppress(Exception):
        v = torch.cuda.nccl.version()
        nccl = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
    return DeviceInfo(
        backend="cuda", name=name, compute_capability=cc, memory_bytes=int(props.total_memory),
        sm_count=int(props.multi_processor_count), l2_bytes=int(getattr(props, "L2_cache_size", 0)) or None,
        gpu_count=count, spec_name=spec.name if spec else None, tf32=sm80, bf16_tensor=sm80,
        fp8_tensor=cc >= (8, 9), int8_tensor=sm80, sparse_2to4=bool(sparse_backends),
        sparse_2to4_backends=sparse_backends, mig_capable=bool(mig_capable),
        mig_enabled=mig_enabled, mig_instance=mig_instance,
        sm_clock_max_hz=nv["sm_clock_max_mhz"] * 1e6 if nv.get("sm_clock_max_mhz") else None,
        power_limit_w=power_mw / 1000 if power_mw else None,
        ecc_enabled=bool(ecc_mode[0]) if isinstance(ecc_mode, (tuple, list)) else None, pcie_link=pcie,
        cuda_version=torch.version.cuda, cudnn_version=torch.backends.cudnn.version(), nccl_version=nccl,
        driver_version=nv.get("driver_version"), notes=tuple(notes), **base,
    )


def torch_device(info: DeviceInfo | None = None):
    """The torch.device the chapters compute on: cuda when probed, else cpu (mps is not used for labs)."""
    if info is not None and not isinstance(info, DeviceInfo):
        raise TypeError(f"info must be a DeviceInfo (from probe()) or None, got {info!r} ({type(info).__name__})")
    import torch

    info = info or probe()
    return torch.device("cuda" if info.backend == "cuda" else "cpu")


# -------------------------------------------------------------------------------------------------------
# TF32 switches. PyTorch has two APIs and refuses to mix them (reading the legacy flag after the new one
# was set raises RuntimeError), so one helper decides which one this torch speaks and uses only that.
# -------------------------------------------------------------------------------------------------------


def _new_tf32_api(torch: Any) -> bool:
    return hasattr(torch.backends.cuda.matmul, "fp32_precision") and hasattr(
        getattr(torch.backends.cudnn, "conv", None), "fp32_precision")


def tf32_state() -> dict[str, Any]:
    """Current TF32 settings for cuBLAS matmuls and cuDNN convolutions, read through the API in use."""
    import torch

    if _new_tf32_api(torch):
        return {"api": "fp32_precision", "matmul": torch.backends.cuda.matmul.fp32_precision,
                "conv": torch.backends.cudnn.conv.fp32_precision}
    return {"api": "allow_tf32", "matmul": torch.backends.cuda.matmul.allow_tf32,
            "conv": torch.backends.cudnn.allow_tf32}


def tf32_enabled(enabled: bool, *, conv: bool | None = None) -> contextlib.AbstractContextManager[dict[str, Any]]:
    """Set TF32 for matmuls (and convolutions: ``conv`` defaults to ``enabled``), restore on exit.

    Uses ``torch.backends.cuda.matmul.fp32_precision`` ("tf32"/"ieee") where this torch has it,
    else the legacy ``allow_tf32`` flags. Yields the state that was set. The arguments are checked when
    it is called, before the ``with`` block. Chapter: *TF32 and the precision formats*.
    """
    enabled = check.boolean("enabled", enabled)
    conv = enabled if conv is None else check.boolean("conv", conv)
    return _tf32(enabled, conv)


@contextlib.contextmanager
def _tf32(enabled: bool, conv: bool) -> Iterator[dict[str, Any]]:
    import torch

    before = tf32_state()
    try:
        if before["api"] == "fp32_precision":
            torch.backends.cuda.matmul.fp32_precision = "tf32" if enabled else "ieee"
            torch.backends.cudnn.conv.fp32_precision = "tf32" if conv else "ieee"
        else:
            torch.backends.cuda.matmul.allow_tf32 = enabled
            torch.backends.cudnn.allow_tf32 = conv
        yield tf32_state()
    finally:
        if before["api"] == "fp32_precision":
            torch.backends.cuda.matmul.fp32_precision = before["matmul"]
            torch.backends.cudnn.conv.fp32_precision = before["conv"]
        else:
            torch.backends.cuda.matmul.allow_tf32 = before["matmul"]
            torch.backends.cudnn.allow_tf32 = before["conv"]

"""A CUDA test double: a fake ``torch.cuda`` and a fake NVML (``pynvml``), so that the CUDA branches of the
harness (``ampere.timing``), the probe (``ampere.device``) and the capability gating run on a CPU-only CI.

Use the ``fake_cuda`` fixture (import it into a test module: ``from .fakecuda import fake_cuda``)::

    def test_something(fake_cuda):
        fake = fake_cuda("A100-SXM4-80GB", "H200")       # two GPUs, torch indices 0 and 1
        fake.script_ms([2.0, 1.0, 3.0])                     # what successive elapsed_time() calls return
        fake.nvml.script_clocks(0, [1410, 1000])            # what successive SM clock reads return
        ...

Everything is installed with ``monkeypatch`` (attributes of ``torch.cuda``, ``sys.modules["pynvml"]``, the
NVML cache of ``ampere.device``, the tensor factories) and undone after the test: nothing leaks.

What the double models, and checks the way the real one would fail:

* GPUs from the catalogue (``ampere.specs``): name as the driver prints it, compute capability, SM count,
  memory (``total_memory`` reports what CUDA exposes, ``spec.cuda_visible_bytes``, like a real GPU: not
  the physical capacity), L2 size, max SM clock, power limit,
  PCIe generation; one distinct PCI bus id per physical GPU. ``visible=[2, 0]`` renumbers the GPUs the way
  ``CUDA_VISIBLE_DEVICES=2,0`` does: torch's ``cuda:0`` is then NVML's GPU 2.
* ``torch.cuda.device(d)`` changes the current device for its block; ``current_stream(d)`` is the current
  stream of device ``d`` (its default stream, or the side stream ``torch.cuda.stream(s)`` made current);
  an event recorded without a stream lands on the *current device's* current stream.
* ``Event.elapsed_time`` (milliseconds, as in CUDA) returns the scripted values in order (cycling), and
  raises like CUDA when the two events are on different devices, were not recorded, or the end event
  was not synchronised yet (no ``synchronize()`` of its device, stream or event after it was recorded).
* Tensor factories (``torch.empty/zeros/ones/full/randn``) asked for a CUDA device, and ``Tensor.to``/
  ``Tensor.cuda`` to one, return *meta* tensors (shape and dtype, no memory, no arithmetic: a matmul of
  8192^3 costs nothing) and count the bytes per device while they live (``allocated``, ``peak``);
  ``mem_get_info`` reports them, and an allocation past ``total_memory`` raises
  ``torch.cuda.OutOfMemoryError`` like CUDA. Values cannot be read back (``.item()``, ``.cpu()``): code
  that checks numerics on the device needs a real GPU.
* NVML: ``nvmlInit``/``nvmlShutdown`` counted, handles by PCI bus id or by (physical) index, clocks, power
  limit, MIG mode, ECC, PCIe link; any query can be made to raise ``NVMLError`` (``fail``).

Not modelled: more than one process (an NCCL ``launch.spawn`` needs real GPUs), kernels' values, and
timing on the host clock (``perf_counter`` runs for real; only event times are scripted).

The A30 is not in the catalogue: only its driver name ("NVIDIA A30") and compute capability (8, 0) drive
the code under test (no spec, MIG known by family); its sizes are borrowed from the A100-PCIE-40GB entry
and no test asserts them.
"""

from __future__ import annotations

import itertools
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Iterable

import pytest

from ampere import specs

#: fake model name -> (driver name, catalogue spec the sizes come from, compute capability override)
MODELS: dict[str, tuple[str, str, tuple[int, int] | None]] = {
    "A100-SXM4-40GB": ("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB", None),
    "A100-SXM4-80GB": ("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB", None),
    "H100": ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB", None),
    "H200": ("NVIDIA H200", "H200-SXM-141GB", None),
    "A30": ("NVIDIA A30", "A100-PCIE-40GB", (8, 0)),
    "T4": ("Tesla T4", "T4", None),
    "L4": ("NVIDIA L4", "L4", None),
}
ALIASES = {"A100-40": "A100-SXM4-40GB", "A100-80": "A100-SXM4-80GB", "A100": "A100-SXM4-80GB",
           "H100-SXM5-80GB": "H100", "H200-SXM-141GB": "H200"}


class NVMLError(Exception):
    """The fake's stand-in for ``pynvml.NVMLError``."""


@dataclass
class FakeGPU:
    """One physical GPU of the fake machine."""

    model: str
    physical_index: int
    spec: specs.GPUSpec
    props: types.SimpleNamespace
    mig_mode: int = 0
    ecc: int = 1
    pcie_width: int = 16

    @property
    def bus_id(self) -> str:
        p = self.props
        return f"{p.pci_domain_id:08X}:{p.pci_bus_id:02X}:{p.pci_device_id:02X}.0"


def make_gpu(model: str, physical_index: int = 0) -> FakeGPU:
    """A :class:`FakeGPU` of ``model`` (a key of :data:`MODELS` or an alias), numbers from ``ampere.specs``."""
    model = ALIASES.get(model, model)
    if model not in MODELS:
        raise ValueError(f"model={model!r} is not faked; known: {', '.join(MODELS)}")
    driver_name, spec_name, cc = MODELS[model]
    spec = specs.get(spec_name)
    major, minor = cc or spec.compute_capability
    props = types.SimpleNamespace(
        name=driver_name, major=major, minor=minor, total_memory=int(spec.cuda_visible_bytes),
        multi_processor_count=spec.sm_count, L2_cache_size=int(spec.l2_bytes),
        pci_domain_id=0, pci_bus_id=0x17 + 0x20 * physical_index, pci_device_id=0,
        uuid=f"fake-{physical_index:04d}")
    return FakeGPU(model, physical_index, spec, props)


class FakeStream:
    def __init__(self, cuda: "FakeCuda", device: int, sid: int = 0) -> None:
        self.cuda, self.device_index, self.id = cuda, device, sid

    @property
    def device(self) -> Any:
        import torch

        return torch.device("cuda", self.device_index)

    def synchronize(self) -> None:
        self.cuda._synced(self.device_index)

    def wait_stream(self, other: "FakeStream") -> None:
        self.cuda.timeline.append(("wait_stream", self.device_index, other.device_index))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FakeStream) and (self.device_index, self.id) == (other.device_index, other.id)

    def __hash__(self) -> int:
        return hash((self.device_index, self.id))

    def __repr__(self) -> str:
        return f"FakeStream(cuda:{self.device_index}, id={self.id})"


class FakeEvent:
    def __init__(self, cuda: "FakeCuda", enable_timing: bool = False, **_: Any) -> None:
        self.cuda, self.enable_timing = cuda, enable_timing
        self.stream: FakeStream | None = None
        self.seq: int | None = None

    def record(self, stream: FakeStream | None = None) -> None:
        stream = stream if stream is not None else self.cuda.current_stream()
        self.stream = stream
        self.seq = next(self.cuda._seq)
        self.cuda.timeline.append(("record", stream.device_index, stream.id))

    def synchronize(self) -> None:
        if self.stream is not None:
            self.cuda._synced(self.stream.device_index)

    def query(self) -> bool:
        return self.stream is not None and self.cuda._done(self)

    def elapsed_time(self, end: "FakeEvent") -> float:
        if not (self.enable_timing and end.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.stream is None or end.stream is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if self.stream.device_index != end.stream.device_index:
            raise RuntimeError("Both events must be recorded on the same device.")
        if not self.cuda._done(end):
            raise RuntimeError("CUDA error: device not ready (the end event was not synchronised)")
        return self.cuda._next_ms()


class FakeDeviceGuard:
    """``torch.cuda.device(d)``: makes ``d`` the current device inside the block."""

    def __init__(self, cuda: "FakeCuda", device: Any) -> None:
        self.cuda, self.index, self.prev = cuda, cuda._index(device), None

    def __enter__(self) -> "FakeDeviceGuard":
        self.prev = self.cuda.current
        self.cuda.current = self.index
        self.cuda.timeline.append(("device", self.index))
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cuda.current = self.prev
        self.cuda.timeline.append(("device", self.prev))


class FakeNVML(types.ModuleType):
    """The subset of ``pynvml`` the package calls. Indices are physical (the driver's order)."""

    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2

    def __init__(self, gpus: list[FakeGPU]) -> None:
        super().__init__("pynvml")
        self.NVMLError = NVMLError
        self.gpus = gpus
        self.init_calls = 0
        self.shutdown_calls = 0
        self.handle_lookups: list[tuple[str, Any]] = []
        self.failing: set[str] = set()
        self.init_error: str | None = None
        self._clocks: dict[int, itertools.cycle] = {}

    # control -----------------------------------------------------------------------------------------
    def fail(self, *names: str) -> None:
        """Make the named NVML functions raise ``NVMLError`` (e.g. "nvmlDeviceGetCurrPcieLinkWidth")."""
        self.failing.update(names)

    def script_clocks(self, physical_index: int, mhz: Iterable[float]) -> None:
        """Successive ``nvmlDeviceGetClockInfo(SM)`` readings of a physical GPU (cycling)."""
        self._clocks[physical_index] = itertools.cycle(list(mhz))

    def _check(self, name: str) -> None:
        if name in self.failing:
            raise NVMLError(f"{name}: Not Supported")
        if self.init_calls <= self.shutdown_calls and name != "nvmlInit":
            raise NVMLError("Uninitialized")

    def _gpu(self, handle: Any) -> FakeGPU:
        if not isinstance(handle, FakeGPU):
            raise NVMLError(f"Invalid Argument: {handle!r} is not a handle")
        return handle

    # the API -----------------------------------------------------------------------------------------
    def nvmlInit(self) -> None:
        if self.init_error:
            raise NVMLError(self.init_error)
        self.init_calls += 1

    def nvmlShutdown(self) -> None:
        self.shutdown_calls += 1

    def nvmlSystemGetDriverVersion(self) -> str:
        self._check("nvmlSystemGetDriverVersion")
        return "999.99-fake"

    def nvmlDeviceGetCount(self) -> int:
        self._check("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGPU:
        self._check("nvmlDeviceGetHandleByIndex")
        self.handle_lookups.append(("index", index))
        if not 0 <= index < len(self.gpus):
            raise NVMLError("Invalid Argument")
        return self.gpus[index]

    def nvmlDeviceGetHandleByPciBusId(self, bus_id: bytes | str) -> FakeGPU:
        self._check("nvmlDeviceGetHandleByPciBusId")
        text = bus_id.decode() if isinstance(bus_id, bytes) else bus_id
        self.handle_lookups.append(("pci", text))
        for g in self.gpus:
            if g.bus_id == text.upper():
                return g
        raise NVMLError("Not Found")

    def nvmlDeviceGetName(self, h: Any) -> str:
        self._check("nvmlDeviceGetName")
        return self._gpu(h).props.name

    def nvmlDeviceGetMaxClockInfo(self, h: Any, kind: int) -> int:
        self._check("nvmlDeviceGetMaxClockInfo")
        return int(round(self._gpu(h).spec.boost_clock_hz / 1e6))

    def nvmlDeviceGetClockInfo(self, h: Any, kind: int) -> int:
        self._check("nvmlDeviceGetClockInfo")
        g = self._gpu(h)
        if g.physical_index in self._clocks:
            return int(round(next(self._clocks[g.physical_index])))
        return int(round(g.spec.boost_clock_hz / 1e6))

    def nvmlDeviceGetEnforcedPowerLimit(self, h: Any) -> int:
        self._check("nvmlDeviceGetEnforcedPowerLimit")
        return int(self._gpu(h).spec.tdp_w * 1000)

    def nvmlDeviceGetMigMode(self, h: Any) -> list[int]:
        self._check("nvmlDeviceGetMigMode")
        g = self._gpu(h)
        if g.spec.mig_max_instances == 0 and g.model != "A30":
            raise NVMLError("Not Supported")
        return [g.mig_mode, g.mig_mode]

    def nvmlDeviceGetEccMode(self, h: Any) -> list[int]:
        self._check("nvmlDeviceGetEccMode")
        g = self._gpu(h)
        return [g.ecc, g.ecc]

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h: Any) -> int:
        self._check("nvmlDeviceGetCurrPcieLinkGeneration")
        return int(self._gpu(h).spec.pcie_generation)

    def nvmlDeviceGetCurrPcieLinkWidth(self, h: Any) -> int:
        self._check("nvmlDeviceGetCurrPcieLinkWidth")
        return self._gpu(h).pcie_width


class FakeCuda:
    """The fake machine: GPUs, the torch.cuda functions bound to them, the timeline of what was called."""

    def __init__(self, gpus: list[FakeGPU], visible: list[int] | None = None) -> None:
        self.gpus = gpus  # physical order (NVML's)
        self.visible = list(range(len(gpus))) if visible is None else list(visible)
        self.current = 0
        self.timeline: list[tuple] = []
        self.allocated: dict[int, int] = {i: 0 for i in range(len(self.visible))}  # live fake tensors
        self.peak: dict[int, int] = {i: 0 for i in range(len(self.visible))}
        self.nvml = FakeNVML(gpus)
        self._seq = itertools.count()
        self._synced_at: dict[int, int] = {}
        self._ms: itertools.cycle | None = None
        self.elapsed_calls = 0
        self._streams: dict[int, FakeStream] = {}  # current non-default stream per device
        self._stream_ids = 0

    # control -----------------------------------------------------------------------------------------
    def script_ms(self, values: Iterable[float]) -> None:
        """What successive ``Event.elapsed_time`` calls return, in milliseconds (cycling)."""
        vals = [float(v) for v in values]
        if not vals:
            raise ValueError("script_ms needs at least one value")
        self._ms = itertools.cycle(vals)

    def gpu(self, index: int) -> FakeGPU:
        """The physical GPU behind torch index ``index``."""
        return self.gpus[self.visible[index]]

    def events(self) -> list[tuple]:
        return [e for e in self.timeline if e[0] == "record"]

    # internals ---------------------------------------------------------------------------------------
    def _next_ms(self) -> float:
        self.elapsed_calls += 1
        return next(self._ms) if self._ms is not None else 1.0

    def _index(self, device: Any) -> int:
        import torch

        if device is None:
            return self.current
        if isinstance(device, int):
            i = device
        else:
            d = torch.device(device) if not isinstance(device, FakeStream) else device.device
            if d.type != "cuda":
                raise ValueError(f"Expected a cuda device, but got: {d}")
            i = self.current if d.index is None else d.index
        if not 0 <= i < len(self.visible):
            raise RuntimeError(f"CUDA error: invalid device ordinal {i}")
        return i

    def _on(self, index: int, tensor: Any) -> Any:
        """Account a meta tensor standing for ``tensor.nbytes`` on GPU ``index``; out of memory like CUDA."""
        import weakref

        import torch

        nbytes = tensor.numel() * tensor.element_size()
        total = self.gpu(index).props.total_memory
        if self.allocated[index] + nbytes > total:
            self.timeline.append(("oom", index, nbytes))
            raise torch.cuda.OutOfMemoryError(
                f"CUDA out of memory (fake). Tried to allocate {nbytes} bytes on cuda:{index}; "
                f"{total - self.allocated[index]} bytes free of {total}")
        self.allocated[index] += nbytes
        self.peak[index] = max(self.peak[index], self.allocated[index])
        self.timeline.append(("alloc", index, nbytes))
        weakref.finalize(tensor, self._free, index, nbytes)
        return tensor

    def _free(self, index: int, nbytes: int) -> None:
        self.allocated[index] -= nbytes

    def _synced(self, index: int) -> None:
        self._synced_at[index] = next(self._seq)
        self.timeline.append(("sync", index))

    def _done(self, event: FakeEvent) -> bool:
        return event.seq is not None and self._synced_at.get(event.stream.device_index, -1) > event.seq

    # torch.cuda API ----------------------------------------------------------------------------------
    def is_available(self) -> bool:
        return bool(self.visible)

    def device_count(self) -> int:
        return len(self.visible)

    def current_device(self) -> int:
        return self.current

    def set_device(self, device: Any) -> None:
        self.current = self._index(device)

    def get_device_properties(self, device: Any = None) -> types.SimpleNamespace:
        return self.gpu(self._index(device)).props

    def get_device_name(self, device: Any = None) -> str:
        return self.get_device_properties(device).name

    def get_device_capability(self, device: Any = None) -> tuple[int, int]:
        p = self.get_device_properties(device)
        return (p.major, p.minor)

    def mem_get_info(self, device: Any = None) -> tuple[int, int]:
        i = self._index(device)
        total = self.gpu(i).props.total_memory
        return total - self.allocated[i], total

    def memory_allocated(self, device: Any = None) -> int:
        return self.allocated[self._index(device)]

    def synchronize(self, device: Any = None) -> None:
        self._synced(self._index(device))

    def current_stream(self, device: Any = None) -> FakeStream:
        i = self._index(device)
        return self._streams.get(i) or FakeStream(self, i)

    def Stream(self, device: Any = None, priority: int = 0, **_: Any) -> FakeStream:  # noqa: N802 (torch's name)
        self._stream_ids += 1
        return FakeStream(self, self._index(device), self._stream_ids)

    def stream(self, stream: FakeStream | None) -> Any:
        """``torch.cuda.stream(s)``: ``s`` is its device's current stream inside the block."""
        import contextlib

        @contextlib.contextmanager
        def block():
            if stream is None:
                yield
                return
            before = self._streams.get(stream.device_index)
            self._streams[stream.device_index] = stream
            try:
                yield
            finally:
                if before is None:
                    self._streams.pop(stream.device_index, None)
                else:
                    self._streams[stream.device_index] = before

        return block()

    def default_stream(self, device: Any = None) -> FakeStream:
        return FakeStream(self, self._index(device))

    def device(self, device: Any) -> FakeDeviceGuard:
        return FakeDeviceGuard(self, device)

    def Event(self, enable_timing: bool = False, **kw: Any) -> FakeEvent:  # noqa: N802 (torch's name)
        return FakeEvent(self, enable_timing=enable_timing, **kw)

    def empty_cache(self) -> None:
        self.timeline.append(("empty_cache",))


_CUDA_NAMES = ("is_available", "device_count", "current_device", "set_device", "get_device_properties",
               "get_device_name", "get_device_capability", "mem_get_info", "memory_allocated", "synchronize",
               "current_stream", "default_stream", "device", "Event", "empty_cache", "Stream", "stream")
_FACTORIES = ("empty", "zeros", "ones", "full", "randn")


def _is_cuda(dev: Any) -> bool:
    import torch

    if isinstance(dev, torch.device):
        return dev.type == "cuda"
    if isinstance(dev, str):
        return dev.split(":")[0] == "cuda"
    return False


def _factory(fake: FakeCuda, real: Any) -> Any:
    def make(*args: Any, **kwargs: Any) -> Any:
        dev = kwargs.get("device")
        if dev is not None and _is_cuda(dev):
            index = fake._index(dev)
            kwargs["device"] = "meta"
            kwargs.pop("generator", None)
            kwargs.pop("pin_memory", None)
            return fake._on(index, real(*args, **kwargs))
        return real(*args, **kwargs)

    return make


def _mover(fake: FakeCuda, real_to: Any) -> Any:
    """``Tensor.to``: a move to a CUDA device becomes a meta tensor of the same shape and dtype."""
    import torch

    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        target = kwargs.get("device")
        rest = list(args)
        if target is None and rest and (_is_cuda(rest[0]) or isinstance(rest[0], (str, torch.device))):
            target = rest.pop(0)
        if target is None or not _is_cuda(target):
            return real_to(self, *args, **kwargs)
        kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        kwargs.pop("copy", None)
        dtype = kwargs.pop("dtype", rest[0] if rest and isinstance(rest[0], torch.dtype) else self.dtype)
        t = torch.empty(self.shape, dtype=dtype, device=target)  # the fake factory: meta, counted
        fake.timeline.append(("h2d", fake._index(target), t.numel() * t.element_size()))
        return t

    return to


def install(monkeypatch: pytest.MonkeyPatch, *models: str, visible: list[int] | None = None,
            cusparselt: bool = False) -> FakeCuda:
    """Install a fake machine with GPUs ``models`` (physical order) and return it."""
    import torch

    from ampere import device as ampere_device

    gpus = [make_gpu(m, i) for i, m in enumerate(models)]
    fake = FakeCuda(gpus, visible)
    for name in _CUDA_NAMES:
        monkeypatch.setattr(torch.cuda, name, getattr(fake, name))
    for name in _FACTORIES:
        monkeypatch.setattr(torch, name, _factory(fake, getattr(torch, name)))
    monkeypatch.setattr(torch.Tensor, "to", _mover(fake, torch.Tensor.to))
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, device=None, **kw: self.to(
        torch.device("cuda", fake._index(device))))
    csl = getattr(torch.backends, "cusparselt", None)
    if csl is not None:
        monkeypatch.setattr(csl, "is_available", lambda: cusparselt)
    monkeypatch.delenv("AMPERE_DEVICE", raising=False)
    monkeypatch.setitem(sys.modules, "pynvml", fake.nvml)
    monkeypatch.setattr(ampere_device, "_NVML", {"module": None, "pid": None, "error": None, "atexit": True})
    return fake


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch):
    """Factory fixture: ``fake_cuda("A100-SXM4-80GB", visible=None, cusparselt=False)`` -> :class:`FakeCuda`."""

    def make(*models: str, visible: list[int] | None = None, cusparselt: bool = False) -> FakeCuda:
        return install(monkeypatch, *(models or ("A100-SXM4-80GB",)), visible=visible, cusparselt=cusparselt)

    return make

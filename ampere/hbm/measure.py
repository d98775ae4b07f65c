"""Measurements (torch imported inside the functions): STREAM-like kernels with explicitly counted bytes
(:func:`measure_bandwidth`), the L2 working-set sweep (:func:`measure_l2_sweep`), the strided and offset copies
of the coalescing section (:func:`measure_strided_copy`) and the capacity the driver reports
(:func:`measure_capacity`).

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb), "Measured bandwidth", "The L2 working-set sweep"
and "40 GB versus 80 GB". Every measuring function also runs on ``device="cpu"`` with tiny sizes, so the
tests exercise the same path. Out of GPU memory: freed outside the handler, retried smaller, said so.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from .. import check, specs
from .common import GiB, KiB, MiB, _fields, _int, _name, _num, _opt, _Row, _text
from .l2_model import sweep_footprints


@dataclass(frozen=True)
class Kernel:
    """A bandwidth kernel: what it runs and which arrays it reads and writes per element."""

    name: str
    reads: int  # arrays read per element
    writes: int  # arrays written per element
    engine: str  # "SM" (a kernel on the SMs) or "memcpy" (cudaMemcpyAsync, the driver's copy path)
    description: str

    def __post_init__(self) -> None:
        _fields(self, name=_text(), reads=_int(0, 8), writes=_int(0, 8), engine=_name(("SM", "memcpy")),
                description=_text(allow_empty=True))
        if self.reads + self.writes == 0:
            raise ValueError(f"Kernel.reads and Kernel.writes: kernel {self.name!r} moves no array")

    @property
    def arrays(self) -> int:
        return self.reads + self.writes


#: The STREAM-like kernels, each a single PyTorch call. Bytes are counted from ``reads``/``writes``:
#: a copy reads N and writes N bytes (the STREAM convention); nvbandwidth counts N for a copy.
KERNELS: Mapping[str, Kernel] = MappingProxyType({k.name: k for k in (
    Kernel("read", 1, 0, "SM", "torch.sum(x): one load stream, a scalar result"),
    Kernel("write", 0, 1, "SM", "x.fill_(c): one store stream"),
    Kernel("copy", 1, 1, "memcpy", "y.copy_(x): PyTorch calls cudaMemcpyAsync device-to-device, the path "
                                   "nvbandwidth files under its copy-engine tests"),
    Kernel("scale", 1, 1, "SM", "torch.mul(x, s, out=y): STREAM scale, an element-wise kernel on the SMs "
                                "(the SM copy)"),
    Kernel("triad", 2, 1, "SM", "torch.add(b, c, alpha=s, out=a): STREAM triad a = b + s*c in one kernel"),
)})


def _kernel_names(kernels: Iterable[str] | None) -> list[str]:
    if kernels is None:
        return list(KERNELS)
    return check.names("kernels", kernels, tuple(KERNELS), max_len=len(KERNELS), unique=True)


#: Bounds of the measuring functions' arguments (per array on a GPU; the CPU path runs tiny sizes).
MAX_GPU_BYTES = 1 << 38  # 256 GiB: more than any GPU of the catalogue holds
MAX_CPU_BYTES = 1 << 30  # 1 GiB: the CPU path is the code path, not a measurement
MAX_SAMPLES = 100_000
MAX_TIME_S = 3600.0


def _timing_args(warmup_s: Any, min_samples: Any, min_time_s: Any, max_time_s: Any) -> dict[str, Any]:
    """The timing options every measurement passes to ``timing.benchmark``, checked here with their names."""
    out = {"warmup_s": check.optional(check.nonneg, "warmup_s", warmup_s, maximum=MAX_TIME_S),
           "min_samples": check.bounded_int("min_samples", min_samples, 1, MAX_SAMPLES),
           "min_time_s": check.nonneg("min_time_s", min_time_s, maximum=MAX_TIME_S),
           "max_time_s": check.positive("max_time_s", max_time_s, maximum=MAX_TIME_S)}
    if out["max_time_s"] < out["min_time_s"]:
        raise ValueError(f"max_time_s={max_time_s!r} must be >= min_time_s={min_time_s!r}")
    return out


def _max_bytes(dev: Any) -> int:
    return MAX_GPU_BYTES if dev.type == "cuda" else MAX_CPU_BYTES


def _torch_device(device: Any):
    import torch

    from .. import device as _device

    if device is None:
        return _device.torch_device()
    dev = torch.device(check.device("device", device))
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r}: allowed device types are 'cpu' and 'cuda'")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r}: CUDA is not available on this machine; use device='cpu'")
    return dev


def _device_l2_bytes(dev: Any, fallback: int | None = None) -> int | None:
    """L2 size the device reports (trust it over datasheets), else ``fallback``."""
    import torch

    if dev.type == "cuda":
        reported = int(getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or 0)
        if reported:
            return reported
    return fallback


def _datasheet(dev: Any) -> specs.GPUSpec | None:
    import torch

    if dev.type != "cuda":
        return None
    return specs.match(torch.cuda.get_device_properties(dev).name)


def _kernel_fn(kernel: Kernel, arrays: list[Any]):
    """The zero-argument callable of ``kernel`` over preallocated ``arrays`` (inputs first, output last)."""
    import torch

    if kernel.name == "read":
        x, out = arrays[0], arrays[-1]
        return lambda: torch.sum(x, dim=0, out=out)
    if kernel.name == "write":
        x = arrays[0]
        return lambda: x.fill_(1.5)
    if kernel.name == "copy":
        x, y = arrays
        return lambda: y.copy_(x)
    if kernel.name == "scale":
        x, y = arrays
        return lambda: torch.mul(x, 1.0001, out=y)
    if kernel.name == "triad":
        b, c, a = arrays
        return lambda: torch.add(b, c, alpha=0.5, out=a)
    raise ValueError(f"kernel={kernel.name!r} is unknown; allowed: {', '.join(KERNELS)}")


def _allocate(dev: Any, n: int, count: int, seed: int = 0) -> list[Any]:
    """``count`` float32 arrays of ``n`` random normal values (never zeros: power depends on data), drawn
    with a seeded CPU generator and moved to ``dev``."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(n, generator=gen, dtype=torch.float32).to(dev) for _ in range(count)]


def _is_oom(exc: BaseException) -> bool:
    import torch

    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or "out of memory" in str(exc).lower()


def _free_cuda(dev: Any) -> None:
    import gc

    import torch

    gc.collect()
    if dev.type == "cuda":
        torch.cuda.empty_cache()


def _retrying_oom(run: Any, nbytes: int, floor_bytes: int, dev: Any, what: str) -> tuple[Any, int, list[str]]:
    """``run(nbytes)`` until it does not run out of memory, halving ``nbytes`` each time (down to
    ``floor_bytes``, then the error propagates). Returns (result, the bytes that worked, notes saying what
    was retried). The memory of a failed attempt is freed *outside* the ``except`` block: inside it, the
    traceback still holds the failed frames and their tensors, and a retry there would fail again."""
    notes: list[str] = []
    while True:
        failed = False
        try:
            return run(nbytes), nbytes, notes
        except RuntimeError as exc:
            if not _is_oom(exc) or nbytes // 2 < floor_bytes:
                raise
            failed = True
        if failed:
            _free_cuda(dev)
            notes.append(f"out of memory with {what} of {nbytes / MiB:.0f} MiB: freed, retried with "
                         f"{nbytes // 2 / MiB:.0f} MiB")
            nbytes //= 2


def measure_bandwidth(device: Any = None, *, quick: bool = True, kernels: Iterable[str] | None = None,
                      array_bytes: int | None = None, warmup_s: float | None = None, min_samples: int = 10,
                      min_time_s: float = 0.1, max_time_s: float = 5.0) -> list[dict[str, Any]]:
    """Time the :data:`KERNELS` on arrays much larger than L2, with L2 flushed before every timed call.

    ``array_bytes`` (per array) defaults to 1 GiB (``quick``: max(256 MiB, 8 x L2)) on a GPU and 64 MiB
    on the CPU. When the GPU runs out of memory, the arrays are freed and the kernel retried with half the
    size (down to 16 MiB), and the record's notes say so. On a GPU, ``timing.benchmark`` flushes the L2
    (writes twice its size) before every timed call, outside the timed region, so every call starts
    cold. Returns result records ``{"params", "measurement", "derived", "notes"}`` (the JSON form of a
    recorded result): DRAM bytes/s counting every read and write, copy throughput N/t for copy-like
    kernels, and % of the datasheet bandwidth when the device is in the catalogue.
    Chapter: *HBM and the memory hierarchy*, "Measured bandwidth".
    """
    import torch

    from .. import timing

    dev = _torch_device(device)
    check.boolean("quick", quick)
    names = _kernel_names(kernels)
    timing_args = _timing_args(warmup_s, min_samples, min_time_s, max_time_s)
    l2 = _device_l2_bytes(dev, fallback=None)
    if array_bytes is None:
        if dev.type == "cuda":
            array_bytes = max(256 * MiB, 8 * (l2 or 64 * MiB)) if quick else GiB
        else:
            array_bytes = 64 * MiB
    array_bytes = check.positive_int("array_bytes", array_bytes, maximum=_max_bytes(dev))
    spec = _datasheet(dev)
    flush = dev.type == "cuda"
    records = []
    for name in names:
        k = KERNELS[name]

        def run(nbytes: int, k: Kernel = k, name: str = name) -> tuple[Any, int]:
            n = max(1, nbytes // 4)
            arrays = _allocate(dev, n, max(k.arrays, 1))
            if name == "read":
                arrays.append(torch.empty((), device=dev, dtype=torch.float32))
            fn = _kernel_fn(k, arrays)
            m = timing.benchmark(fn, label=f"hbm {name}", device=dev, **timing_args, flush_l2=flush, l2_bytes=l2,
                                 params={"kernel": name, "array_bytes": n * 4})
            return m, n

        (m, n), _, notes = _retrying_oom(run, array_bytes, min(16 * MiB, array_bytes), dev, "arrays")
        _free_cuda(dev)
        moved = (k.reads + k.writes) * n * 4
        bw = m.rate(moved)
        derived = {"bytes_read": k.reads * n * 4, "bytes_written": k.writes * n * 4, "bytes_moved": moved,
                   "bytes_per_s": bw, "copied_bytes_per_s": m.rate(n * 4) if (k.reads, k.writes) == (1, 1) else None,
                   "datasheet_bytes_per_s": spec.hbm_bytes_per_s if spec else None,
                   "pct_of_datasheet": 100 * bw / spec.hbm_bytes_per_s if spec else None}
        records.append({"params": {"experiment": "bandwidth", "kernel": name, "engine": k.engine,
                                   "array_bytes": n * 4, "dtype": "float32", "l2_flushed": m.l2_flushed,
                                   "description": k.description},
                        "measurement": m.to_dict(), "derived": derived, "notes": notes + list(m.warnings)})
    return records


#: Bytes each reduction of the L2 sweep reads: one chunk of the footprint per output (one thread block each
#: in PyTorch's reduction kernel). Footprints are whole numbers of chunks.
L2_SWEEP_CHUNK_BYTES = 64 * KiB


def _chunk_view(buf: Any, chunks: int, chunk_elems: int, repeats: int) -> Any:
    """The first ``chunks`` x ``chunk_elems`` elements of ``buf`` as a (repeats, chunks, chunk_elems) view
    with stride 0 along the repeats: no copy, the same chunks ``repeats`` times over."""
    return buf[:chunks * chunk_elems].view(chunks, chunk_elems).unsqueeze(0).expand(repeats, chunks, chunk_elems)


def measure_l2_sweep(device: Any = None, *, quick: bool = True, footprints: Sequence[int] | None = None,
                     total_bytes: int | None = None, chunk_bytes: int = L2_SWEEP_CHUNK_BYTES,
                     warmup_s: float | None = None, min_samples: int = 10, min_time_s: float = 0.05,
                     max_time_s: float = 2.0) -> list[dict[str, Any]]:
    """Read bandwidth versus footprint with fixed total traffic and no L2 flush (the working-set curve).

    The design is gpu-benches' ``gpu-l2-cache`` (ernstgpubenches) written with one PyTorch call: a buffer of
    F bytes is cut into m = F / C chunks of C = ``chunk_bytes`` and viewed, without a copy, as a
    (R, m, C/4) float32 tensor whose first dimension has stride 0 (``expand``); ``torch.sum(..., dim=-1)``
    into a preallocated (R, m) output then runs R x m independent reductions of one chunk each. In
    PyTorch's CUDA reduction kernel each output is one 512-thread block reading its chunk with 16-byte
    vector loads, so the kernel has ``total_bytes / C`` blocks (16384 for 1 GiB) whatever the footprint:
    every footprint runs the same kernel with the same parallelism and the same traffic R x F, about
    ``total_bytes``; only the addresses differ. Output r x m + j reads chunk j, so blocks launched in order
    sweep the buffer cyclically and a byte is reused after F bytes of traffic. The L2 is deliberately not
    flushed (a warm cache is the point).

    Footprints default to 256 KiB ... 4 x the L2 the device reports (12 points in ``quick`` mode, else 24)
    and are rounded down to whole chunks (at least one); ``total_bytes`` defaults to 1 GiB (64 MiB on the
    CPU). If the output of the largest repeat count does not fit, the traffic is halved, with the same
    free-then-retry rule as :func:`measure_bandwidth`, and the notes say so. The smallest footprints are
    read by several blocks of the same SM at once and can be served partly by L1. Returns result records.
    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    import torch

    from .. import timing

    dev = _torch_device(device)
    check.boolean("quick", quick)
    timing_args = _timing_args(0.0 if warmup_s is None else warmup_s, min_samples, min_time_s, max_time_s)
    if warmup_s is None:
        timing_args["warmup_s"] = 0.05 if dev.type == "cuda" else 0.0
    chunk = check.positive_int("chunk_bytes", chunk_bytes, maximum=1 << 26)
    if chunk % 16:
        raise ValueError(f"chunk_bytes={chunk_bytes!r} must be a multiple of 16 (one 16-byte vector load)")
    l2 = _device_l2_bytes(dev, fallback=None)
    if footprints is None:
        base = l2 or (4 * MiB if dev.type == "cpu" else 40 * MiB)
        footprints = sweep_footprints(base, points=12 if quick else 24,
                                      start_bytes=256 * KiB if dev.type == "cuda" else 64 * KiB, align=chunk)
    footprints = check.sequence("footprints", footprints,
                                lambda n, v: check.positive_int(n, v, maximum=_max_bytes(dev)), max_len=1000)
    chunks = sorted({max(1, f // chunk) for f in footprints})  # whole chunks, duplicates merged
    if total_bytes is None:
        total_bytes = max(GiB if dev.type == "cuda" else 64 * MiB, 2 * chunks[-1] * chunk)
    total = check.positive_int("total_bytes", total_bytes, maximum=16 * _max_bytes(dev))
    c = chunk // 4  # float32 elements per chunk
    buf = _allocate(dev, chunks[-1] * c, 1, seed=1)[0]
    records = []
    try:
        for m_chunks in chunks:
            f = m_chunks * chunk

            def run(traffic: int, f: int = f, m_chunks: int = m_chunks) -> Any:
                reps = max(1, round(traffic / f))
                view = _chunk_view(buf, m_chunks, c, reps)
                out = torch.empty((reps, m_chunks), device=dev, dtype=torch.float32)

                def fn(view: Any = view, out: Any = out) -> Any:
                    return torch.sum(view, dim=-1, out=out)

                m = timing.benchmark(fn, label=f"l2 sweep {f / MiB:.2f} MiB", device=dev, **timing_args,
                                     flush_l2=False, params={"footprint_bytes": f, "repeats": reps})
                return m, reps

            (m, reps), _, notes = _retrying_oom(run, total, max(f, min(total, 16 * MiB)), dev, "sweep traffic")
            traffic = reps * f
            records.append({"params": {"experiment": "l2_sweep", "footprint_bytes": f, "repeats": reps,
                                       "chunk_bytes": chunk, "chunks": m_chunks, "traffic_bytes": traffic,
                                       "dtype": "float32", "l2_flushed": False, "device_l2_bytes": l2},
                            "measurement": m.to_dict(), "derived": {"bytes_per_s": m.rate(traffic)},
                            "notes": notes + list(m.warnings)})
    finally:
        del buf
        _free_cuda(dev)
    return records


#: Strides (in elements) and offsets (in bytes) of the chapter's strided-copy measurement.
STRIDED_COPY_STRIDES: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
STRIDED_COPY_OFFSETS: tuple[int, ...] = (4, 16, 32)


def measure_strided_copy(device: Any = None, *, quick: bool = True, strides: Sequence[int] = STRIDED_COPY_STRIDES,
                         offsets_bytes: Sequence[int] = STRIDED_COPY_OFFSETS, elements: int | None = None,
                         warmup_s: float | None = None, min_samples: int = 10, min_time_s: float = 0.1,
                         max_time_s: float = 2.0) -> list[dict[str, Any]]:
    """The CUDA Best Practices Guide's ``strideCopy`` and ``offsetCopy`` in PyTorch: copy ``elements``
    float32 values from x to y, element i at ``offset + i * stride`` in both, with one
    ``y.as_strided(...).copy_(x.as_strided(...))`` (PyTorch's element-wise copy: consecutive threads take
    consecutive elements, as in the guide's kernels). The L2 is flushed before every timed call.

    Every stride runs at offset 0, every offset at stride 1. The useful bytes are 2 x 4 x ``elements`` (a
    read and a write); each record carries the useful bytes/s, its ratio to the aligned unit-stride copy
    and the model's (:func:`ampere.hbm.warp_request`: sectors per warp and over the stream). ``elements``
    defaults to 2**24 on a GPU (2**23 in quick mode), 2**14 on the CPU; the arrays hold elements x the
    largest stride (4 GiB at 2**24 and stride 32: retried at half the size if the GPU runs out of memory).
    Chapter: *HBM and the memory hierarchy*, "Coalescing: 32-byte sectors".
    """
    from .. import timing
    from .coalescing import warp_request

    dev = _torch_device(device)
    check.boolean("quick", quick)
    timing_args = _timing_args(warmup_s, min_samples, min_time_s, max_time_s)

    def offset(n: str, v: Any) -> int:
        off = check.nonneg_int(n, v, maximum=4096)
        if off % 4:
            raise ValueError(f"{n}={off} must be a multiple of 4 (float32 elements)")
        return off

    patterns = [(s, 0) for s in check.sequence("strides", strides, lambda n, v: check.positive_int(n, v, maximum=1024),
                                               min_len=0, max_len=64)]
    patterns += [(1, o) for o in check.sequence("offsets_bytes", offsets_bytes, offset, min_len=0, max_len=64)]
    if (1, 0) not in patterns:
        patterns.insert(0, (1, 0))  # the aligned unit-stride copy every ratio refers to
    if elements is None:
        elements = (1 << 23 if quick else 1 << 24) if dev.type == "cuda" else 1 << 14
    n0 = check.positive_int("elements", elements, maximum=(1 << 28) if dev.type == "cuda" else (1 << 22))
    span = max(s for s, _ in patterns) + 1
    spec = _datasheet(dev)
    l2 = _device_l2_bytes(dev, fallback=None)

    def run(nbytes: int) -> tuple[list[tuple[int, int, Any]], int]:
        n = max(1, nbytes // (4 * span))
        x, y = _allocate(dev, n * span + 1024, 2, seed=2)
        out = []
        for stride, off in patterns:
            src = x.as_strided((n,), (stride,), off // 4)
            dst = y.as_strided((n,), (stride,), off // 4)
            m = timing.benchmark(lambda src=src, dst=dst: dst.copy_(src), label=f"strided copy {stride}/{off}",
                                 device=dev, **timing_args, flush_l2=dev.type == "cuda", l2_bytes=l2,
                                 params={"stride": stride, "offset_bytes": off, "elements": n})
            out.append((stride, off, m))
        del x, y
        return out, n

    (runs, n), _, notes = _retrying_oom(run, n0 * 4 * span, min(16 * MiB, n0 * 4 * span), dev, "strided arrays")
    _free_cuda(dev)
    base = next(m for s, o, m in runs if (s, o) == (1, 0))
    records = []
    for stride, off, m in runs:
        req = warp_request(stride, off, 4)
        useful = m.rate(2 * 4 * n)
        records.append({"params": {"experiment": "strided_copy", "stride": stride, "offset_bytes": off,
                                   "elements": n, "dtype": "float32", "l2_flushed": m.l2_flushed},
                        "measurement": m.to_dict(),
                        "derived": {"useful_bytes_per_s": useful, "ratio_to_aligned": base.median_s / m.median_s,
                                    "model_sectors_per_warp": req.sectors, "model_efficiency": req.efficiency,
                                    "model_stream_efficiency": req.stream_efficiency,
                                    "pct_of_datasheet": 100 * useful / spec.hbm_bytes_per_s if spec else None},
                        "notes": notes + list(m.warnings)})
    return records


@dataclass(frozen=True)
class Capacity(_Row):
    """What the driver reports beside the datasheet. See :func:`measure_capacity`."""

    device: str
    total_bytes: int | None  # what the driver exposes to CUDA
    free_bytes: int | None  # after this process's CUDA context
    datasheet_bytes: float | None  # the catalogue's physical capacity (specs.GPUSpec.memory_bytes)
    note: str

    def __post_init__(self) -> None:
        _fields(self, device=_text(), total_bytes=_opt(_int(1, 1 << 50)), free_bytes=_opt(_int(0, 1 << 50)),
                datasheet_bytes=_opt(_num(strict=True)), note=_text(allow_empty=True))
        if self.free_bytes is not None and self.total_bytes is not None and self.free_bytes > self.total_bytes:
            raise ValueError(f"Capacity.free_bytes={self.free_bytes} exceeds Capacity.total_bytes={self.total_bytes}")

    @property
    def total_over_datasheet(self) -> float | None:
        if self.total_bytes is None or not self.datasheet_bytes:
            return None
        return self.total_bytes / self.datasheet_bytes


def measure_capacity(device: Any = None) -> Capacity:
    """What the driver reports: total and free device memory (bytes), beside the physical capacity.

    On the CPU (or a GPU outside the catalogue) the GPU fields are None. Chapter: *HBM and the memory
    hierarchy*, "40 GB versus 80 GB" (what "95% DRAM utilisation" could and could not mean).
    """
    import torch

    dev = _torch_device(device)
    if dev.type != "cuda":
        return Capacity("cpu", None, None, None, "a CPU: device capacity is a GPU measurement")
    free, total = torch.cuda.mem_get_info(dev)
    spec = _datasheet(dev)
    return Capacity(torch.cuda.get_device_properties(dev).name, int(total), int(free),
                    spec.memory_bytes if spec else None,
                    "total = what the driver exposes to CUDA; free = after this process's context")

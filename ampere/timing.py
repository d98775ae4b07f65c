"""The measurement harness: time a function the way the book says GPU code must be timed.

Chapter: *Architecture of the GA100*, section "How we measure" (book/architecture.ipynb) states the
rules; every measuring chapter uses :func:`benchmark`.

Rules implemented here (DESIGN.md section 6, after nvbench, torch.utils.benchmark and triton's do_bench):

* the first call is never timed; warm-up runs by *time* (about 1 s for tensor-core matmuls so clocks and
  power settle);
* on CUDA, events bracket the timed region and the host synchronises only between rounds of samples; a
  sample batches ``calls_per_sample`` calls when one call is too short for an event pair to resolve;
* optional L2 flush (writing a buffer of at least 2 x L2) before *every timed call*, outside the events:
  with ``flush_l2`` each call of a sample gets its own flush and its own event pair, and the sample is
  the mean of its ``calls_per_sample`` cold calls (so every call the measurement reports started with a
  cold L2, whatever ``calls_per_sample`` is);
* events are recorded under ``torch.cuda.device(dev)`` on the *measured* device's current stream (not
  the current device's), and the host synchronises that device;
* at least ``min_samples`` samples and ``min_time_s`` of timed work, or stop at ``max_time_s``;
* median and IQR are the headline, the raw samples are kept, and noisy or throttled runs carry warnings.

On the CPU the same procedure runs with ``time.perf_counter`` (``flush_l2`` has no effect there and
the measurement says ``l2_flushed=False``). SM clocks are read through NVML with the handle
:func:`ampere.device.nvml_handle` finds by PCI bus id; NVML is initialised once per process.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import check

__all__ = ["Measurement", "benchmark", "summarize", "l2_flusher"]

#: Relative IQR thresholds above which a measurement is flagged (torch.utils.benchmark uses the same).
NOISY_REL_IQR = 0.10
VERY_NOISY_REL_IQR = 0.25
#: A sample whose SM clock is below this fraction of the maximum clock is marked throttled (nvbench).
THROTTLE_FRACTION = 0.75
#: Limits of :func:`benchmark`'s arguments (every loop it runs is bounded by one of them).
MAX_SAMPLES = 1_000_000
MAX_CALLS_PER_SAMPLE = 1_000_000
MAX_WARMUP_S = 600.0
MAX_TIME_S = 3600.0
MAX_TARGET_SAMPLE_S = 10.0
MAX_L2_BYTES = 2 ** 32  # 4 GiB: L2 caches are tens of MiB, and the flush buffer is twice this
MODES = ("host", "cuda-events")
#: the minimum of timed work when ``min_time_s`` is not given (or ``max_time_s`` if that is shorter)
DEFAULT_MIN_TIME_S = 0.1
MAX_CLOCK_MHZ = 100_000.0


def _device(name: str, device: Any) -> Any:
    """``device`` as given when it is ``"cpu"``, else a ``torch.device`` (:func:`ampere.check.device`)."""
    return check.device(name, device)


def summarize(samples_s: Sequence[float]) -> dict[str, float]:
    """Median, quartiles, IQR, relative IQR, min, mean and count of a list of durations (seconds).

    ``rel_iqr`` is IQR / median: 0 when every sample is equal, infinite when the median is 0 but not the
    spread (durations at the timer's resolution)."""
    x = np.asarray(check.sequence("samples_s", samples_s, check.nonneg, max_len=MAX_SAMPLES), dtype=np.float64)
    p25, median, p75 = (float(v) for v in np.percentile(x, [25, 50, 75]))
    return {"median_s": median, "p25_s": p25, "p75_s": p75, "iqr_s": p75 - p25,
            "rel_iqr": (p75 - p25) / median if median > 0 else (0.0 if p75 == p25 else math.inf),
            "min_s": float(x.min()), "mean_s": float(x.mean()), "n": int(x.size)}


@dataclass
class Measurement:
    """Raw samples plus how they were taken. Times are per call, in seconds.

    ``samples_s[i]`` is the time of one call in sample ``i`` (the sample's duration divided by
    ``calls_per_sample``). Rates are computed from the median unless a caller asks for the best case.
    """

    label: str
    samples_s: list[float]
    calls_per_sample: int = 1
    mode: str = "host"  # "cuda-events" or "host" (perf_counter after synchronisation)
    l2_flushed: bool = False  # True: L2 was flushed before every timed call (each call ran cold)
    warmup_s: float = 0.0
    device: str = "cpu"
    sm_clocks_mhz: list[float] = field(default_factory=list)  # one reading per round, when NVML is readable
    max_sm_clock_mhz: float | None = None
    timed_out: bool = False
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.label = check.string("label", self.label, allow_empty=True)
        self.samples_s = check.sequence("samples_s", self.samples_s, check.nonneg, max_len=MAX_SAMPLES)
        self.calls_per_sample = check.bounded_int("calls_per_sample", self.calls_per_sample, 1, MAX_CALLS_PER_SAMPLE)
        self.mode = check.one_of("mode", self.mode, MODES)
        self.l2_flushed = check.boolean("l2_flushed", self.l2_flushed)
        self.warmup_s = check.nonneg("warmup_s", self.warmup_s, maximum=MAX_WARMUP_S)
        self.device = check.string("device", self.device)
        self.sm_clocks_mhz = check.sequence("sm_clocks_mhz", self.sm_clocks_mhz,
                                            lambda n, v: check.positive(n, v, maximum=MAX_CLOCK_MHZ), min_len=0,
                                            max_len=MAX_SAMPLES)
        self.max_sm_clock_mhz = check.optional(check.positive, "max_sm_clock_mhz", self.max_sm_clock_mhz,
                                               maximum=MAX_CLOCK_MHZ)
        self.timed_out = check.boolean("timed_out", self.timed_out)
        self.params = check.mapping("params", self.params)
        self._stats = summarize(self.samples_s)

    # statistics -------------------------------------------------------------------------------------
    @property
    def median_s(self) -> float:
        return self._stats["median_s"]

    @property
    def p25_s(self) -> float:
        return self._stats["p25_s"]

    @property
    def p75_s(self) -> float:
        return self._stats["p75_s"]

    @property
    def iqr_s(self) -> float:
        return self._stats["iqr_s"]

    @property
    def rel_iqr(self) -> float:
        return self._stats["rel_iqr"]

    @property
    def min_s(self) -> float:
        return self._stats["min_s"]

    @property
    def mean_s(self) -> float:
        return self._stats["mean_s"]

    @property
    def n(self) -> int:
        return self._stats["n"]

    @property
    def throttled(self) -> bool | None:
        """True if any clock reading fell below 75% of the maximum SM clock; None when not read."""
        if not self.sm_clocks_mhz or not self.max_sm_clock_mhz:
            return None
        return min(self.sm_clocks_mhz) < THROTTLE_FRACTION * self.max_sm_clock_mhz

    @property
    def warnings(self) -> list[str]:
        out = []
        if self.rel_iqr > VERY_NOISY_REL_IQR:
            out.append(f"very noisy: IQR is {self.rel_iqr:.0%} of the median")
        elif self.rel_iqr > NOISY_REL_IQR:
            out.append(f"noisy: IQR is {self.rel_iqr:.0%} of the median")
        if self.n < 10:
            out.append(f"only {self.n} samples")
        if self.timed_out:
            out.append("stopped at the time limit before the sample target")
        if self.throttled:
            out.append("SM clock fell below 75% of its maximum during the run (throttled)")
        return out

    def rate(self, amount: float, statistic: str = "median") -> float:
        """``amount`` per second (FLOP/s, bytes/s) from the median time, or from ``statistic="min"``."""
        amount = check.nonneg("amount", amount)
        statistic = check.one_of("statistic", statistic, ("median", "min"))
        t = self.median_s if statistic == "median" else self.min_s
        return amount / t if t > 0 else math.inf

    # serialisation ----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("_stats", None)
        d.update({k: v for k, v in self._stats.items()})
        d["warnings"] = self.warnings
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Measurement":
        d = check.mapping("d", d)
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in names})

    def __str__(self) -> str:
        unit, scale = _time_unit(self.median_s)
        text = (f"{self.label}: median {self.median_s * scale:.3g} {unit} "
                f"(IQR {self.iqr_s * scale:.2g} {unit}, {self.n} samples x {self.calls_per_sample} calls, "
                f"{self.mode}{', L2 flushed' if self.l2_flushed else ''}, {self.device})")
        return text + "".join(f"\n  warning: {w}" for w in self.warnings)


def _time_unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e3), ("us", 1e6)):
        if seconds >= 1 / scale:
            return unit, scale
    return "ns", 1e9


def l2_flusher(device: Any, l2_bytes: int | None = None) -> Callable[[], None]:
    """A function that evicts the L2 by writing a buffer of at least 2 x L2 bytes on ``device``.

    ``l2_bytes`` defaults to what the device reports (``L2_cache_size``; 40 MiB on an A100). The buffers
    are allocated once, here; each call of the returned function launches two kernels on the current
    stream of ``device``.
    """
    l2_bytes = check.optional(check.bounded_int, "l2_bytes", l2_bytes, 1, MAX_L2_BYTES, why="4 GiB; an L2 is tens of MiB")
    device = _device("device", device)
    if isinstance(device, str) or device.type != "cuda":
        return lambda: None
    import torch

    if l2_bytes is None:
        l2_bytes = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)) or 64 * 2**20
    size = 2 * int(l2_bytes) + 2**20
    buf = torch.empty(size, dtype=torch.uint8, device=device)
    clean = torch.zeros(size // 4, dtype=torch.float32, device=device)
    sink = torch.empty((), dtype=torch.float32, device=device)
    counter = [0]

    def flush() -> None:
        counter[0] = (counter[0] + 1) % 251
        buf.fill_(counter[0])  # evicts everything the timed kernel left in L2 ...
        torch.sum(clean, dim=0, out=sink)  # ... then a read leaves clean lines, so no write-back lands in the next sample

    return flush


def _sm_clock_reader(index: int) -> tuple[Callable[[], float | None], float | None]:
    """NVML readers for the current and maximum SM clock (MHz) of torch CUDA device ``index``;
    ``(None-returning reader, None)`` if unreadable. The handle is the probe's (matched by PCI bus id)."""
    from . import device as _device

    try:
        pynvml, _ = _device.nvml()
        handle, _ = _device.nvml_handle(index)
        max_mhz = float(pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM))
    except Exception:
        return (lambda: None), None

    def read() -> float | None:
        try:
            return float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
        except Exception:
            return None

    return read, max_mhz


def benchmark(
    fn: Callable[[], Any],
    *,
    label: str = "",
    device: Any = "cpu",
    warmup_s: float | None = None,
    min_samples: int = 10,
    min_time_s: float | None = None,
    max_time_s: float = 10.0,
    max_samples: int = 200,
    calls_per_sample: int | None = None,
    target_sample_s: float = 1e-3,
    flush_l2: bool = False,
    l2_bytes: int | None = None,
    params: dict[str, Any] | None = None,
) -> Measurement:
    """Time ``fn()`` and return a :class:`Measurement` of the per-call time.

    ``device`` is a torch device (or string); CUDA devices are timed with events recorded on that
    device's current stream (under ``torch.cuda.device(device)``), anything else with
    ``time.perf_counter``. ``warmup_s`` defaults to 0.25 s on CUDA and 0.02 s on CPU; pass about 1 s for
    tensor-core matmuls. ``calls_per_sample`` defaults to as many calls as fill ``target_sample_s``
    (to 1 when flushing). ``min_time_s`` (default 0.1 s, or ``max_time_s`` if shorter) is the least timed
    work; a ``min_time_s`` larger than ``max_time_s`` is refused. ``flush_l2`` (CUDA only) writes 2 x L2
    bytes before *every* timed call, outside the timed region: each call then has its own event pair and
    a sample is the mean of its cold calls. Chapter: *Architecture of the GA100*, "How we measure".
    """
    check.function("fn", fn)
    label = check.string("label", label, allow_empty=True)
    min_samples = check.bounded_int("min_samples", min_samples, 1, MAX_SAMPLES, why="samples kept in memory")
    max_samples = check.bounded_int("max_samples", max_samples, 1, MAX_SAMPLES, why="samples kept in memory")
    if max_samples < min_samples:
        raise ValueError(f"max_samples={max_samples!r} is below min_samples={min_samples!r}: need "
                         "1 <= min_samples <= max_samples")
    max_time_s = check.real("max_time_s", max_time_s, minimum=0.0, strict_min=True, maximum=MAX_TIME_S)
    if min_time_s is None:
        min_time_s = min(DEFAULT_MIN_TIME_S, max_time_s)
    min_time_s = check.nonneg("min_time_s", min_time_s, maximum=MAX_TIME_S)
    if min_time_s > max_time_s:
        raise ValueError(f"min_time_s={min_time_s:g} is larger than max_time_s={max_time_s:g}: the run would "
                         "stop at max_time_s before reaching its minimum; need min_time_s <= max_time_s")
    target_sample_s = check.real("target_sample_s", target_sample_s, minimum=0.0, strict_min=True,
                                 maximum=MAX_TARGET_SAMPLE_S)
    calls_per_sample = check.optional(check.bounded_int, "calls_per_sample", calls_per_sample, 1,
                                      MAX_CALLS_PER_SAMPLE, why="calls timed together in one sample")
    warmup_s = check.optional(check.nonneg, "warmup_s", warmup_s, maximum=MAX_WARMUP_S)
    flush_l2 = check.boolean("flush_l2", flush_l2)
    l2_bytes = check.optional(check.bounded_int, "l2_bytes", l2_bytes, 1, MAX_L2_BYTES, why="4 GiB; an L2 is tens of MiB")
    params = check.optional(check.mapping, "params", params)
    device = _device("device", device)
    is_cuda = False
    torch = None
    if not isinstance(device, str):
        import torch as _torch

        torch = _torch
        is_cuda = device.type == "cuda"
        if is_cuda and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
    warmup_s = (0.25 if is_cuda else 0.02) if warmup_s is None else warmup_s
    guard = torch.cuda.device(device) if is_cuda else contextlib.nullcontext()
    with guard:
        if is_cuda:
            stream = torch.cuda.current_stream(device)
            sync: Callable[[], None] = lambda: torch.cuda.synchronize(device)  # noqa: E731
        elif torch is not None and device.type == "mps":
            # host clock, but only after the Apple GPU finished: otherwise it times the enqueue
            stream, sync = None, (lambda: torch.mps.synchronize())
        else:
            stream, sync = None, (lambda: None)
        k, samples, clocks, max_mhz, timed_out, flushed = _run(
            fn, is_cuda, torch, device, stream, sync, warmup_s, min_samples, min_time_s, max_time_s,
            max_samples, calls_per_sample, target_sample_s, flush_l2, l2_bytes)
    return Measurement(label=label or getattr(fn, "__name__", "fn"), samples_s=samples, calls_per_sample=k,
                       mode="cuda-events" if is_cuda else "host", l2_flushed=flushed, warmup_s=warmup_s,
                       device=str(device), sm_clocks_mhz=clocks, max_sm_clock_mhz=max_mhz, timed_out=timed_out,
                       params=dict(params or {}))


def _run(fn, is_cuda, torch, device, stream, sync, warmup_s, min_samples, min_time_s, max_time_s, max_samples,
         calls_per_sample, target_sample_s, flush_l2, l2_bytes):
    """The timing loop of :func:`benchmark` (inside the device guard)."""
    # 1. cold call (context creation, cuBLAS heuristics, allocator growth): discarded
    fn()
    sync()
    # 2. per-call estimate from a few calls
    t0 = time.perf_counter()
    for _ in range(3):
        fn()
    sync()
    estimate = max((time.perf_counter() - t0) / 3, 1e-9)
    if calls_per_sample:
        k = calls_per_sample
    elif flush_l2 and is_cuda:
        k = 1  # every call has its own flush and event pair: batching calls buys no resolution
    else:
        k = max(1, min(10_000, math.ceil(target_sample_s / estimate)))
    # 3. warm-up by time, synchronising every batch: otherwise the host only fills the launch queue
    #    (about a thousand kernels) and the real warm-up silently lasts that many calls longer
    t_end = time.perf_counter() + warmup_s
    while time.perf_counter() < t_end:
        for _ in range(k):
            fn()
        sync()

    flush = l2_flusher(device, l2_bytes) if (flush_l2 and is_cuda) else None
    read_clock, max_mhz = _sm_clock_reader(device.index) if is_cuda else ((lambda: None), None)
    samples: list[float] = []
    clocks: list[float] = []
    started = time.perf_counter()
    timed_out = False
    round_size = min_samples
    while True:
        if is_cuda:
            groups = []  # per sample: the event pairs of its calls (one pair per call when flushing)
            for _ in range(round_size):
                pairs = []
                if flush:
                    for _ in range(k):
                        flush()  # outside the events, before every call: each timed call starts cold
                        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        start.record(stream)
                        fn()
                        end.record(stream)
                        pairs.append((start, end))
                else:
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record(stream)
                    for _ in range(k):
                        fn()
                    end.record(stream)
                    pairs.append((start, end))
                groups.append(pairs)
            clock = read_clock()
            sync()
            # elapsed_time is in milliseconds: seconds per call = sum(ms) / 1000 / k
            samples += [sum(s.elapsed_time(e) for s, e in pairs) / 1e3 / k for pairs in groups]
            if clock:
                clocks.append(clock)
        else:
            for _ in range(round_size):
                sync()
                t = time.perf_counter()
                for _ in range(k):
                    fn()
                sync()
                samples.append((time.perf_counter() - t) / k)
                if time.perf_counter() - started >= max_time_s:
                    break
        elapsed = time.perf_counter() - started
        enough = len(samples) >= min_samples and sum(samples) * k >= min_time_s
        if enough or len(samples) >= max_samples:
            break
        if elapsed >= max_time_s:
            timed_out = True
            break
        round_size = min(max_samples - len(samples), max(1, len(samples)))
    return k, samples, clocks, max_mhz, timed_out, flush is not None

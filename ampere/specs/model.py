"""The data model of the GPU catalogue: precisions, :class:`GPUSpec`, datasheet figures as printed
(:class:`Quoted`) and the published memory figures (:class:`MemoryFigure`). The package docstring of
:mod:`ampere.specs` states the rules; :mod:`ampere.specs.catalogue` holds the GPUs."""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Mapping

from .. import check


#: The precisions of the book's peak tables, in the order tables print them (``spec.precisions()``).
PRECISIONS: tuple[str, ...] = ("fp64", "fp64_tc", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")
#: Non-tensor 16-bit arithmetic on the CUDA cores; accepted by ``peak_flops``, absent from the tables.
SIMT_PRECISIONS: tuple[str, ...] = ("fp16_simt", "bf16_simt")
#: Every precision the package knows: the table precisions, then the SIMT ones.
ALL_PRECISIONS: tuple[str, ...] = PRECISIONS + SIMT_PRECISIONS
#: Precisions executed by tensor cores.
TENSOR_PRECISIONS = frozenset({"fp64_tc", "tf32", "bf16", "fp16", "fp8", "int8", "int4"})
#: Precisions that 2:4 structured sparsity accelerates (FP64 is never sparse).
SPARSE_PRECISIONS = frozenset({"tf32", "bf16", "fp16", "fp8", "int8", "int4"})
# Low-precision tensor math runs at ``tensor_clock_hz``. On H100/H200 NVIDIA's tensor peaks correspond to
# 1830 MHz while the FP32/FP64 (and FP64 tensor) peaks correspond to the 1980 MHz boost clock.
_TENSOR_CLOCKED = SPARSE_PRECISIONS

#: PCIe signalling rate per lane in transfers/s, by generation (128b/130b encoding from Gen3 on).
_PCIE_GT_PER_S = {3: 8e9, 4: 16e9, 5: 32e9}


def pcie_bytes_per_s(generation: int, lanes: int = 16) -> float:
    """Usable PCIe bandwidth per direction in bytes/s (Gen3+: 128b/130b encoding).

    Gen4 x16 gives 31.5 GB/s per direction (63 GB/s both ways), the figure NVIDIA rounds to "64 GB/s".
    ``generation`` is 3, 4 or 5 and ``lanes`` a link width (1, 2, 4, 8, 16), both integers (``True`` is not 1).
    Chapter: *HBM and the memory hierarchy*, "40 GB versus 80 GB" (host memory is a PCIe link away).
    """
    generation = check.integer("generation", generation)
    if generation not in _PCIE_GT_PER_S:
        raise ValueError(f"generation={generation!r} is not supported; allowed: {sorted(_PCIE_GT_PER_S)}")
    lanes = check.integer("lanes", lanes)
    if lanes not in (1, 2, 4, 8, 16):
        raise ValueError(f"lanes={lanes!r} is not a PCIe link width; allowed: 1, 2, 4, 8, 16")
    return _PCIE_GT_PER_S[generation] * lanes * (128 / 130) / 8


@dataclass(frozen=True)
class Quoted:
    """A figure as a vendor prints it: ``text`` keeps the printed precision ("9.7", "1248").

    ``scale`` converts the printed unit to SI (1e12 for TFLOPS/TOPS). ``note`` explains a known
    inconsistency between the printed figure and the derivation. ``source`` names the document when it is
    not the spec's ``datasheet`` source (the A100's non-tensor 16-bit peaks are printed in NVIDIA's
    comparison tables, not in its datasheet).
    """

    text: str
    scale: float = 1e12
    note: str | None = None
    source: str | None = None  # bib key when the figure comes from another document than spec "datasheet"

    def __post_init__(self) -> None:
        text = check.string("Quoted.text", self.text, max_len=32)
        if not _PRINTED_NUMBER.fullmatch(text):
            raise ValueError(f"Quoted.text must be a number as printed (digits, at most one '.'), got {text!r}")
        object.__setattr__(self, "scale", check.positive("Quoted.scale", self.scale, maximum=1e30))
        if float(text) * self.scale > 1e30:
            raise ValueError(f"Quoted.text={text!r} x Quoted.scale={self.scale:g} exceeds 1e30: not a hardware figure")
        check.optional(check.string, "Quoted.note", self.note)
        check.optional(check.string, "Quoted.source", self.source)

    @property
    def value(self) -> float:
        return float(self.text) * self.scale

    @property
    def unit_in_last_place(self) -> float:
        """Size of one unit in the last printed digit, in SI units (0.1e12 for "9.7")."""
        decimals = len(self.text.split(".")[1]) if "." in self.text else 0
        return 10.0 ** (-decimals) * self.scale

    def agrees_with(self, derived: float) -> bool:
        """True when ``derived`` (a peak in SI units, >= 0) is within one unit of the last printed digit.

        One unit, not half: NVIDIA rounds first and doubles after (2 x 624 = "1248" although
        108 x 4096 x 2 x 1.41 GHz = 1247.5 TOPS), so a strict half-unit test would flag arithmetic that is
        merely rounded in a different order.
        """
        derived = check.nonneg("derived", derived)
        return abs(derived - self.value) < self.unit_in_last_place * (1 - 1e-9)


#: A figure as a datasheet prints it: digits with at most one decimal point ("9.7", "1248", "1978.9").
_PRINTED_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")

#: The memory figures of ``ampere/data/tables/gpu_memory.json``, one row per (GPU, quantity):
#: physical capacity, NVML framebuffer total, NVML's driver reserve, CUDA's total global memory.
MEMORY_QUANTITIES: tuple[str, ...] = ("physical", "nvidia_smi_total", "nvidia_smi_reserved", "cuda_total")
_MEMORY_TABLE = "gpu_memory"


@dataclass(frozen=True)
class MemoryFigure:
    """One memory figure of one GPU as a source prints it (a row of ``gpu_memory.json``).

    ``bytes`` is None where no citable figure was found (``note`` says what was looked for); ``printed``
    keeps the source's own text ("81559MiB", "40339 MBytes (42298834944 bytes)"); ``driver`` the driver or
    CUDA version of the capture (the driver's reserve changes with it); ``ecc`` "on"/"off" where known.
    """

    gpu: str
    quantity: str
    bytes: int | None
    printed: str | None
    source: str | None
    where: str
    driver: str | None = None
    ecc: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpu", check.gpu("MemoryFigure.gpu", self.gpu))
        check.one_of("MemoryFigure.quantity", self.quantity, MEMORY_QUANTITIES)
        if self.bytes is not None:
            object.__setattr__(self, "bytes", check.integer("MemoryFigure.bytes", self.bytes, minimum=0,
                                                            maximum=2**50))  # 1 PiB: far above any GPU
        for name in ("printed", "source", "driver"):
            check.optional(check.string, f"MemoryFigure.{name}", getattr(self, name))
        check.string("MemoryFigure.where", self.where, allow_empty=True)
        check.string("MemoryFigure.note", self.note, allow_empty=True)
        if self.ecc is not None:
            check.one_of("MemoryFigure.ecc", self.ecc, ("on", "off"))
        if self.bytes is not None and not self.source:
            raise ValueError(f"MemoryFigure.source: ({self.gpu!r}, {self.quantity!r}) has a value but no source")
        if self.bytes is None and not self.note:
            raise ValueError(f"MemoryFigure.note: ({self.gpu!r}, {self.quantity!r}) is null without a note")

    @property
    def mib(self) -> float | None:
        return None if self.bytes is None else self.bytes / 2**20

    @property
    def gib(self) -> float | None:
        return None if self.bytes is None else self.bytes / 2**30


@functools.lru_cache(maxsize=1)
def _memory_figures() -> Mapping[tuple[str, str], MemoryFigure]:
    """The memory table as {(gpu, quantity): MemoryFigure}, read once from ``ampere/data/tables``."""
    from .. import results

    out: dict[tuple[str, str], MemoryFigure] = {}
    for row in results.table(_MEMORY_TABLE)["rows"]:
        fig = MemoryFigure(gpu=row["gpu"], quantity=row["quantity"], bytes=row.get("bytes"),
                           printed=row.get("printed"), source=row.get("source") or None, where=row.get("where", ""),
                           driver=row.get("driver"), ecc=row.get("ecc"), note=row.get("note", ""))
        if (fig.gpu, fig.quantity) in out:
            raise ValueError(f"{_MEMORY_TABLE}.json: two rows for ({fig.gpu!r}, {fig.quantity!r})")
        out[(fig.gpu, fig.quantity)] = fig
    return MappingProxyType(out)


@dataclass(frozen=True)
class GPUSpec:
    """One GPU product as data. Fields carry SI units in their names; see ``source(field)``."""

    name: str  # catalogue key, e.g. "A100-SXM4-80GB"
    marketing_name: str  # what NVIDIA calls it
    architecture: str  # "Ampere", "Volta", ...
    chip: str  # die name, e.g. "GA100"
    form_factor: str  # "SXM4", "PCIe", ...
    launch_year: int
    compute_capability: tuple[int, int]
    sm_count: int  # SMs enabled on this product
    die_gpcs: int  # GPCs on the full die
    die_tpcs_per_gpc: int  # TPCs per GPC on the full die (2 SMs per TPC on every die here)
    boost_clock_hz: float  # maximum boost clock used for the FP32/FP64 peaks
    tensor_clock_hz: float  # clock at which NVIDIA's low-precision tensor peaks are quoted
    fma_per_clk_per_sm: Mapping[str, int]  # dense FMA (or MAC) per clock per SM, by precision
    sparse_2to4: bool  # tensor cores accelerate 2:4 structured sparsity (2x)
    tensor_cores_per_sm: int
    tensor_core_generation: int  # 0 = none
    memory_type: str  # "HBM2", "HBM2e", "GDDR6", ...
    memory_bytes: float  # physical capacity, bytes; binary where the product is (A100 "80GB" = 80 * 2**30)
    memory_bus_bits: int  # total DRAM interface width
    memory_data_rate_bps: float  # data rate per pin, bit/s
    hbm_bytes_per_s: float  # datasheet DRAM bandwidth (HBM or GDDR), bytes/s
    memory_stacks: int | None  # active HBM stacks (None for GDDR)
    l2_bytes: int  # L2 capacity in bytes (NVIDIA's "40 MB" is 40 MiB)
    l2_read_bytes_per_clk: int | None  # L2 read bandwidth per clock where NVIDIA publishes it
    l1_shared_bytes_per_sm: int  # combined L1 data cache / shared memory per SM
    max_shared_bytes_per_sm: int  # largest shared-memory carve-out per SM
    register_file_bytes_per_sm: int
    max_threads_per_sm: int
    tdp_w: float  # board power limit (TDP/TGP), W
    nvlink_generation: int | None  # None: no NVLink
    nvlink_links: int
    nvlink_bytes_per_s: float  # NVLink total, bidirectional (A100: 600e9 = 12 links x 25 GB/s x 2)
    pcie_generation: int
    mig_max_instances: int  # 0 = no MIG
    transistors: float | None
    die_area_mm2: float | None
    process: str
    datasheet: Mapping[tuple[str, bool], Quoted] = field(default_factory=dict, compare=False)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)  # field -> bib key; "*" default
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_spec_fields(self)
        object.__setattr__(self, "fma_per_clk_per_sm", MappingProxyType(dict(self.fma_per_clk_per_sm)))
        object.__setattr__(self, "datasheet", MappingProxyType(dict(self.datasheet)))
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))
        unknown = set(self.fma_per_clk_per_sm) - set(ALL_PRECISIONS)
        if unknown:
            raise ValueError(f"{self.name}: fma_per_clk_per_sm has unknown precisions {sorted(unknown)}")
        quoted_unknown = {p for p, _ in self.datasheet} - set(self.fma_per_clk_per_sm)
        if quoted_unknown:
            raise ValueError(f"{self.name}: datasheet quotes precisions without a rate {sorted(quoted_unknown)}")
        if any(p in self.fma_per_clk_per_sm for p in SIMT_PRECISIONS) and "simt_rates" not in self.sources:
            raise ValueError(f"{self.name}: SIMT rates need a source key 'simt_rates'")
        if "*" not in self.sources:
            raise ValueError(f"{self.name}: sources needs a default key '*'")

    def __hash__(self) -> int:
        return hash(self.name)

    # --- derived quantities -------------------------------------------------------------------------

    @property
    def die_sms(self) -> int:
        """SMs on the full die (GPCs x TPCs per GPC x 2)."""
        return self.die_gpcs * self.die_tpcs_per_gpc * 2

    @property
    def fp32_cores(self) -> int:
        """"CUDA cores" in NVIDIA's counting: FP32 lanes per SM x SMs."""
        return self.fma_per_clk_per_sm["fp32"] * self.sm_count

    @property
    def tensor_cores(self) -> int:
        return self.tensor_cores_per_sm * self.sm_count

    @property
    def memory_bandwidth_derived_bytes_per_s(self) -> float:
        """Interface width x data rate per pin / 8: the datasheet bandwidth re-derived."""
        return self.memory_bus_bits * self.memory_data_rate_bps / 8

    @property
    def pcie_bytes_per_s(self) -> float:
        """PCIe x16 bandwidth per direction, bytes/s."""
        return pcie_bytes_per_s(self.pcie_generation)

    @property
    def nvlink_bytes_per_s_per_direction(self) -> float:
        return self.nvlink_bytes_per_s / 2

    @property
    def l2_bytes_per_s(self) -> float | None:
        """Theoretical L2 read bandwidth at the boost clock, where the bytes/clock are published."""
        if self.l2_read_bytes_per_clk is None:
            return None
        return self.l2_read_bytes_per_clk * self.boost_clock_hz

    def precisions(self) -> tuple[str, ...]:
        """Precisions of the book's peak tables this GPU executes natively, in table order (no SIMT ones)."""
        return tuple(p for p in PRECISIONS if p in self.fma_per_clk_per_sm)

    def all_precisions(self) -> tuple[str, ...]:
        """Every precision with a rate on this GPU: :meth:`precisions`, then the SIMT ones it has."""
        return tuple(p for p in ALL_PRECISIONS if p in self.fma_per_clk_per_sm)

    def supports(self, precision: str, sparse: bool = False) -> bool:
        """True when the catalogue holds a rate for ``precision`` (and 2:4 sparsity, with ``sparse=True``).

        An unknown precision name is simply not supported (False); ``sparse`` must be a boolean.
        """
        if not isinstance(precision, str):
            raise TypeError(f"precision must be a string, one of {', '.join(ALL_PRECISIONS)}; got {precision!r}")
        sparse = check.boolean("sparse", sparse)
        if precision not in self.fma_per_clk_per_sm:
            return False
        return not sparse or (self.sparse_2to4 and precision in SPARSE_PRECISIONS)

    def clock_for(self, precision: str) -> float:
        """Clock (Hz) at which the peak of ``precision`` is quoted (SIMT precisions: the boost clock)."""
        return self.tensor_clock_hz if precision in _TENSOR_CLOCKED else self.boost_clock_hz

    def peak_flops(self, precision: str, sparse: bool = False) -> float:
        """Peak throughput in FLOP/s (OP/s for int8/int4), derived from per-SM per-clock rates.

        ``precision`` is one of :data:`ALL_PRECISIONS` (the table precisions and the non-tensor
        ``fp16_simt``/``bf16_simt``). ``sparse=True`` gives the 2:4 structured-sparsity figure (2x dense)
        where the tensor cores support it; ``sparse`` must be a boolean (``"false"`` raises ``TypeError``).
        Unknown or unsupported precisions raise ``ValueError`` naming what is allowed.
        """
        check.one_of("precision", precision, ALL_PRECISIONS)
        sparse = check.boolean("sparse", sparse)
        if precision not in self.fma_per_clk_per_sm:
            why = ("no source in the catalogue gives its rate" if precision in SIMT_PRECISIONS
                   else "it has no such units")
            raise ValueError(
                f"precision={precision!r} is not supported on {self.name} ({why}); "
                f"allowed on this GPU: {', '.join(self.all_precisions())}"
            )
        if sparse:
            if not self.sparse_2to4:
                raise ValueError(f"sparse=True: {self.name} has no 2:4 sparse tensor cores; use sparse=False")
            if precision not in SPARSE_PRECISIONS:
                raise ValueError(
                    f"sparse=True is not defined for precision={precision!r}; "
                    f"2:4 sparsity applies to: {', '.join(p for p in PRECISIONS if p in SPARSE_PRECISIONS)}"
                )
        rate = self.fma_per_clk_per_sm[precision] * 2 * self.sm_count * self.clock_for(precision)
        return rate * (2 if sparse else 1)

    def ridge_point(self, precision: str, bytes_per_s: float | None = None) -> float:
        """Arithmetic intensity (FLOP/byte) where the roofline turns: peak / bandwidth.

        ``bytes_per_s`` defaults to the datasheet DRAM bandwidth; pass ``l2_bytes_per_s`` for the L2 roof.
        """
        from .. import check

        bandwidth = self.hbm_bytes_per_s if bytes_per_s is None else check.positive("bytes_per_s", bytes_per_s)
        return self.peak_flops(precision) / bandwidth

    # --- memory as the software sees it (ampere/data/tables/gpu_memory.json) ---------------------------

    def memory_figure(self, quantity: str) -> MemoryFigure | None:
        """The ``quantity`` row of the memory table (one of :data:`MEMORY_QUANTITIES`), None when absent."""
        return _memory_figures().get((self.name, check.one_of("quantity", quantity, MEMORY_QUANTITIES)))

    @property
    def nvidia_smi_memory_bytes(self) -> int | None:
        """NVML's framebuffer total (nvidia-smi "Total", MiB x 2**20) in a cited capture; None if none found."""
        fig = self.memory_figure("nvidia_smi_total")
        return None if fig is None else fig.bytes

    @property
    def cuda_memory_bytes(self) -> int | None:
        """CUDA's total global memory (``totalGlobalMem``, torch ``total_memory``) in a cited capture.

        None where no citable figure was found (the table's note says so); see :attr:`cuda_visible_bytes`.
        """
        fig = self.memory_figure("cuda_total")
        return None if fig is None else fig.bytes

    @property
    def cuda_memory_estimated(self) -> bool:
        """True when :attr:`cuda_visible_bytes` is an estimate (no published CUDA total for this card)."""
        return self.cuda_memory_bytes is None

    @property
    def cuda_visible_bytes(self) -> int:
        """What CUDA exposes: the published CUDA total, else a conservative estimate.

        The estimate removes from :attr:`memory_bytes` the largest fraction (physical - CUDA total) /
        physical among the catalogue cards with the same kind of memory (HBM: ``memory_stacks`` set; GDDR:
        not) that have a published CUDA total, rounded down to a MiB. It never invents a figure: it is
        computed from the table's cited rows, and :attr:`cuda_memory_estimated` says it is one.
        """
        published = self.cuda_memory_bytes
        if published is not None:
            return published
        from .catalogue import _largest_cuda_carveout

        fraction = _largest_cuda_carveout(self.memory_stacks is not None)
        return math.floor(self.memory_bytes * (1 - fraction) / 2**20) * 2**20

    def source(self, field_name: str) -> str:
        """Citation key (book/references.bib) for ``field_name``.

        Besides the dataclass fields: ``"peak_flops"``, ``"simt_rates"`` (the per-clock rates of the
        non-tensor 16-bit precisions), and the memory figures ``"cuda_memory_bytes"`` and
        ``"nvidia_smi_memory_bytes"`` (their rows of ``gpu_memory.json``; ``ValueError`` with the table's note
        where no figure was found).
        """
        memory = {"cuda_memory_bytes": "cuda_total", "nvidia_smi_memory_bytes": "nvidia_smi_total"}
        valid = {f.name for f in fields(self)} | {"peak_flops", "simt_rates"} | set(memory)
        if not isinstance(field_name, str) or field_name not in valid:
            raise ValueError(f"field_name={field_name!r} is not a GPUSpec field; allowed: {sorted(valid)}")
        if field_name in memory:
            fig = self.memory_figure(memory[field_name])
            if fig is None or fig.source is None:
                why = fig.note if fig is not None else "no row in gpu_memory.json"
                raise ValueError(f"{self.name} has no published {field_name}: {why}")
            return fig.source
        if field_name == "simt_rates" and "simt_rates" not in self.sources:
            raise ValueError(f"{self.name} has no SIMT rates: no source in the catalogue gives them")
        return self.sources.get(field_name, self.sources["*"])

    def citation_keys(self) -> set[str]:
        return set(self.sources.values())


# -------------------------------------------------------------------------------------------------------
# Field checks of GPUSpec (one line per kind of field; the message names GPUSpec.<field>)
# -------------------------------------------------------------------------------------------------------

_TEXT_FIELDS = ("name", "marketing_name", "architecture", "chip", "form_factor", "memory_type", "process")
#: integer fields and their bounds (a bound far above any GPU: a typo is refused, a future GPU is not)
_INT_FIELDS = {"launch_year": (1990, 2100), "sm_count": (1, 10_000), "die_gpcs": (1, 1_000),
               "die_tpcs_per_gpc": (1, 1_000), "tensor_cores_per_sm": (0, 64), "tensor_core_generation": (0, 20),
               "memory_bus_bits": (8, 1 << 20), "l2_bytes": (1, 1 << 36), "l1_shared_bytes_per_sm": (1, 1 << 30),
               "max_shared_bytes_per_sm": (1, 1 << 30), "register_file_bytes_per_sm": (1, 1 << 30),
               "max_threads_per_sm": (1, 1 << 20), "nvlink_links": (0, 1_000), "mig_max_instances": (0, 1_000)}
_OPTIONAL_INT_FIELDS = {"memory_stacks": (1, 64), "l2_read_bytes_per_clk": (1, 1 << 30), "nvlink_generation": (1, 20)}
#: float fields, positive (True) or >= 0 (False), each below 1e30
_REAL_FIELDS = {"boost_clock_hz": True, "tensor_clock_hz": True, "memory_bytes": True,
                "memory_data_rate_bps": True, "hbm_bytes_per_s": True, "tdp_w": True, "nvlink_bytes_per_s": False}
_OPTIONAL_REAL_FIELDS = ("transistors", "die_area_mm2")


def _check_spec_fields(spec: "GPUSpec") -> None:
    """Refuse a GPUSpec field of the wrong type or outside its bounds, naming ``GPUSpec.<field>``."""
    for name in _TEXT_FIELDS:
        check.string(f"GPUSpec.{name}", getattr(spec, name), max_len=200)
    for name, (lo, hi) in _INT_FIELDS.items():
        check.bounded_int(f"GPUSpec.{name}", getattr(spec, name), lo, hi)
    for name, (lo, hi) in _OPTIONAL_INT_FIELDS.items():
        check.optional(check.bounded_int, f"GPUSpec.{name}", getattr(spec, name), lo, hi)
    for name, strict in _REAL_FIELDS.items():
        check.real(f"GPUSpec.{name}", getattr(spec, name), minimum=0.0, strict_min=strict, maximum=1e30)
    for name in _OPTIONAL_REAL_FIELDS:
        check.optional(check.positive, f"GPUSpec.{name}", getattr(spec, name), maximum=1e30)
    check.boolean("GPUSpec.sparse_2to4", spec.sparse_2to4)
    cc = check.sequence("GPUSpec.compute_capability", spec.compute_capability,
                        lambda n, v: check.bounded_int(n, v, 0, 99), min_len=2, max_len=2)
    if not isinstance(spec.compute_capability, tuple):
        raise TypeError(f"GPUSpec.compute_capability must be a tuple (major, minor), got {cc!r}")
    if spec.pcie_generation not in _PCIE_GT_PER_S or isinstance(spec.pcie_generation, bool):
        raise ValueError(f"GPUSpec.pcie_generation must be one of {sorted(_PCIE_GT_PER_S)}, "
                         f"got {spec.pcie_generation!r}")
    rates = check.mapping("GPUSpec.fma_per_clk_per_sm", spec.fma_per_clk_per_sm, allow_empty=False)
    for precision, rate in rates.items():
        check.one_of("GPUSpec.fma_per_clk_per_sm", precision, ALL_PRECISIONS)
        check.bounded_int(f"GPUSpec.fma_per_clk_per_sm[{precision!r}]", rate, 1, 1 << 20)
    for key, quoted in check.mapping("GPUSpec.datasheet", spec.datasheet).items():
        if not (isinstance(key, tuple) and len(key) == 2 and key[0] in ALL_PRECISIONS
                and isinstance(key[1], bool)):
            raise ValueError(f"GPUSpec.datasheet keys must be (precision, sparse) pairs, got {key!r}")
        if not isinstance(quoted, Quoted):
            raise TypeError(f"GPUSpec.datasheet[{key!r}] must be a Quoted, got {type(quoted).__name__}")
    for key, value in check.mapping("GPUSpec.sources", spec.sources, allow_empty=False).items():
        check.string("GPUSpec.sources", key)
        check.string(f"GPUSpec.sources[{key!r}]", value)
    check.sequence("GPUSpec.notes", spec.notes, check.string, min_len=0, max_len=100)
    if not isinstance(spec.notes, tuple):
        raise TypeError(f"GPUSpec.notes must be a tuple of strings, got {type(spec.notes).__name__}")

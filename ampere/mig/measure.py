"""Measure the device this process runs on (a whole GPU or its MIG instance), and ``python -m ampere bench mig``.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb), section "On a real GPU": a matmul
and a copy beside the model of the instance (:func:`ampere.mig.geometry.instance_peaks`). torch is imported
only inside the functions that measure, gated on the probed device; on the CPU the whole path runs with
tiny sizes. :func:`bench_main` is the benchmark entry registered in ``ampere.cli.BENCHES``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

from .. import check, results
from ..fields import check_fields
from .geometry import InstancePeaks, instance_peaks
from .nvml import compare_with_driver, nvml_mig_report

__all__ = ["InstanceMeasurement", "measure_instance", "bench_main"]


# ---------------------------------------------------------------------------------------------------------
# Measure the device this process runs on (a whole GPU, or the MIG instance it was given)
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstanceMeasurement:
    """A matmul and a copy on the device this process runs on, beside the model of its MIG profile."""
    FIELD_RULES = {"positive": ("n", "copy_bytes")}  # the checks of fields.check_fields

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

    def __post_init__(self) -> None:
        check_fields(self)

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

    from .. import device as dev
    from .. import timing

    quick = check.boolean("quick", quick)
    info = check.device_info("info", info) or dev.probe()
    device = torch.device(check.device("device", device)) if device is not None else dev.torch_device(info)
    cuda = device.type == "cuda"
    n = (2048 if quick else 4096) if cuda else 128
    dtype = torch.bfloat16 if (cuda and info.bf16_tensor) else torch.float32
    precision = "bf16" if dtype == torch.bfloat16 else "fp32"
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
    b = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
    c = torch.empty(n, n, device=device, dtype=dtype)
    mm = timing.benchmark(lambda: torch.matmul(a, b, out=c), label=f"matmul {n}^3 {precision}", device=device,
                          warmup_s=(0.3 if quick else 1.0) if cuda else None, max_time_s=10.0 if cuda else 0.2,
                          params={"n": n, "dtype": precision})
    # 256 MiB even in quick mode: the copy's footprint (2 x 256 MiB) must dwarf the L2 (60 MiB on an H200).
    # Every timed copy is a cold one: the L2 is flushed before each call (calls_per_sample=1 says so
    # explicitly, whatever the harness's default for flushing).
    nbytes = 256 * 2**20 if cuda else 4 * 2**20
    src = torch.randn(nbytes // 4, generator=gen).to(device)
    dst = torch.empty_like(src)
    cp = timing.benchmark(lambda: dst.copy_(src), label=f"copy {nbytes / 2**20:.0f} MiB", device=device,
                          flush_l2=cuda, l2_bytes=info.l2_bytes if cuda else None,
                          calls_per_sample=1 if cuda else None, max_time_s=10.0 if cuda else 0.2,
                          params={"bytes": nbytes})
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
    from .. import benchcli

    p = benchcli.bench_parser("mig", "Read MIG state through NVML and measure the GPU or MIG instance this "
                                     "process runs on (matmul and copy), next to the model of its profile.")
    args = p.parse_args(check.argv("argv", argv))
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

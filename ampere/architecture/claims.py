"""The chapter's claims-checked table: the seed articles' claims about the GA100, each with a verdict and
evidence computed from ``ampere.specs``.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "Claims checked". Pure Python: no torch,
no matplotlib.
"""

from __future__ import annotations

from .. import specs


def claims_rows() -> list[dict[str, str]]:
    """The chapter's claims-checked table: claim, source, verdict, evidence computed from ``ampere.specs``.

    Chapter: *Architecture of the GA100*, "Claims checked".
    """
    from .. import views

    a100, v100 = specs.get("A100-SXM4-80GB"), specs.get("V100-SXM2-32GB")
    a6000, a2000 = specs.get("RTX-A6000"), specs.get("RTX-A2000-12GB")
    from .execution import issue_model

    issue = issue_model(a100)

    def tf(s: specs.GPUSpec, p: str, sparse: bool = False) -> float:
        return s.peak_flops(p, sparse) / 1e12

    rows = [
        ("54 billion transistors on 826 mm² in 7 nm; GV100 21.1 billion on 815 mm²", "seed000", "holds",
         f"GA100 {a100.transistors / 1e9:.1f} B, {a100.die_area_mm2:.0f} mm², {a100.process}; GV100 "
         f"{v100.transistors / 1e9:.1f} B, {v100.die_area_mm2:.0f} mm²"),
        ("The die has 128 SMs, the A100 uses 108; 6,912 CUDA cores and 432 tensor cores", "seed000", "holds",
         f"{a100.die_sms} on the die, {a100.sm_count} enabled: {a100.fp32_cores} FP32 lanes, "
         f"{a100.tensor_cores} tensor cores"),
        ("Each Ampere SM has four separate processing units (sub-cores), each orchestrating its own warps of "
         "32 threads", "seed000", "holds",
         f"{issue['schedulers per SM']} schedulers per SM, each issuing one warp instruction per clock to "
         f"{issue['FP32 lanes per scheduler']} FP32 lanes, so a warp FP32 instruction takes "
         f"{issue['clocks per warp FP32 instruction']:.0f} clocks; up to {issue['max resident warps per scheduler']} "
         "resident warps each"),
        ("Boost around 1.41 GHz gives 19.5 TFLOPS FP64, 156 TF32, 312 FP16, 624 INT8", "seed000",
         "holds, but 19.5 is FP64 on the tensor cores",
         f"FP64 {tf(a100, 'fp64'):.1f} (CUDA cores) / {tf(a100, 'fp64_tc'):.1f} (tensor cores); TF32 "
         f"{tf(a100, 'tf32'):.1f}; FP16 {tf(a100, 'fp16'):.1f}; INT8 {tf(a100, 'int8'):.1f} (dense); the 16-bit "
         f"rates of the CUDA cores, FP16 {tf(a100, 'fp16_simt'):.1f} and BF16 {tf(a100, 'bf16_simt'):.1f}, go unnamed"),
        ("Precision table: TF32 156 (312 sparse) ... INT4 1,248 (2,496 sparse)", "seed000",
         "holds (sparse column = 2:4 sparsity)",
         f"INT4 {tf(a100, 'int4'):.1f} / {tf(a100, 'int4', True):.1f} TOPS: NVIDIA doubles rounded figures"),
        ("up to 80 GB of HBM2 memory", "seed000", "imprecise",
         "40 GB is HBM2 (2.43 Gb/s/pin); the 80 GB card is HBM2e (3.19 Gb/s/pin)"),
        ("40 MB of L2 against 6 MB on the V100", "seed000", "holds",
         f"{a100.l2_bytes / 2**20:.0f} MiB vs {v100.l2_bytes / 2**20:.0f} MiB"),
        ("A100, A6000 and A2000 are all GA10x silicon with compute capability 8.0", "seed003", "wrong",
         f"A100: {a100.chip}, cc 8.0; A6000: {a6000.chip}, cc 8.6; A2000: {a2000.chip}, cc 8.6"),
        ("FP16 tensor: A100 ~312, A6000 ~155, A2000 ~64 TFLOPS", "seed003", "mixes dense and sparse",
         f"dense {tf(a100, 'fp16'):.0f} / {tf(a6000, 'fp16'):.0f} / {tf(a2000, 'fp16'):.1f}; the A2000's "
         f"63.9 is its sparse figure ({tf(a2000, 'fp16', True):.1f})"),
        ("On tensor cores the A100 leads thanks to more memory bandwidth and more numerous tensor cores",
         "seed003", "half true",
         f"bandwidth {a100.hbm_bytes_per_s / 1e9:.0f} vs {a6000.hbm_bytes_per_s / 1e9:.0f} GB/s: yes; but "
         f"{a100.tensor_cores} vs {a6000.tensor_cores} tensor cores is only "
         f"{a100.tensor_cores / a6000.tensor_cores:.2f}x, against {tf(a100, 'fp16') / tf(a6000, 'fp16'):.2f}x "
         "the FP16 rate: each GA100 tensor core does twice the FMA per clock"),
        ("FP64: 9.7 TFLOPS vs 0.6 for the A6000, a 16x gap", "seed003", "holds",
         f"{tf(a100, 'fp64'):.2f} vs {tf(a6000, 'fp64'):.3f} = {tf(a100, 'fp64') / tf(a6000, 'fp64'):.1f}x "
         "(GA102 runs FP64 at 1/64 of FP32)"),
        ("A6000 38.7 TFLOPS FP32 against 19.5 for the A100", "seed003", "holds",
         f"{tf(a6000, 'fp32'):.1f} vs {tf(a100, 'fp32'):.1f}: 128 FP32 lanes per SM on GA102, 64 on GA100"),
        ("The A100 is supported from CUDA 11.0 (compute capability 8.0)", "seed001", "holds",
         f"cc {a100.compute_capability[0]}.{a100.compute_capability[1]}"),
    ]
    return [{"claim": c, "source": views.cite_label(k), "verdict": v, "evidence": e} for c, k, v, e in rows]

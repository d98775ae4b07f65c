"""The chapter's claims-checked table: the source articles' claims about TF32, each with a verdict and evidence
computed by the package (formats from their bits, peaks from :mod:`ampere.specs`, the published timings with the
interval their printed digits allow, the range census), so that a number in the table cannot drift from the
chapter's own tables.

Chapter: *TF32 and the precision formats* (book/tf32.ipynb), "Claims checked". Pure Python/NumPy.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import check
from .dynamic_range import gradient_like_values, range_census
from .formats import FORMATS
from .throughput import peak_ratio, published_tf32, published_tf32_bounds
from .training import TrainingRun

#: The sample of the "Dynamic range" section: 200,000 magnitudes spread evenly over 30 decades, seed 0.
CENSUS_SAMPLE = {"n": 200_000, "log10_low": -25.0, "log10_high": 5.0, "seed": 0}


def _run(name: str, run: Any) -> TrainingRun:
    if not isinstance(run, TrainingRun):
        raise TypeError(f"{name} must be a TrainingRun (from train_digits_mlp), got {type(run).__name__}")
    return run


def claims_rows(runs: Sequence[TrainingRun] | None = None) -> list[dict[str, str]]:
    """The chapter's claims-checked table: claim, source (author-year label), verdict, evidence. ``runs`` (the
    chapter's :func:`train_digits_mlp` runs, optional) adds to the training-quality row whether the emulated
    runs reach FP32's test accuracy within 2 points (a statement, not digits, so it reads the same on any
    machine).

    Chapter *TF32 and the precision formats*, "Claims checked".
    """
    from .. import specs, views

    runs = [] if runs is None else check.sequence("runs", runs, _run, min_len=0, max_len=100)
    a100 = specs.get("A100-SXM4-80GB")
    tf32, fp32, fp16 = FORMATS["tf32"], FORMATS["fp32"], FORMATS["fp16"]
    (notes,) = published_tf32()
    bounds = published_tf32_bounds(notes)
    census = range_census(gradient_like_values(**CENSUS_SAMPLE), "fp16")
    cite = views.cite_label

    def tf(p: str, sparse: bool = False) -> float:
        return a100.peak_flops(p, sparse) / 1e12

    emulated = {r.precision: r.test_accuracy for r in runs if r.backend == "emulated"}
    trained = ""
    if "fp32" in emulated and len(emulated) > 1:  # a statement that holds or fails on any machine, no digits
        close = all(abs(acc - emulated["fp32"]) <= 0.02 for acc in emulated.values())
        others = " and ".join(p.upper() for p in emulated if p != "fp32")
        trained = (f"; the digits MLP of this chapter trains with {others} to "
                   f"{'within' if close else 'more than'} 2 points of FP32's test accuracy")
    lo, hi = bounds["speedup"]
    rows = [
        ("TF32 is a 19-bit format: 8 exponent bits like FP32, 10 mantissa bits like FP16, 1 sign bit", "seed000",
         "holds", f"1 + {tf32.exponent_bits} + {tf32.mantissa_bits} = {tf32.bits} bits, stored in a 32-bit FP32 "
         f"word; u = {tf32.unit_roundoff:.2e}, FP16's"),
        ('TF32 gives "about 4x" on dense FP32 matrix multiplications', "seed000",
         "understated for a matmul, overstated end to end",
         f"one large matmul: peak ratio {peak_ratio('A100-SXM4-80GB'):.0f}x dense on an A100, the published "
         f"{notes.params['n']}³ timings give {lo:.1f}x to {hi:.1f}x ({cite(notes.source)}); a whole training step: "
         f'"approx 2x" per PyTorch\'s maintainers ({cite("pytorch61890")})'),
        ('the published FP32 matmul runs at the 19.5 TFLOP/s peak ("1.00x")', notes.source,
         "not resolved by the data",
         f'"{notes.figure("fp32_time_s"):g} s" has two significant digits: {bounds["fp32_ratio_to_peak"][0]:.2f} to '
         f"1.00 of the peak (the peak caps the interval's upper end, {bounds['fp32_ratio_to_peak'][1]:.2f})"),
        ('... "without changing a line of code": PyTorch and TensorFlow switch to TF32 automatically as soon as an '
         "A100 is detected", "seed000", "outdated for PyTorch",
         "true for TensorFlow and for PyTorch 1.7 to 1.11; PyTorch 1.12 and later keep matmuls in FP32 unless "
         "asked (convolutions still use TF32)"),
        ("TF32 accelerates existing FP32 workloads with no code change, through automatic promotion in libraries "
         "such as cuBLAS", "seed001", "wrong as stated",
         f"cuBLAS uses TF32 only when the caller sets a TF32 math mode or compute type ({cite('nvidiacublas')}); "
         "the framework decides"),
        ("TF32 offers the range of FP32 with the speed of FP16", "seed001", "half true",
         f"range: same 8-bit exponent, the same {fp32.normal_range_decades:.1f} decades of normal numbers as FP32 "
         f"(down to the smallest subnormal {tf32.range_decades:.1f} against {fp32.range_decades:.1f}); speed: the "
         f"TF32 peak is {peak_ratio('A100-SXM4-80GB', 'tf32', 'fp16'):.2f} x the FP16 peak on an A100"),
        ("TF32 Tensor Core: 156 TFLOPS, 312 with sparsity", "seed000", "holds",
         f"{tf('tf32'):.1f} dense, {tf('tf32', True):.1f} with 2:4 sparsity: a bare \"312 TFLOPS TF32\" is the "
         f"sparse figure ({peak_ratio('A100-SXM4-80GB', sparse=True):.0f}x FP32)"),
        ("FP16, with its 5-bit exponent, saturates and loses gradients in the extreme zones; TF32 keeps FP32's "
         "range", "seed000", "holds",
         f"on 30 decades of values FP16 flushes {100 * census['zero']:.1f} % to zero and overflows "
         f"{100 * census['overflow']:.1f} % ({fp16.normal_range_decades:.1f} decades of normal numbers); TF32 and "
         "BF16 lose none"),
        ("no documented loss of training quality on the models tested", "seed000", "consistent",
         f"NVIDIA reports matched accuracy ({cite('nvidia2021tf32training')}){trained}; linear algebra outside deep "
         f"learning can suffer ({cite('pytorch67384')})"),
    ]
    return [{"claim": c, "source": cite(k), "verdict": v, "evidence": e} for c, k, v, e in rows]

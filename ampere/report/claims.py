"""Why identical GPUs differ, and what it costs: published pairs and model factors (the chapter's
variation table), the price of a throughput gap, and the claims-checked table of the chapter.

Pure: no torch, no matplotlib. Chapter: *The reference check* (book/reference-check.ipynb),
"Why identical hardware differs" and "Claims checked".
"""

from __future__ import annotations

from typing import Any

from .. import check, specs
from .comparison import FLAG_THRESHOLD

#: Published measurements that differ from a matching one in one factor (or, where said, in several at
#: once: "confounded"). Each pair names two records of ``ampere/data/published/matmul.json``; ``{m_w}``,
#: ``{r_w}`` (power limits, W) and ``{m_gbs}``, ``{r_gbs}`` (HBM GB/s) in a factor are read from ``ampere.specs``
#: for the GPUs of the measured and the reference record.
_PUBLISHED_PAIRS: tuple[dict[str, str], ...] = (
    {"factor": "form factor: PCIe {m_w} W vs SXM4 {r_w} W (confounded: the two runs also differ in HBM "
               "bandwidth, {m_gbs} vs {r_gbs} GB/s, and in software version)",
     "what": "best BF16 matmul of a shape search",
     "reference": "mamf-a100-sxm4-80gb-bf16", "measured": "mamf-a100-pcie-80gb-bf16"},
    {"factor": "input data (all zeros vs random normal)", "what": "FP16 matmul 8192^3 on an A100 (cuBLAS)",
     "reference": "he2024-a100-fp16-8192-zeros", "measured": "he2024-a100-fp16-8192-randn"},
    {"factor": "software and re-measurement (two revisions of one table)", "what": "best BF16 matmul, A100 SXM4",
     "reference": "mamf-a100-sxm4-80gb-bf16", "measured": "mamf-v1-a100-sxm4-80gb-bf16"},
)


def _published_matmul(record_id: str) -> tuple[float, Any]:
    """(TFLOP/s, record) of a published matmul record, by id."""
    from .. import gemm, results

    for rec in results.records(benchmark="matmul", kind="published"):
        if rec.id == record_id:
            return gemm.matmul_tflops(rec), rec
    raise ValueError(f"no published matmul record {record_id!r} in ampere/data/published")


def variation_rows(short: bool = False) -> list[dict[str, Any]]:
    """Factors that make identical GPUs differ, each with a magnitude the package can show.

    Published pairs (same GPU family, one factor changed) and model factors (a MIG 7g instance has 98 of
    the 108 SMs; the H100's datasheet tensor peaks are computed at 1830 MHz, below its 1980 MHz maximum boost
    clock). ``ratio`` is the lower figure over the higher one; published pairs also give ``measured_tflops``
    and ``reference_tflops``. With ``short``, printable rows for the chapter's table: the factor's name, the
    example, the ratio (3 decimals) and the author-year label of the source. Chapter: *The reference check*,
    "Inside one GPU".
    """
    from ..views import cite_label, source_text

    if check.boolean("short", short):
        return [{"factor": r["factor"].split(" (")[0].split(":")[0], "example": r["example"],
                 "ratio": f"{r['ratio']:.3f}", "source": r["label"]} for r in variation_rows()]

    rows = []
    for pair in _PUBLISHED_PAIRS:
        ref, ref_rec = _published_matmul(pair["reference"])
        meas, meas_rec = _published_matmul(pair["measured"])
        cited = source_text(meas_rec) if meas_rec.source == ref_rec.source else \
            f"{source_text(meas_rec)}; {source_text(ref_rec)}"
        m_spec, r_spec = specs.get(meas_rec.gpu), specs.get(ref_rec.gpu)
        factor = pair["factor"].format(m_w=m_spec.tdp_w, r_w=r_spec.tdp_w, m_gbs=f"{m_spec.hbm_bytes_per_s / 1e9:.0f}",
                                       r_gbs=f"{r_spec.hbm_bytes_per_s / 1e9:.0f}")
        rows.append({"factor": factor, "example": f"{pair['what']}: {meas:.1f} vs {ref:.1f} TFLOP/s",
                     "ratio": meas / ref, "source": cited, "measured_tflops": meas, "reference_tflops": ref,
                     "label": cite_label(meas_rec.source)})
    try:
        from .. import mig_geometry

        full = specs.get("A100-SXM4-80GB")
        sms = mig_geometry.instance_peaks(full, "7g.80gb").sms
        rows.append({"factor": "MIG mode (the largest instance, 7g.80gb)",
                     "example": f"{sms} of {full.sm_count} SMs: the dense peak of the instance",
                     "ratio": sms / full.sm_count, "source": "model (ampere.mig_geometry)",
                     "label": "model"})
    except (ImportError, AttributeError, ValueError):
        pass
    h100 = specs.get("H100-SXM5-80GB")
    rows.append({"factor": "datasheet peak clock vs maximum boost clock",
                 "example": f"H100 tensor peaks computed at {h100.tensor_clock_hz / 1e6:.0f} MHz, "
                            f"maximum boost {h100.boost_clock_hz / 1e6:.0f} MHz",
                 "ratio": h100.tensor_clock_hz / h100.boost_clock_hz,
                 "source": "model (ampere.specs; the clock at which the datasheet's tensor peaks are computed, "
                           "not a clock measured under load)", "label": "model"})
    for r in rows:
        r["below"] = 1 - r["ratio"]
        r["flagged at 10 %"] = r["below"] > FLAG_THRESHOLD
    return rows


# ---------------------------------------------------------------------------------------------------------
# What a gap costs, and the claims checked
# ---------------------------------------------------------------------------------------------------------


def gap_cost(gpus: int, gap: float, price_per_gpu_hour: float, hours: float = 365 * 24.0) -> dict[str, float]:
    """What a throughput gap costs a cluster: GPU-hours lost and their price over ``hours`` (a year).

    ``gap`` is the fraction of throughput lost (0.10 for 10 %); ``gpus`` at most 10 million, the price at
    most 10,000 USD per GPU-hour and ``hours`` at most a century (bounds of sense, not of arithmetic).
    Chapter: *The reference check*.
    """
    gpus = check.positive_int("gpus", gpus, maximum=10_000_000)
    price_per_gpu_hour = check.positive("price_per_gpu_hour", price_per_gpu_hour, maximum=10_000.0)
    hours = check.positive("hours", hours, maximum=100 * 365 * 24)
    gap = check.real("gap", gap, minimum=0.0)
    if gap >= 1:
        raise ValueError(f"gap={gap!r} must be a fraction in [0, 1) (0.10 = 10 % of throughput lost)")
    lost = gpus * hours * gap
    return {"gpu_hours_lost": lost, "cluster_hours_lost": hours * gap, "dollars": lost * price_per_gpu_hour}


#: The price the chapter's cost arithmetic uses: the seed's 2026 A100 80GB rental range.
GAP_PRICE_QUOTE = "seed003-a100-80gb"


#: (bad record, good record or None for the record's own expected figure, figure name) of each published case
_CASES: tuple[tuple[str, str | None, str], ...] = (
    ("nccl949-a100-vm-acs-redirect", "nccl949-a100-vm-acs-fixed", "busbw_gb_per_s"),
    ("nccl412-a800-nic-through-cpu", "nccl412-a800-nic-on-gpu-switch-gdr", "busbw_gb_per_s"),
    ("nccl439-a100-two-nics-one-link", None, "bandwidth_gb_per_s"),
)


def case_rows() -> list[dict[str, Any]]:
    """Published cases where one configuration setting cost real bandwidth between nodes: the setting, the
    bandwidth before and after (or expected), the fraction lost, and its source (``config-case`` records).
    Chapter: *The reference check*, "Published cases"."""
    from .. import results
    from ..views import cite_label

    recs = {r.id: r for r in results.records(benchmark="config-case", kind="published")}
    rows = []
    for bad_id, good_id, fig in _CASES:
        bad = recs[bad_id]
        good = recs[good_id].figures[fig] if good_id else bad.figures[f"expected_{fig}"]
        rows.append({"setting": bad.params["setting"], "system": bad.gpu, "wrong": bad.params["state"],
                     "GB/s wrong": bad.figures[fig], "GB/s right": good, "lost": 1 - bad.figures[fig] / good,
                     "source": cite_label(bad.source)})
    return rows


def claims_rows() -> list[dict[str, str]]:
    """The chapter's claims-checked table: the source article's claims about the reference-architecture gap,
    each with a verdict and the evidence the package computes. Chapter: *The reference check*."""
    from .. import pricing
    from ..views import cite_label
    from .config_checks import step_shares, throughput_loss
    from .config_judges import Verdict

    quote = pricing.quote(GAP_PRICE_QUOTE)
    week = gap_cost(1000, 0.10, quote.low, hours=7 * 24)
    lo, hi = gap_cost(1000, 0.10, quote.low), gap_cost(1000, 0.10, quote.high)
    cases = case_rows()
    shares = step_shares("H100-SXM5-80GB")
    step = [throughput_loss(Verdict("fail", "", resource="network", loss=(c["lost"], c["lost"])), shares)[0]
            for c in cases]
    src, bench, exemplar = cite_label("seed004"), cite_label("nvidiadgxcbench"), cite_label("nvidiaexemplar2026")
    return [
        {"claim": "Partner clusters with identical GPUs train 8-12 % slower than NVIDIA's reference "
                  "architecture (same job, model, global batch)", "source": src,
         "verdict": "reported, not reproducible here",
         "evidence": f"NVIDIA's Exemplar bar is > 95 % of the baseline on every workload ({exemplar}); one "
                     f"wrong setting costs {100 * min(c['lost'] for c in cases):.0f}-"
                     f"{100 * max(c['lost'] for c in cases):.0f} % of inter-node bandwidth, "
                     f"{100 * min(step):.1f}-{100 * max(step):.1f} % of a modelled H100 training step on DGX H100 "
                     "networking: two or three such settings add up to the gap"},
        {"claim": "A 10 % gap on 1000 accelerators is tens of hours of compute every week", "source": src,
         "verdict": "holds", "evidence": f"{week['gpu_hours_lost']:,.0f} GPU-hours = "
         f"{week['cluster_hours_lost']:.1f} hours of the whole cluster per week"},
        {"claim": "... hundreds of thousands of dollars of lost performance per year", "source": src,
         "verdict": "holds (understated)", "evidence": f"{lo['dollars'] / 1e6:.2f}-{hi['dollars'] / 1e6:.2f} million USD "
         f"per year at {quote.low:.2f}-{quote.high:.2f} USD per GPU-hour ({cite_label(quote.source)}); more on H100"},
        {"claim": "The gap comes from configuration (network stack, NVLink/InfiniBand, Linux kernel, NUMA), "
                  "not from the hardware", "source": src, "verdict": "consistent",
         "evidence": "each published case found is a setting or a placement on the PCIe tree (ACS, the "
                     "peer-memory module, two NICs behind one link), not a slower chip "
                     f"({', '.join(c['source'] for c in cases)})"},
        {"claim": "NVIDIA compares partner deployments with a reference architecture for H100, GB200 NVL72 and "
                  "GB300 NVL72", "source": src, "verdict": "holds for H100 and GB200 NVL72",
         "evidence": f"Exemplar test suites exist for GB300, GB200, B300, B200 and H100 ({exemplar}); H100 "
                     "baselines come from the DGX H100 reference architecture, GB200 from the GB200 NVL72 one, "
                     f"GB300 from 'systems equipped with' GB300 ({bench})"},
    ]

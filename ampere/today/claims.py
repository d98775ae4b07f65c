"""The seeds' claims about today's A100 and its alternatives (``ampere/data/tables/today-claims.json``),
each with a verdict and evidence computed by the calculator and the shared models.

Chapter: *The A100 today* (book/a100-today.ipynb), "Claims checked". Pure Python: no torch, no
matplotlib.
"""

from __future__ import annotations

from typing import Any

from .. import results, specs
from .a800 import a800_spec
from .calculator import plan
from .catalogue import SEED_GPUS, shape_of
from .prices import hours_for_budget, seed_prices
from .workload import GPUPlan, Workload


def _fits_one(model: str, task: str, gpu: str = "A100-SXM4-80GB", **kw: Any) -> GPUPlan:
    return plan(Workload(model, task, max_cards=1, **kw), gpu)


def claims_rows() -> list[dict[str, str]]:
    """The seeds' claims about today's A100 and its alternatives, each with a computed verdict.

    The claims are data (``ampere/data/tables/today-claims.json``: an English rendering, the French
    original, the article and where in it); the verdicts and evidence are computed here. Capacity figures
    use the same calls as the HBM chapter (``ampere.memory.finetune_memory`` with the book's LoRA rank and
    sequence length, ``ampere.memory.max_trainable_params`` with the book's runtime reserve), so both
    chapters print the same numbers. Market claims (second-hand prices, production dates, the B200)
    cannot be computed by the package: they are marked "unverified market claim" or "unverified".
    Chapter: *The A100 today*, "Claims checked".
    """
    from .. import gemm, memory, views

    a100, h100, h200 = specs.get("A100-SXM4-80GB"), specs.get("H100-SXM5-80GB"), specs.get("H200-SXM-141GB")
    a6000, a2000 = specs.get("RTX-A6000"), specs.get("RTX-A2000-12GB")
    tf = lambda s, p: s.peak_flops(p) / 1e12  # noqa: E731
    prices = seed_prices()
    reserve = memory.runtime_reserve(a100)
    a6k_train = tf(a6000, "bf16") / tf(a100, "bf16")
    a6k_bw = a6000.hbm_bytes_per_s / a100.hbm_bytes_per_s

    def lora_ratio() -> float:
        w = Workload("7B", "lora", max_cards=1)
        return plan(w, a6000).tokens_per_s / plan(w, a100).tokens_per_s

    def h100_range() -> tuple[str, str]:
        mamf = gemm.mamf_flops(h100)[0] / gemm.mamf_flops(a100)[0]
        return "holds as a range", (f"memory-bound decoding {h100.hbm_bytes_per_s / a100.hbm_bytes_per_s:.2f}x "
                                    f"(bandwidth); dense BF16 peak {tf(h100, 'bf16') / tf(a100, 'bf16'):.2f}x; "
                                    f"best published BF16 matmul {mamf:.2f}x")

    def serve() -> tuple[str, str]:
        p30 = _fits_one("30B", "inference", weights="int8", context=0)
        p70 = _fits_one("70B", "inference", weights="int4", context=0)
        return ("holds for the weights" if p30.feasible and p70.feasible else "does not hold",
                f"weights {p30.memory_bytes / 1e9:.1f} GB and {p70.memory_bytes / 1e9:.1f} GB of "
                f"{p30.capacity_bytes / 1e9:.1f} GB usable; KV cache comes on top")

    def qlora() -> tuple[str, str]:
        q70 = memory.finetune_memory("70B", "qlora").total_bytes
        usable = memory.usable_bytes(a100)
        plan70 = _fits_one("70B", "qlora")
        return ("holds" if q70 <= usable and plan70.feasible else "does not hold",
                f"{q70 / 1e9:.1f} GB of {usable / 1e9:.1f} GB usable (rank-{memory.DEFAULT_LORA_RANK} adapters, "
                f"{memory.DEFAULT_FINETUNE_SEQ} tokens, full recomputation; the planner's layout: "
                f"{plan70.memory_bytes / 1e9:.1f} GB)")

    def full13() -> tuple[str, str]:
        cards = memory.min_gpus_zero(shape_of("13B").params, a100, 3, reserve_bytes=reserve)
        plan13 = plan(Workload("13B", "full-finetune"), a100)
        return ("does not hold with mixed Adam",
                f"16 bytes per parameter: at most {memory.max_trainable_params(a100) / 1e9:.1f}B before "
                f"activations; a 13B needs {cards} cards with ZeRO-3 before activations, and the planner "
                f"{plan13.cards} with activations and Megatron-LM's 18 bytes")

    def a7b() -> tuple[str, str]:
        q7 = _fits_one("7B", "inference", gpu="RTX-A2000-12GB", weights="int4", context=4096)
        return ("holds" if q7.feasible else "does not hold",
                f"7B in int4 with 4096 tokens of KV cache: {q7.memory_bytes / 1e9:.1f} GB of "
                f"{q7.capacity_bytes / 1e9:.1f}")

    def a3b() -> tuple[str, str]:
        lora = _fits_one("3B", "lora", gpu="RTX-A2000-12GB").memory_bytes
        return ("only with LoRA/QLoRA", f"full mixed-Adam training: at most "
                f"{memory.max_trainable_params(a2000) / 1e9:.2f}B; LoRA of a 3B: {lora / 1e9:.1f} GB")

    def hours() -> tuple[str, str]:
        hs = [(g, *hours_for_budget(100, g, prices)) for g in SEED_GPUS]
        return "holds (arithmetic)", "; ".join(f"{g}: {lo:.0f}-{hi:.0f} h" for g, lo, hi in hs)

    def a800() -> tuple[str, str]:
        s = a800_spec()
        return "holds (press sources)", (f"NVLink {s.nvlink_bytes_per_s / 1e9:.0f} instead of "
                                         f"{a100.nvlink_bytes_per_s / 1e9:.0f} GB/s (press reports of distributor "
                                         "listings)")

    verdicts = {
        "h100-2-3x": h100_range,
        "b200-10x": lambda: ("unverified", "the B200 is not in the package's catalogue"),
        "fp8-2x": lambda: ("misattributed", f"H100 BF16 alone is {tf(h100, 'bf16') / tf(a100, 'bf16'):.1f}x the A100 "
                                            f"peak; FP8 doubles that again ({tf(h100, 'fp8') / tf(a100, 'bf16'):.1f}x);"
                                            " the gap is not FP8 alone"),
        "bandwidth": lambda: ("holds", f"{a100.hbm_bytes_per_s / 1e12:.3f} / {h100.hbm_bytes_per_s / 1e12:.2f} / "
                                       f"{h200.hbm_bytes_per_s / 1e12:.1f} TB/s"),
        "nvlink": lambda: ("holds (bidirectional totals)",
                           f"{a100.nvlink_bytes_per_s / 1e9:.0f} vs {h100.nvlink_bytes_per_s / 1e9:.0f} GB/s; per "
                           f"direction {a100.nvlink_bytes_per_s / 2e9:.0f} vs {h100.nvlink_bytes_per_s / 2e9:.0f}"),
        "per-watt": lambda: ("holds on peaks", f"dense BF16 per watt: A100 {tf(a100, 'bf16') / a100.tdp_w:.2f}, H100 "
                                               f"{tf(h100, 'bf16') / h100.tdp_w:.2f} TFLOP/s per W"),
        "serve-30b-70b": serve, "qlora-70b": qlora, "full-13b": full13,
        "market": lambda: ("unverified market claim",
                           "prices and production dates are not something the package can compute"),
        "a6000-65pct": lambda: ("optimistic", f"dense BF16 peak ratio {a6k_train:.0%}; bandwidth ratio {a6k_bw:.0%}; "
                                              f"the planner, LoRA of a 7B on one card each: {lora_ratio():.0%}"),
        "a6000-80-90": lambda: ("does not hold on either roof",
                                f"compute {a6k_train:.0%}, bandwidth {a6k_bw:.0%}; price ratio "
                                f"{prices['RTX-A6000'].mid / prices['A100-SXM4-80GB'].mid:.0%} at mid-range"),
        "a6000-20b": lambda: ("does not hold for full training",
                              f"mixed Adam: at most {memory.max_trainable_params(a6000) / 1e9:.1f}B per A6000 before "
                              f"activations; a 20B fits only for inference "
                              f"({memory.weight_bytes(20e9, 'bf16') / 1e9:.0f} GB of bf16 weights)"),
        "a2000-7b": a7b, "a2000-3b": a3b, "hours-100": hours, "a800": a800,
    }
    rows = []
    for claim in results.table("today-claims")["rows"]:
        if claim["id"] not in verdicts:
            raise ValueError(f"claim {claim['id']!r} of today-claims.json has no computed verdict; known: "
                             f"{', '.join(verdicts)}")
        verdict, evidence = verdicts[claim["id"]]()
        rows.append({"claim": claim["claim"], "quote_fr": claim["quote_fr"], "seed": claim["source"],
                     "source": views.cite_label(claim["source"]), "verdict": verdict, "evidence": evidence})
    return rows

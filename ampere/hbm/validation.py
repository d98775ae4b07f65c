"""The chapter's models checked against held-out published figures: ``python -m ampere validate hbm``.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb). Registered in ``ampere.cli.VALIDATIONS``.
Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from .. import memory, specs
from .bandwidth import bandwidth_table
from .common import GB, MiB, _catalogue
from .published import published_l2_sweeps, zero_figure1
from .roofline import MODELS


def validate_models() -> tuple[str, bool]:
    """Check this chapter's models against published figures; ``(report, passed)`` for ``ampere validate``.

    Held-out targets (never used to set a constant): datasheet bandwidths versus the interface derivation,
    the ZeRO paper's Figure 1, the parameter counts of GPT-3 and LLaMA 33B, and the knee of every
    published L2 sweep of a catalogue GPU against its L2 size.
    """
    lines, ok = [], True

    def check_(label: str, passed: bool, detail: str) -> None:
        nonlocal ok
        ok &= passed
        lines.append(f"{'ok  ' if passed else 'FAIL'} {label}: {detail}")

    for row in bandwidth_table(specs.names()):
        check_(f"bandwidth {row['gpu']}", abs(row["ratio"] - 1) <= 0.005,
               f"derived {row['derived_bytes_per_s'] / 1e9:.1f} GB/s vs datasheet "
               f"{row['datasheet_bytes_per_s'] / 1e9:.1f} GB/s" + (f" ({row['note']})" if row["note"] else ""))
    for z in zero_figure1():
        ours = memory.zero_bytes_per_param(z.stage, z.data_parallel).total * z.params / GB
        check_(f"ZeRO stage {z.stage}", abs(ours - z.per_gpu_gb) <= 0.05 + 1e-9,
               f"{ours:.2f} GB vs {z.per_gpu_gb} GB in {z.where}")
    # published sizes: brown2020gpt3 Table 2.1 (175.0B), touvron2023llama Table 2 (32.5B)
    for name, published in (("gpt3-175b", 175.0e9), ("llama-33b", 32.5e9)):
        p = MODELS[name].params
        check_(f"parameters {name}", abs(p / published - 1) <= 0.005,
               f"{p / 1e9:.2f}B from the shape vs {published / 1e9:.1f}B published")
    for sw in published_l2_sweeps():  # the catalogue's GPUs (an H100 PCIe sweep is shown, not judged)
        if _catalogue(sw.gpu) is None:
            continue
        k = sw.knee()
        check_(f"L2 knee {sw.gpu}", k.within,
               f"knee at {k.knee_bytes / MiB:.1f} MiB = {k.ratio_to_l2:.2f} x its {sw.l2_bytes / MiB:.0f} MiB L2"
               if k.visible else "no visible knee")
    return "\n".join(lines), ok

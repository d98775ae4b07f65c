"""What each reader environment (CPU, Colab T4, L4, RTX cards, A100, H100) can measure, derived from the specs.

Shown by the introduction (book/intro.md); part of the chapter *Architecture of the GA100*. Pure Python:
no torch, no matplotlib.
"""

from __future__ import annotations

from .. import specs
from ..tables import markdown_table


_ENVIRONMENTS = (
    ("CPU only (CI, laptop)", None),
    ("Colab free tier (T4)", "T4"),
    ("L4 (cloud)", "L4"),
    ("RTX A2000 12GB", "RTX-A2000-12GB"),
    ("RTX A6000", "RTX-A6000"),
    ("A100 80GB SXM (cloud)", "A100-SXM4-80GB"),
    ("H100 / H200 SXM", "H100-SXM5-80GB"),
)


def capability_rows() -> list[dict[str, str]]:
    """What each reader environment can measure, derived from the specs (compute capability and fields).

    Shown by the introduction (book/intro.md); module of the chapter *Architecture of the GA100*.
    """
    rows = []
    for label, name in _ENVIRONMENTS:
        if name is None:
            rows.append({"machine": label, "compute capability": "-", "TF32": "model", "BF16 tensor": "model",
                         "FP8": "model", "2:4 sparse": "model", "MIG": "model", "NVLink": "gloo lab + model",
                         "HBM": "model"})
            continue
        spec = specs.get(name)
        cc = spec.compute_capability

        def yes(flag: bool) -> str:
            return "measure" if flag else "model"

        rows.append({
            "machine": label, "compute capability": f"{cc[0]}.{cc[1]}",
            "TF32": yes(spec.supports("tf32")), "BF16 tensor": yes(spec.supports("bf16")),
            # no chapter measures FP8 (yet): it is the model everywhere, and the row says where FP8 tensor
            # cores exist
            "FP8": "model (FP8 tensor cores)" if spec.supports("fp8") else "model",
            "2:4 sparse": yes(spec.sparse_2to4),
            "MIG": "read via NVML" if spec.mig_max_instances else "model",
            "NVLink": "with 2+ GPUs" if spec.nvlink_links else "gloo lab + model",
            "HBM": yes(True) if spec.memory_type.startswith("HBM") else "measure (GDDR)",
        })
    return rows


def capability_markdown() -> str:
    """:func:`capability_rows` as a Markdown table. Shown by the introduction (book/intro.md); module of the
    chapter *Architecture of the GA100*."""
    return markdown_table(capability_rows())

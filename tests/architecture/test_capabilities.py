"""ampere.architecture.capabilities: what each environment can measure."""

import pytest

from ampere import architecture as arch
from ampere import tables


def test_capability_rows_follow_the_specs():
    rows = {r["machine"]: r for r in arch.capability_rows()}
    assert rows["Colab free tier (T4)"]["TF32"] == "model" and rows["Colab free tier (T4)"]["compute capability"] == "7.5"
    assert rows["A100 80GB SXM (cloud)"]["2:4 sparse"] == "measure"
    # nothing measures FP8: the column is the model on every GPU, and says where FP8 tensor cores exist
    assert rows["H100 / H200 SXM"]["FP8"] == "model (FP8 tensor cores)" and rows["A100 80GB SXM (cloud)"]["FP8"] == "model"
    assert all(not r["FP8"].startswith("measure") for r in rows.values())
    md = arch.capability_markdown()
    assert md.count("\n") == len(rows) + 1 and md.startswith("| machine |")
    with pytest.raises(ValueError):
        tables.markdown_table([])

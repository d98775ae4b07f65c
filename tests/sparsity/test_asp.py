"""ampere.sparsity.asp: the ASP experiment on the digits (and its figure) and its configuration."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from ampere import sparsity as sp  # noqa: E402


def test_asp_experiment_small():
    res = sp.asp_experiment(sp.ASPConfig(hidden=(16, 8), epochs=2, finetune_epochs=1))
    rows = {r["method"]: r for r in res["rows"]}
    assert list(rows) == ["dense", "2:4 magnitude", "2:4 random", "unstructured 50% magnitude"]
    assert res["test_size"] + res["train_size"] == 1797
    for m in ("2:4 magnitude", "2:4 random"):
        assert rows[m]["zeros"] >= 0.5 and rows[m]["is_2to4"]
    assert rows["unstructured 50% magnitude"]["zeros"] >= 0.5
    assert all(0 <= r["acc_pruned"] <= 1 and r["correct_pruned"] == round(r["acc_pruned"] * res["test_size"])
               for r in res["rows"])
    summary = sp.asp_summary([res])
    assert summary["methods"] == list(rows)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    sp.plot_asp(ax, summary)
    plt.close(fig)


def test_asp_config_validation():
    with pytest.raises(ValueError, match="multiple of 4"):
        sp.ASPConfig(hidden=(30,))
    assert sp.ASPConfig(hidden=(np.int64(8),), epochs=np.int32(2)).hidden == (8,)
    with pytest.raises(TypeError, match="lr"):
        sp.ASPConfig(lr="0.01")
    with pytest.raises(ValueError, match="epochs"):
        sp.ASPConfig(epochs=0)
    with pytest.raises(ValueError, match="test_fraction"):
        sp.ASPConfig(test_fraction=1.5)

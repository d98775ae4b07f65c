"""ampere.sparsity.measure: the CPU comparison and the Linear sweep, its GPU path exercised on the CPU
(reference backend, out of memory, a failing backend); bad input refused."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from ampere import results  # noqa: E402
from ampere import sparsity as sp  # noqa: E402
from ampere.sparsity import measure  # noqa: E402


def test_cpu_unstructured_measurement_small():
    out = sp.measure_cpu_unstructured(size=64, tokens=16, max_time_s=0.2)
    assert set(out["median_s"]) == set(out["speedup_vs_dense"])
    assert out["speedup_vs_dense"]["dense BLAS"] == 1.0


def test_linear_sweep_reference_backend_on_cpu():
    shapes = (sp.LinearShape(8, 32, 16, "tiny"), sp.LinearShape(4, 64, 32))
    recs, notes = sp.linear_sweep(shapes, dtypes=("float32",), backends=("reference",), device="cpu",
                                  warmup_s=0.0, min_time_s=0.0, max_time_s=0.2,
                                  unstructured_shape=sp.LinearShape(8, 32, 16, "CSR"))
    kinds = [r["kind"] for r in recs]
    assert kinds.count("sparse") == 2 and kinds.count("compress") == 2 and kinds.count("unstructured") == 1
    assert all(r["derived"]["numerics_ok"] for r in recs if r["kind"] == "sparse")
    from ampere import device

    result = results.make_result("sparsity", device.probe(), {"test": True}, recs, notes)
    table = sp.sweep_table(result)
    assert {r["backend"] for r in table} == {"reference", "torch.sparse CSR"}
    assert all(r["speedup"] > 0 and r["model_bound"] is None for r in table)
    lines = sp.verdict(result)
    assert len(lines) == 1 and "reference" in lines[0] and "target" in lines[0]
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    sp.plot_sweep(ax, result)
    plt.close(fig)
    with pytest.raises(ValueError, match="backend"):
        sp.linear_sweep(shapes, backends=("magic",), device="cpu")
    with pytest.raises(ValueError, match="dtype"):
        sp.linear_sweep(shapes, dtypes=("int4",), backends=("reference",), device="cpu")


def test_linear_sweep_out_of_memory_retries_with_half_the_tokens(monkeypatch):
    # The CPU path treats MemoryError as the GPU path treats torch.cuda.OutOfMemoryError: the failed shape's
    # records are dropped and the shape is measured again with half the tokens.
    real = measure._reference_linear

    def fussy(values, col_idx):
        run = real(values, col_idx)

        def guarded(x):
            if x.shape[0] > 4:
                raise MemoryError("simulated out of memory")
            return run(x)
        return guarded

    monkeypatch.setattr(measure, "_reference_linear", fussy)
    recs, notes = sp.linear_sweep((sp.LinearShape(8, 32, 16, "tiny"),), dtypes=("float32",), backends=("reference",),
                                  device="cpu", warmup_s=0.0, min_time_s=0.0, max_time_s=0.2,
                                  unstructured_shape=None)
    assert {r["tokens"] for r in recs} == {4} and [r["kind"] for r in recs] == ["dense", "compress", "sparse"]
    assert any("out of memory" in n and "4 tokens" in n for n in notes)


def test_linear_sweep_a_failing_backend_is_noted_not_raised(monkeypatch):
    def broken(values, col_idx):
        raise RuntimeError("CUDA error: operation not supported on this shape\nmore detail")

    monkeypatch.setattr(measure, "_reference_linear", broken)
    recs, notes = sp.linear_sweep((sp.LinearShape(8, 32, 16, "tiny"),), dtypes=("float32",), backends=("reference",),
                                  device="cpu", warmup_s=0.0, min_time_s=0.0, max_time_s=0.2,
                                  unstructured_shape=None)
    assert [r["kind"] for r in recs] == ["dense"]  # the backend's partial records are dropped
    assert any(n.startswith("reference failed at 8x32->16") and "not supported on this shape" in n for n in notes)


def test_more_public_functions_refuse_bad_input():
    with pytest.raises(ValueError, match="multiple of 4"):
        sp.measure_cpu_unstructured(size=30)
    with pytest.raises(TypeError, match="tokens"):
        sp.measure_cpu_unstructured(size=32, tokens=8.0)
    with pytest.raises(TypeError, match="cfg"):
        sp.asp_experiment({"epochs": 1})
    with pytest.raises(ValueError, match="target"):
        sp.verdict({"records": [], "device": {}}, target=0)
    with pytest.raises(TypeError, match="shape"):
        sp.matmul_time_model("A100-SXM4-80GB", (1, 4096, 4096))

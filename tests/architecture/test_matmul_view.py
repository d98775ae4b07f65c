"""ampere.architecture.matmul_view: published, recorded and measured matmuls beside the dense peak."""

import matplotlib

matplotlib.use("Agg")

from ampere import architecture as arch  # noqa: E402


def test_published_matmul_view_reads_the_data_folder():
    # the transitional dict view reads ampere/data/published/matmul.json; no figure is typed in the module
    from ampere import gemm

    rows = arch.PUBLISHED_MATMUL
    assert rows and all(r["source"] for r in rows)
    data = {(r.gpu, r.params["precision"], gemm.matmul_tflops(r)) for r in gemm.published_matmul()}
    assert all((r["gpu"], r["precision"], r["tflops"]) in data for r in rows)
    mamf = [r for r in rows if r.get("kind") == "mamf"]
    assert {r["gpu"] for r in mamf} >= {"A100-SXM4-80GB", "H100-SXM5-80GB"}


def test_matmul_view_without_a_gpu_shows_recorded_and_published_numbers(monkeypatch):
    import matplotlib.pyplot as plt

    from ampere import device, tables

    shown = []
    monkeypatch.setattr(tables, "show_md", shown.append)
    monkeypatch.setattr(plt, "show", lambda: None)
    info = device.DeviceInfo("cpu", "test CPU")
    pts = arch.show_matmul(info)
    assert pts and {p.kind for p in pts} <= {"recorded", "published"} and all(p.source for p in pts)
    assert any(p.gpu.startswith("A100") for p in pts) and any(p.gpu.startswith("H100") for p in pts)
    assert all(0 < p.ratio < 1 for p in pts if p.ratio is not None)  # below the dense peak, every one
    assert not any("earlier revision" in p.source for p in pts)  # superseded revisions only in the dropdown
    assert any("{dropdown}" in s for s in shown) and not any("no recorded" in s.lower() for s in shown)
    plt.close("all")
    fake = [{"precision": "bf16", "n": 8192, "tflops": 250.0, "peak_tflops": 312.0},
            {"precision": "bf16", "n": 1024, "tflops": 90.0, "peak_tflops": 312.0}]
    here = [p for p in arch.matmul_points(device.DeviceInfo("cuda", "NVIDIA A100-SXM4-80GB",
                                                            spec_name="A100-SXM4-80GB"), fake)
            if p.kind == "measured"]
    assert [(p.what, p.source) for p in here] == [("bf16 8192³", "measured here")]  # small sizes left out

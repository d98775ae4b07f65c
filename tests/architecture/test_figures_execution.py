"""ampere.architecture.figures_execution and figures.show_staircase: the execution-model and quantisation figures
drawn, and the staircase measured through its whole code path on the CPU."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from ampere import architecture as arch  # noqa: E402


def test_execution_figures_draw_what_the_models_compute():
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4)
    div = arch.plot_divergence(axes[0], 20, 20)
    assert div["independent"][100] == pytest.approx(2.0, rel=1e-6) and div["coherent"][100] == 1.0
    occ = arch.plot_occupancy(axes[1])
    assert dict(occ)[32] == 64 and dict(occ)[64] == 32 and dict(occ)[255] == 8
    lat = arch.plot_latency_hiding(axes[2], cases=[("4 cycles", 4, 1), ("400 cycles", 400, 4)])
    assert lat["4 cycles"][16] == 100.0 and lat["400 cycles"][64] == pytest.approx(100 * 64 * 4 / 1600)
    roofs = arch.plot_three_roofs(axes[3])
    assert roofs[0]["bound"] == "overhead" and roofs[-1]["bound"] == "compute"
    plt.close(fig)
    fig, ax = plt.subplots()
    rows = arch.plot_staircase(ax, "A100-SXM4-80GB", [2304, 2368], 1536, 4096,
                               measured=[{"n": 2304, "tflops": 250.0}])
    assert [r["waves"] for r in rows] == [1, 2]
    assert sum(1 for line in ax.get_lines() if line.get_linestyle() == ":") == 1  # one wave edge
    plt.close(fig)


def test_staircase_sizes_and_arguments():
    assert arch.staircase_sizes(128, 512, 128) == [128, 256, 384, 512]
    with pytest.raises(ValueError, match="lo"):
        arch.staircase_sizes(512, 128)
    with pytest.raises(TypeError, match="step"):
        arch.staircase_sizes(128, 512, 64.0)


def test_show_staircase_measures_on_the_cpu_when_asked(monkeypatch):
    import matplotlib.pyplot as plt

    from ampere import device

    monkeypatch.setattr(plt, "show", lambda: None)
    info = device.probe()
    out = arch.show_staircase(info, measure=False, ns=[128, 256])
    assert out["gpu"] == "A100-SXM4-80GB" and out["measured"] == [] and len(out["model"]) == 2
    rows = arch.staircase_sweep([32, 48], m=64, k=32, precision="fp32", device="cpu", warmup_s=0.0,
                                min_time_s=0.0, max_time_s=0.05, info=info)
    assert [r["n"] for r in rows] == [32, 48] and all(r["tflops"] > 0 for r in rows)
    with pytest.raises(ValueError, match="precision"):
        arch.staircase_sweep([32], precision="fp12", device="cpu")
    with pytest.raises(ValueError, match="ns"):
        arch.staircase_sweep([], device="cpu")
    plt.close("all")

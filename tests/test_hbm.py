"""Unit tests of ampere.hbm (chapter: HBM and the memory hierarchy).

Hand-computed cases first (every expected number is worked out in a comment), then the published data and
the validation targets, then the measuring code and the views on the CPU with tiny sizes. The capacity
arithmetic the chapter uses is tested in tests/test_memory.py (ampere.memory).
"""

from __future__ import annotations

import json
import math
import sys
import time

import pytest

from ampere import hbm, memory, results, specs

GB = 1e9
MiB = 2**20


# ----------------------------------------------------------------------------------------------------
# Where the bandwidth comes from
# ----------------------------------------------------------------------------------------------------

def test_bandwidth_derivation_by_hand():
    rows = {r["gpu"]: r for r in hbm.bandwidth_table()}
    # A100 40GB: 5120 bits x 2.43 Gb/s / 8 = 1555.2 GB/s; 80GB SXM: 5120 x 3.186 / 8 = 2039.04 GB/s
    assert rows["A100-SXM4-40GB"]["derived_bytes_per_s"] == pytest.approx(1555.2e9)
    assert rows["A100-SXM4-80GB"]["derived_bytes_per_s"] == pytest.approx(2039.04e9)
    # A6000: 384 x 16 / 8 = 768 GB/s exactly
    assert rows["RTX-A6000"]["derived_bytes_per_s"] == pytest.approx(768e9)
    # every HBM stack is a 1024-bit interface; GDDR has no stacks
    assert {r["bits_per_stack"] for r in rows.values() if r["stacks"]} == {1024}
    assert rows["T4"]["bits_per_stack"] is None
    assert "inferred" in rows["H200-SXM-141GB"]["note"] and rows["A100-SXM4-80GB"]["note"] == ""


def test_hierarchy_table_a100():
    rows = {r["level"]: r for r in hbm.hierarchy_table("A100-SXM4-80GB")}
    assert rows["registers"]["capacity_bytes"] == 256 * 1024 * 108  # 27 MiB of registers
    assert rows["L2"]["capacity_bytes"] == 40 * 2**20
    assert rows["L2"]["bytes_per_s"] == pytest.approx(5120 * 1.41e9)  # 7.22 TB/s
    assert rows["DRAM (HBM2e)"]["bytes_per_s"] == 2039e9


# ----------------------------------------------------------------------------------------------------
# The chapter's models come from ampere.transformer
# ----------------------------------------------------------------------------------------------------

def test_models_are_transformer_presets():
    from ampere import transformer

    assert set(hbm.SIZE_CLASSES) == {"7B", "13B", "30B", "70B"}
    for cls, name in hbm.SIZE_CLASSES.items():
        assert hbm.MODELS[name] is transformer.PRESETS[name] is transformer.preset(cls)
    assert hbm.MODELS["llama2-7b"].params == 6_738_415_616  # exact released count (tests/test_transformer.py)
    assert hbm.MODELS["llama2-70b"].seq == 4096 and hbm.MODELS["gpt3-175b"].positions == "learned"


# ----------------------------------------------------------------------------------------------------
# Roofline and decoding
# ----------------------------------------------------------------------------------------------------

def test_roofline_ops_and_attainable():
    ops = {o.name: o for o in hbm.roofline_ops()}
    assert ops["vector add"].intensity == pytest.approx(1 / 6)  # 1 FLOP per 3 x 2 bytes
    assert ops["GEMV (decode, batch 1)"].intensity == pytest.approx(1.0, rel=1e-3)  # 2 FLOP per 2-byte weight
    assert ops["GEMM 4096^3"].intensity == pytest.approx(2 * 4096 / 6)
    a100 = specs.get("A100-SXM4-80GB")
    ridge = a100.ridge_point("bf16")
    assert hbm.attainable_flops(ridge * 10) == a100.peak_flops("bf16")
    assert hbm.attainable_flops(1.0) == pytest.approx(2039e9)
    with pytest.raises(ValueError):
        hbm.attainable_flops(-1)


def test_decode_bound_by_hand():
    d = hbm.decode_bound("7B", "A100-SXM4-80GB", weights="fp16")
    assert d.tokens_per_s == pytest.approx(2039e9 / (6_738_415_616 * 2))  # 151.3 tokens/s
    assert d.bound == "memory" and d.fits
    # int4 halves the bytes of int8: twice the tokens
    d8 = hbm.decode_bound("70B", "A100-SXM4-80GB", weights="int8")
    d4 = hbm.decode_bound("70B", "A100-SXM4-80GB", weights="int4")
    assert d4.tokens_per_s == pytest.approx(2 * d8.tokens_per_s)
    assert not hbm.decode_bound("70B", "A100-SXM4-80GB", weights="fp16").fits
    # a large batch shares each weight read: the step becomes compute-bound
    big = hbm.decode_bound("7B", "A100-SXM4-80GB", batch=1024)
    assert big.bound == "compute" and big.tokens_per_s_per_sequence < d.tokens_per_s
    # the KV cache adds bytes per step
    ctx = hbm.decode_bound("7B", "A100-SXM4-80GB", context=4096)
    assert ctx.kv_bytes == 4096 * 524_288 // 1 and ctx.tokens_per_s < d.tokens_per_s
    assert len(hbm.decode_table()) == 4 * 6 * 3


def test_compare_40_80():
    r = hbm.compare_gpus("A100-SXM4-80GB", "A100-SXM4-40GB")
    assert r["compute"] == 1.0 and r["capacity"] == 2.0 and r["l2"] == 1.0
    assert r["bandwidth"] == pytest.approx(2039 / 1555)


# ----------------------------------------------------------------------------------------------------
# L2 working set
# ----------------------------------------------------------------------------------------------------

def test_sweep_footprints():
    f = hbm.sweep_footprints(40 * 2**20, points=24)
    assert f[0] == 256 * 1024 and f == sorted(set(f))
    assert f[-1] == pytest.approx(160 * 2**20, rel=0.01)
    assert all(x % 4096 == 0 for x in f)
    with pytest.raises(ValueError):
        hbm.sweep_footprints(40 * 2**20, stop_factor=0.001)
    with pytest.raises(ValueError):
        hbm.sweep_footprints(0)


def test_l2_model():
    a100 = specs.get("A100-SXM4-80GB")
    cap = a100.l2_bytes
    y, notes = hbm.l2_sweep_model([cap / 2, cap, 2 * cap], "A100-SXM4-80GB")
    assert y[0] == y[1] == pytest.approx(5120 * 1.41e9)
    assert y[2] == pytest.approx(2039e9)  # ideal LRU: a cyclic sweep larger than the cache never hits
    yr, _ = hbm.l2_sweep_model([2 * cap], "A100-SXM4-80GB", policy="random")
    assert yr[0] == pytest.approx(1 / (0.5 / (5120 * 1.41e9) + 0.5 / 2039e9))
    _, notes = hbm.l2_sweep_model([1e6], "H200-SXM-141GB")
    assert any("ASSUMED" in n for n in notes)
    with pytest.raises(ValueError):
        hbm.l2_sweep_model([1e6], policy="fifo")


def test_find_knee_synthetic():
    l2 = 40 * 2**20
    f = hbm.sweep_footprints(l2, 30)
    y, _ = hbm.l2_sweep_model(f, "A100-SXM4-80GB", policy="lru")
    k = hbm.find_knee(f, y, l2)
    assert isinstance(k, hbm.Knee) and k.visible and k.within and 0.9 < k.ratio_to_l2 <= 1.2
    assert k["knee_bytes"] == k.knee_bytes and k.to_dict()["visible"] is True  # read by name, as a dict would
    flat = hbm.find_knee(f, [1e12] * len(f), l2)
    assert not flat.visible and flat.knee_bytes is None
    # a knee at half the L2 is visible but not within 25%
    early = hbm.find_knee(f, [5e12 if x < l2 / 2 else 1e12 for x in f], l2)
    assert early.visible and not early.within
    with pytest.raises(ValueError):
        hbm.find_knee([1, 2], [1, 2], l2)
    with pytest.raises(ValueError):
        hbm.find_knee([1, 2, 3], [1, -2, 3], l2)
    with pytest.raises(TypeError):
        hbm.find_knee(["a", "b", "c"], [1, 2, 3], l2)
    with pytest.raises(ValueError, match="l2_bytes"):
        hbm.find_knee(f, y, 0)


# ----------------------------------------------------------------------------------------------------
# Published data (ampere/data) and validation
# ----------------------------------------------------------------------------------------------------

def test_published_memory_records():
    stream, sweeps = hbm.published_stream(), hbm.published_l2_sweeps()
    recs = stream + [s.record for s in sweeps]
    assert len(recs) >= 8 and len({r.gpu for r in recs}) >= 3
    for r in recs:
        assert r.source == "ernstgpubenches" and r.where and "commit" in r.where
    a100 = hbm.published_stream("A100-SXM4-80GB")[0]
    # gpu-benches cuda-stream/a100_80.txt, last row: 1880 / 1769 / 1732 / 1759 GB/s (init, read, scale, triad)
    assert [a100.figure(f"{k}_gb_per_s") for k in ("write", "read", "scale", "triad")] == [1880, 1769, 1732, 1759]
    assert 0.85 < a100.figure("read_gb_per_s") * 1e9 / specs.get("A100-SXM4-80GB").hbm_bytes_per_s < 0.9
    for sw in sweeps:
        assert len(sw.footprints) == len(sw.bytes_per_s) >= 50
        assert list(sw.footprints) == sorted(sw.footprints)
        assert sw.label and "Ernst" in sw.label and "ernstgpubenches" not in sw.label  # no bib key on the page
    with pytest.raises(ValueError, match="no published L2 sweep"):
        hbm.published_l2_sweep("T4")
    with pytest.raises(TypeError):
        hbm.published_l2_sweep(4)


def test_h200_l2_is_the_catalogue_50_mib():
    # The chapter uses 50 MiB for the H200 (the H100 SXM5 configuration of GH100): the published sweep's
    # knee sits at 0.98 x 50 MiB, which 60 MiB (0.82 x) would not explain.
    sw = hbm.published_l2_sweep("H200-SXM-141GB")
    assert sw.l2_bytes == specs.get("H200-SXM-141GB").l2_bytes == 50 * MiB
    k = sw.knee()
    assert k.within and abs(k.ratio_to_l2 - 1) < 0.05
    assert abs(hbm.find_knee(sw.footprints, sw.bytes_per_s, 60 * MiB).ratio_to_l2 - 1) > 0.15


def test_zero_figure1_rows():
    rows = hbm.zero_figure1()
    assert [r.stage for r in rows] == [0, 1, 2, 3] and rows[0].source == "rajbhandari2020zero"
    for r in rows:
        ours = memory.zero_bytes_per_param(r.stage, r.data_parallel).total * r.params / GB
        assert ours == pytest.approx(r.per_gpu_gb, abs=0.05)


def test_validate_models_passes():
    text, ok = hbm.validate_models()
    assert ok, text
    assert "ZeRO stage 3" in text and "L2 knee H200-SXM-141GB" in text and "L2 knee A100-SXM4-80GB" in text


def test_model_path_does_not_import_torch():
    import subprocess

    code = "import sys, ampere.hbm as h; h.decode_bound('70B', weights='int4'); h.validate_models(); " \
           "print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("call,exc", [
    (lambda: hbm.decode_bound("7B", batch=0), ValueError),
    (lambda: hbm.decode_bound("7B", batch=1.0), TypeError),
    (lambda: hbm.decode_bound("7B", context=-1), ValueError),
    (lambda: hbm.decode_bound("7B", compute_precision="fp12"), ValueError),
    (lambda: hbm.decode_bound("llama-7b-v9"), ValueError),
    (lambda: hbm.decode_bound(7e9), TypeError),
    (lambda: hbm.roofline_ops(0), ValueError),
    (lambda: hbm.attainable_flops(float("nan")), ValueError),
    (lambda: hbm.sweep_footprints(2**20, points=0), ValueError),
    (lambda: hbm.l2_sweep_model("abc"), TypeError),
    (lambda: hbm.l2_sweep_model([0.0]), ValueError),
    (lambda: hbm.measure_bandwidth("cpu", kernels="copy"), TypeError),
    (lambda: hbm.measure_bandwidth("cpu", array_bytes=1.5), TypeError),
    (lambda: hbm.measure_bandwidth("tpu"), RuntimeError),
    (lambda: hbm.measure_bandwidth(3), TypeError),
    (lambda: hbm.measure_l2_sweep("cpu", footprints="64k"), TypeError),
    (lambda: hbm.measure_l2_sweep("cpu", total_bytes=0, footprints=[65536]), ValueError),
    (lambda: hbm.show_bandwidth(None, measure="no"), TypeError),
    (lambda: hbm.bandwidth_table("A100-SXM4-80GB"), TypeError),
    (lambda: hbm.bandwidth_table(["A100"]), ValueError),
    (lambda: hbm.attainable_flops(1.0, precision="fp12"), ValueError),
    (lambda: hbm.find_knee([1, 2, 3], [1, 2, 3], 1e6, tolerance=0), ValueError),
    (lambda: hbm.l2_sweep_model([1e6], policy=3), TypeError),
])
def test_bad_input_names_the_argument(call, exc):
    with pytest.raises(exc):
        call()


# ----------------------------------------------------------------------------------------------------
# Measurements on the CPU (tiny sizes): the same code path the GPU runs
# ----------------------------------------------------------------------------------------------------

def test_measure_bandwidth_cpu_counts_bytes():
    recs = hbm.measure_bandwidth("cpu", array_bytes=256 * 1024, min_samples=3, min_time_s=0.005, max_time_s=0.5)
    by = {r["params"]["kernel"]: r for r in recs}
    assert set(by) == set(hbm.KERNELS)
    n = 256 * 1024
    assert by["read"]["derived"]["bytes_moved"] == n
    assert by["write"]["derived"]["bytes_moved"] == n
    assert by["copy"]["derived"]["bytes_moved"] == 2 * n  # a copy reads N and writes N
    assert by["triad"]["derived"]["bytes_moved"] == 3 * n
    assert by["copy"]["derived"]["copied_bytes_per_s"] == pytest.approx(by["copy"]["derived"]["bytes_per_s"] / 2)
    assert by["read"]["derived"]["copied_bytes_per_s"] is None
    assert all(r["derived"]["pct_of_datasheet"] is None for r in recs)  # a CPU has no datasheet here
    assert all(r["derived"]["bytes_per_s"] > 0 for r in recs)
    rows = hbm.bandwidth_rows(recs)
    assert [r.kernel for r in rows] == list(hbm.KERNELS) and rows[0]["kernel"] == "read"
    with pytest.raises(ValueError, match="kernel"):
        hbm.measure_bandwidth("cpu", kernels=["memset"])


def test_kernels_compute_what_they_claim():
    import torch

    x, y = torch.arange(8.0), torch.empty(8)
    hbm._kernel_fn(hbm.KERNELS["copy"], [x, y])()
    assert torch.equal(x, y)
    b, c, a = torch.ones(4), torch.full((4,), 2.0), torch.empty(4)
    hbm._kernel_fn(hbm.KERNELS["triad"], [b, c, a])()
    assert a.tolist() == [2.0] * 4  # 1 + 0.5 * 2
    out = torch.empty(())
    hbm._kernel_fn(hbm.KERNELS["read"], [torch.arange(5.0), out])()
    assert out.item() == 10.0


def test_measure_l2_sweep_cpu():
    fps = [64 * 1024, 256 * 1024]
    recs = hbm.measure_l2_sweep("cpu", footprints=fps, total_bytes=1024 * 1024, min_samples=3,
                                min_time_s=0.005, max_time_s=0.5)
    assert [r["params"]["footprint_bytes"] for r in recs] == fps
    assert [r["params"]["repeats"] for r in recs] == [16, 4]  # fixed traffic: 1 MiB / footprint
    assert all(r["params"]["traffic_bytes"] == 1024 * 1024 for r in recs)
    f, y, l2 = hbm.sweep_rows(recs)
    assert f == fps and all(v > 0 for v in y) and l2 is None
    with pytest.raises(ValueError):
        hbm.measure_l2_sweep("cpu", footprints=[])


def test_l2_sweep_rounds_to_whole_chunks_and_keeps_traffic_fixed():
    # 100 KiB -> one 64 KiB chunk (merged with 64 KiB), 200 KiB -> three chunks = 192 KiB
    recs = hbm.measure_l2_sweep("cpu", footprints=[64 * 1024, 100 * 1024, 200 * 1024], total_bytes=768 * 1024,
                                min_samples=3, min_time_s=0.0, max_time_s=0.2)
    assert [r["params"]["footprint_bytes"] for r in recs] == [64 * 1024, 192 * 1024]
    assert [r["params"]["chunks"] for r in recs] == [1, 3] and [r["params"]["repeats"] for r in recs] == [12, 4]
    assert all(r["params"]["traffic_bytes"] == 768 * 1024 and r["params"]["chunk_bytes"] == 65536 for r in recs)
    recs = hbm.measure_l2_sweep("cpu", footprints=[4096], chunk_bytes=16 * 1024, total_bytes=64 * 1024,
                                min_samples=3, min_time_s=0.0, max_time_s=0.2)
    assert recs[0]["params"]["footprint_bytes"] == 16 * 1024  # never less than one chunk
    with pytest.raises(ValueError, match="chunk_bytes"):
        hbm.measure_l2_sweep("cpu", footprints=[65536], chunk_bytes=1000)


def test_l2_sweep_view_sums_each_chunk():
    # The sweep's kernel: R x m reductions of one chunk each, over a stride-0 view (no copy).
    import torch

    buf = torch.arange(16.0)
    view = hbm._chunk_view(buf, 3, 4, 2)
    assert view.stride() == (0, 4, 1) and view.data_ptr() == buf.data_ptr()
    out = torch.empty(2, 3)
    torch.sum(view, dim=-1, out=out)
    assert out.tolist() == [[6.0, 22.0, 38.0]] * 2


def test_measure_capacity_cpu():
    cap = hbm.measure_capacity("cpu")
    assert cap.total_bytes is None and cap.total_over_datasheet is None and "GPU measurement" in cap.note


def test_bench_main_cpu(tmp_path, capsys):
    rc = hbm.bench_main(["--quick", "--array-mib", "1", "--sweep-points", "3", "--kernels", "read,copy",
                         "--device", "cpu", "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "HBM benchmark on" in out and "copy" in out and "result written to" in out
    files = list(tmp_path.glob("hbm-*.json"))
    assert len(files) == 1
    res = results.load(files[0])
    assert res["device"]["backend"] == "cpu"
    exps = [r["params"]["experiment"] for r in res["records"]]
    assert exps.count("bandwidth") == 2 and exps.count("l2_sweep") == 3 and "capacity" in exps
    assert any("no CUDA GPU" in n for n in res["notes"])
    checks = next(r for r in res["records"] if r["params"]["experiment"] == "acceptance")["derived"]["checks"]
    assert {c["check"] for c in checks} >= {"copy >= 85% of the datasheet bandwidth"}
    with pytest.raises(SystemExit):
        hbm.bench_main(["--kernels", "memset", "--no-save"])
    with pytest.raises(SystemExit):
        hbm.bench_main(["--array-mib", "0", "--no-save"])
    assert math.isfinite(res["records"][0]["derived"]["bytes_per_s"])


def test_bench_whole_path_on_cpu_quick():
    # `python -m ampere bench hbm --device cpu --quick --no-save`: every kernel, the sweep, the capacity
    # cell and the acceptance checks, with tiny sizes, well within the 60 s budget (a few seconds here).
    import subprocess

    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "ampere", "bench", "hbm", "--device", "cpu", "--quick",
                          "--no-save"], capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - t0
    assert out.returncode == 0, out.stderr
    for k in hbm.KERNELS:
        assert f"  {k} " in out.stdout
    import re

    assert re.search(r"L2 sweep: \d+ footprints, 64 KiB", out.stdout) and elapsed < 60


def test_oom_is_freed_outside_the_handler_then_retried_smaller():
    import torch

    dev = torch.device("cpu")
    tried, live = [], []

    def run(nbytes):
        tried.append(nbytes)
        if nbytes > 4 * MiB:
            live.append(torch.empty(16))  # memory held by the failing attempt's frame
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return "ok"

    result, used, notes = hbm._retrying_oom(run, 16 * MiB, 1 * MiB, dev, "arrays")
    assert result == "ok" and used == 4 * MiB and tried == [16 * MiB, 8 * MiB, 4 * MiB]
    assert len(notes) == 2 and "retried with 8 MiB" in notes[0] and "freed" in notes[0]
    with pytest.raises(RuntimeError, match="out of memory"):
        hbm._retrying_oom(run, 16 * MiB, 16 * MiB, dev, "arrays")  # at the floor: no retry, the error stays
    with pytest.raises(RuntimeError, match="boom"):
        hbm._retrying_oom(lambda n: (_ for _ in ()).throw(RuntimeError("boom")), 8 * MiB, MiB, dev, "arrays")


# ----------------------------------------------------------------------------------------------------
# Views on the CPU: published numbers beside the model, with sources, never "missing"
# ----------------------------------------------------------------------------------------------------

def test_bandwidth_points_show_a100_and_h200_with_sources():
    pts = hbm.bandwidth_points(None)
    gpus = {p.gpu for p in pts}
    assert {"A100-SXM4-80GB", "A100-SXM4-40GB", "H200-SXM-141GB"} <= gpus
    for p in pts:
        assert p.model == specs.get(p.gpu).hbm_bytes_per_s / 1e9 and 0.5 < p.ratio < 1.0  # H200 read: 0.57
        assert "ernstgpubenches" not in p.source and "commit" in p.source
    from ampere import views

    table = views.table(pts, model_label="datasheet", real_label="reached", digits=0)
    assert "A100-SXM4-80GB" in table and "×" in table


def test_views_run_on_the_cpu(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", lambda text: shown.append(text))

    class CPU:
        backend = "cpu"
        spec = None
        spec_name = None

        def label(self):
            return "a CPU"

    pts = hbm.show_bandwidth(CPU())
    assert pts and all(p.kind == "published" for p in pts)
    sweeps = hbm.show_l2_sweep(CPU())
    assert {s.gpu for s in sweeps} >= {"A100-SXM4-80GB", "H200-SXM-141GB"}
    assert hbm.show_capacity(CPU()) is None
    text = "\n".join(shown)
    assert "L2 plateau" in text and "knee" in text and "80" in text
    for word in ("not measured", "no recorded", "missing", "ernstgpubenches"):
        assert word not in text


def _fake_records(copy_pct, knee_at, l2=40 * 2**20):
    bw = [{"params": {"experiment": "bandwidth", "kernel": k, "engine": "SM"},
           "derived": {"bytes_per_s": copy_pct * 20.39e9, "pct_of_datasheet": copy_pct, "copied_bytes_per_s": None}}
          for k in ("copy", "scale")]
    f = hbm.sweep_footprints(l2, 16)
    sweep = [{"params": {"experiment": "l2_sweep", "footprint_bytes": x, "device_l2_bytes": l2},
              "derived": {"bytes_per_s": 5e12 if x < knee_at else 1.8e12}} for x in f]
    return bw + sweep


def test_check_acceptance():
    ok = {c.check: c for c in hbm.check_acceptance(_fake_records(90.0, 40 * 2**20), "A100-SXM4-80GB")}
    copy = ok["copy >= 85% of the datasheet bandwidth"]
    assert copy["passed"] and copy["applies"]
    assert not ok["scale >= 85% of the datasheet bandwidth"]["applies"]  # reported, not judged
    assert ok["L2 knee within 25% of the reported L2"]["passed"]
    bad = {c.check: c for c in hbm.check_acceptance(_fake_records(80.0, 10 * 2**20), "H200-SXM-141GB")}
    assert not bad["copy >= 85% of the datasheet bandwidth"]["passed"]
    assert not bad["L2 knee within 25% of the reported L2"]["passed"]
    t4 = hbm.check_acceptance(_fake_records(70.0, 4 * 2**20, l2=4 * 2**20), "T4")
    assert not t4[0]["applies"]  # the 85% threshold is set for A100/H100/H200 only
    none = hbm.check_acceptance([], None)
    assert not any(c["applies"] for c in none)


def test_decode_bound_with_ideal_tensor_parallelism():
    # four GPUs: four times the bandwidth, peak and capacity (communication free): a looser bound
    one = hbm.decode_bound("70B", "A100-SXM4-80GB", gpus=1)
    four = hbm.decode_bound("70B", "A100-SXM4-80GB", gpus=4)
    assert four.tokens_per_s == pytest.approx(4 * one.tokens_per_s) and four.fits and not one.fits
    with pytest.raises(ValueError, match="gpus"):
        hbm.decode_bound("7B", gpus=0)


def test_zero_points_match_the_paper():
    pts = hbm.zero_points()
    assert len(pts) == 4 and all(abs(p.ratio - 1) < 0.02 for p in pts)
    assert all("Rajbhandari" in p.source for p in pts)


# ----------------------------------------------------------------------------------------------------
# The GPU path on the fake CUDA device (tests/fakecuda.py): control flow, sizes and gating, no numerics
# ----------------------------------------------------------------------------------------------------

from .fakecuda import fake_cuda  # noqa: E402,F401


def test_l2_sweep_on_a_fake_h200_uses_the_reported_l2(fake_cuda):  # noqa: F811
    fake = fake_cuda("H200")
    fake.script_ms([1.0])
    recs = hbm.measure_l2_sweep("cuda", quick=True, warmup_s=0.0, min_time_s=0.0, min_samples=3)
    f, y, l2 = hbm.sweep_rows(recs)
    assert l2 == 50 * MiB  # what the (fake) device reports: the catalogue's 50 MiB
    assert f[0] == 256 * 1024 and f[-1] <= 4 * l2 and len(f) >= 10
    assert all(r["params"]["traffic_bytes"] == pytest.approx(2**30, rel=0.05) for r in recs)  # ~fixed traffic
    assert all(not r["params"]["l2_flushed"] for r in recs)
    assert fake.allocated[0] == 0  # the buffer is freed


def test_views_measure_on_a_fake_gpu(fake_cuda, monkeypatch):  # noqa: F811
    import matplotlib

    matplotlib.use("Agg")
    from ampere import device, tables

    fake = fake_cuda("A100-SXM4-80GB")
    fake.script_ms([2.0])
    shown = []
    monkeypatch.setattr(tables, "show_md", lambda text: shown.append(text))
    fast = dict(warmup_s=0.0, min_time_s=0.0, min_samples=3, max_time_s=1.0)
    real_bw, real_sweep = hbm.measure_bandwidth, hbm.measure_l2_sweep
    monkeypatch.setattr(hbm, "measure_bandwidth", lambda **kw: real_bw(**{**kw, **fast}))
    monkeypatch.setattr(hbm, "measure_l2_sweep", lambda **kw: real_sweep(**{**kw, **fast}))
    info = device.probe()
    assert info.backend == "cuda" and info.spec_name == "A100-SXM4-80GB"
    pts = hbm.show_bandwidth(info)
    here = [p for p in pts if p.kind == "measured"]
    assert [p.what.split()[0] for p in here] == list(hbm.KERNELS) and all(p.source == "measured here" for p in here)
    assert pts.index(here[-1]) < min(i for i, p in enumerate(pts) if p.kind == "published")  # measured first
    sweeps = hbm.show_l2_sweep(info)
    assert sweeps[0].label == "measured here" and sweeps[0].l2_bytes == 40 * MiB
    cap = hbm.show_capacity(info)
    assert cap.total_bytes == 80e9 and cap.total_over_datasheet == pytest.approx(1.0)
    assert any("measured here" in t for t in shown)

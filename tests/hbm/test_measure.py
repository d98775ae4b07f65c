"""Tests of ampere/hbm/measure.py (the measurements). Chapter: HBM and the memory hierarchy.

On the CPU with tiny sizes (the same code path the GPU runs), then the GPU path on the fake CUDA device
(tests/fakecuda.py): control flow, sizes and gating, no numerics.
"""

from __future__ import annotations

import pytest

from ampere import hbm

from ..fakecuda import fake_cuda  # noqa: F401

MiB = 2**20


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


def test_l2_sweep_on_a_fake_h200_uses_the_reported_l2(fake_cuda):  # noqa: F811
    fake = fake_cuda("H200")
    fake.script_ms([1.0])
    recs = hbm.measure_l2_sweep("cuda", quick=True, warmup_s=0.0, min_time_s=0.0, min_samples=3)
    f, y, l2 = hbm.sweep_rows(recs)
    assert l2 == 60 * MiB  # what the (fake) device reports: the catalogue's 60 MiB
    assert f[0] == 256 * 1024 and f[-1] <= 4 * l2 and len(f) >= 10
    # ~fixed traffic: R = round(1 GiB / F) repeats with F <= 4 x 60 MiB, so R >= 4 and R x F is within
    # 0.5 / 4.5 = 11 % of 1 GiB (240 MiB: R = 4, 960 MiB)
    assert all(r["params"]["traffic_bytes"] == pytest.approx(2**30, rel=0.12) for r in recs)
    assert all(not r["params"]["l2_flushed"] for r in recs)
    assert fake.allocated[0] == 0  # the buffer is freed


def test_strided_copy_cpu_counts_patterns_and_model():
    recs = hbm.measure_strided_copy("cpu", strides=(1, 2, 8), offsets_bytes=(4,), elements=4096, min_samples=3,
                                    min_time_s=0.0, max_time_s=0.2)
    pats = [(r["params"]["stride"], r["params"]["offset_bytes"]) for r in recs]
    assert pats == [(1, 0), (2, 0), (8, 0), (1, 4)]
    by = dict(zip(pats, recs))
    assert by[(1, 0)]["derived"]["ratio_to_aligned"] == 1.0
    assert by[(2, 0)]["derived"]["model_sectors_per_warp"] == 8 and by[(1, 4)]["derived"]["model_sectors_per_warp"] == 5
    assert all(r["derived"]["useful_bytes_per_s"] > 0 and r["derived"]["pct_of_datasheet"] is None for r in recs)
    # the aligned copy is added when not asked for: every ratio refers to it
    recs = hbm.measure_strided_copy("cpu", strides=(4,), offsets_bytes=(), elements=1024, min_samples=3,
                                    min_time_s=0.0, max_time_s=0.2)
    assert [r["params"]["stride"] for r in recs] == [1, 4]
    with pytest.raises(ValueError, match="multiple of 4"):
        hbm.measure_strided_copy("cpu", offsets_bytes=(2,), elements=16)
    with pytest.raises(TypeError):
        hbm.measure_strided_copy("cpu", strides="12", elements=16)


def test_strided_copy_on_a_fake_a100(fake_cuda):  # noqa: F811
    fake = fake_cuda("A100-SXM4-80GB")
    fake.script_ms([1.0])
    recs = hbm.measure_strided_copy("cuda", quick=True, warmup_s=0.0, min_time_s=0.0, min_samples=3)
    assert {r["params"]["stride"] for r in recs} == set(hbm.STRIDED_COPY_STRIDES)
    assert all(r["params"]["l2_flushed"] for r in recs)  # every timed call starts cold
    n = recs[0]["params"]["elements"]
    assert n == 1 << 23 and recs[0]["derived"]["pct_of_datasheet"] == pytest.approx(100 * 2 * 4 * n / 1e-3 / 2039e9)
    assert fake.allocated[0] == 0

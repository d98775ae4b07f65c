"""Tests of ampere.interconnect (chapter: NVLink, NVSwitch and collectives)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ampere import interconnect as ic
from ampere import specs


def test_import_does_not_load_torch():
    import subprocess
    import sys
    code = "import sys, ampere.interconnect; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert math.isfinite(ic.A100_INTRA_LATENCY_S)


# --- fitting ------------------------------------------------------------------------------------------------------

def test_fit_recovers_alpha_and_beta_from_model_times():
    sizes = [4096 * 2**k for k in range(11)]
    times = [ic.collective_time("all_reduce", s, 4, 2e9, 30e-6) for s in sizes]
    fit = ic.fit_alpha_beta("all_reduce", 4, sizes, times)
    assert fit.latency_s == pytest.approx(30e-6, rel=1e-9)
    assert fit.link_bytes_per_s == pytest.approx(2e9, rel=1e-9)
    h = ic.holdout_check(sizes, times, "all_reduce", 4)
    assert h["max_abs_rel_error"] < 1e-9
    assert h["sizes_bytes"] == sizes[1::2]


def test_fit_keeps_parameters_non_negative_and_handles_pure_latency():
    sizes = [1e3, 1e4, 1e5, 1e6]
    flat = [1e-4] * 4  # no bandwidth term at all: B is infinite, alpha = 1e-4 / 2 steps
    fit = ic.fit_alpha_beta("all_reduce", 2, sizes, flat)
    assert fit.link_bytes_per_s == math.inf and fit.latency_s == pytest.approx(5e-5)
    assert fit.predict([1e9]) == [pytest.approx(1e-4)]
    steep = [s / 1e9 * (0.5 if s < 1e5 else 1.0) for s in sizes]  # would need a negative latency
    fit = ic.fit_alpha_beta("all_reduce", 2, sizes, steep)
    assert fit.latency_s == 0.0 and fit.link_bytes_per_s > 0


def test_fit_rejects_bad_input():
    with pytest.raises(ValueError, match="at least two distinct sizes"):
        ic.fit_alpha_beta("all_reduce", 2, [1e3, 1e3], [1e-4, 1e-4])
    with pytest.raises(ValueError, match="single rank"):
        ic.fit_alpha_beta("all_reduce", 1, [1e3, 1e4], [1e-4, 2e-4])
    with pytest.raises(ValueError, match="times_s"):
        ic.fit_alpha_beta("all_reduce", 2, [1e3, 1e4], [0.0, 2e-4])
    with pytest.raises(ValueError, match="at least 4 sizes"):
        ic.holdout_check([1, 2, 3], [1, 2, 3], "all_reduce", 2)


# --- data-parallel scaling -----------------------------------------------------------------------------------------

def test_data_parallel_step_by_hand():
    dgx = ic.systems()["DGX A100 (NVLink 3, NVSwitch)"]
    step = ic.data_parallel_step(dgx, 16, tokens_per_gpu=4096)
    compute = 6 * ic.BERT_LARGE_PARAMS * 4096 / (0.4 * specs.get("A100-SXM4-80GB").peak_flops("fp16"))
    comm = ic.hierarchical_all_reduce_time(2 * ic.BERT_LARGE_PARAMS, 2, 8, dgx.intra_bytes_per_s,
                                           dgx.inter_bytes_per_s, dgx.intra_latency_s, dgx.inter_latency_s)
    assert step.compute_s == pytest.approx(compute) and step.all_reduce_s == pytest.approx(comm)
    assert step.efficiency == pytest.approx(compute / (compute + comm))
    assert ic.data_parallel_step(dgx, 1, tokens_per_gpu=4096).efficiency == 1.0
    hidden = ic.data_parallel_step(dgx, 16, tokens_per_gpu=4096, overlap=1.0)
    assert hidden.exposed_s == pytest.approx(max(0.0, comm - 2 / 3 * compute)) and hidden.efficiency > step.efficiency


def test_strong_scaling_efficiency_falls_and_weak_scaling_saturates():
    name = "DGX-1 (V100, NVLink 2)"
    strong = [ic.data_parallel_step(name, n, global_tokens=ic.BERT_GLOBAL_BATCH_TOKENS).efficiency
              for n in (8, 32, 128, 256)]
    assert all(a > b for a, b in zip(strong, strong[1:]))
    weak = [ic.data_parallel_step(name, n, tokens_per_gpu=4096).efficiency for n in (64, 256, 1024)]
    assert max(weak) - min(weak) < 0.05  # the ring's bandwidth term does not grow with n
    assert ic.crossover_gpus(name, global_tokens=ic.BERT_GLOBAL_BATCH_TOKENS) == 256
    assert ic.crossover_gpus(name, tokens_per_gpu=4096) is None


def test_pcie_box_scales_worst_and_a100_moves_crossover_no_earlier_than_v100():
    kw = {"global_tokens": ic.BERT_GLOBAL_BATCH_TOKENS}
    x = {name: ic.crossover_gpus(name, **kw) for name in ic.systems()}
    assert x["8x A100 PCIe (no NVLink)"] < x["DGX-1 (V100, NVLink 2)"] <= x["DGX A100 (NVLink 3, NVSwitch)"]


def test_data_parallel_invalid_inputs():
    with pytest.raises(ValueError, match="exactly one of"):
        ic.data_parallel_step("DGX-1 (V100, NVLink 2)", 8)
    with pytest.raises(ValueError, match="system='DGX-3'"):
        ic.data_parallel_step("DGX-3", 8, tokens_per_gpu=1)
    with pytest.raises(ValueError, match="gpus=12 must be <= 8 or a multiple"):
        ic.data_parallel_step("DGX-1 (V100, NVLink 2)", 12, tokens_per_gpu=1)
    with pytest.raises(ValueError, match="achieved_fraction"):
        ic.data_parallel_step("DGX-1 (V100, NVLink 2)", 8, tokens_per_gpu=1, achieved_fraction=1.5)
    with pytest.raises(ValueError, match="overlap"):
        ic.data_parallel_step("DGX-1 (V100, NVLink 2)", 8, tokens_per_gpu=1, overlap=-0.1)


# --- real collectives (gloo on CPU processes) ----------------------------------------------------------------------

@pytest.mark.parametrize("op", ["all_gather", "reduce_scatter", "broadcast", "reduce"])
def test_run_collective_every_op_verifies(op):
    run = ic.run_collective(op, [4096, 65536], 2, backend="gloo", samples=3)
    assert run.backend == "gloo" and run.world_size == 2 and run.verified
    assert run.sizes_bytes == [4096, 65536]
    for r in run.records:
        assert len(r["samples_s"]) == 3 and r["median_s"] > 0
        assert r["algbw_bytes_per_s"] == pytest.approx(r["size_bytes"] / r["median_s"])
        assert r["busbw_bytes_per_s"] == pytest.approx(r["algbw_bytes_per_s"] * ic.busbw_factor(op, 2))
    m = run.measurement(1)
    assert m.samples_s == run.records[1]["samples_s"] and m.params["op"] == op


@pytest.mark.serial  # a timing fit: run without other tests loading the two cores
def test_gloo_lab_meets_the_acceptance_and_fits_within_25_percent():
    """The chapter's lab: 2 processes, 4 KiB ... 4 MiB, all results verified, <= 20 s with start-up."""
    import time

    t0 = time.perf_counter()
    run = ic.run_collective("all_reduce", ic.LAB_SIZES_BYTES, 2, backend="gloo", samples=50)
    elapsed = time.perf_counter() - t0
    assert run.verified and elapsed <= 20.0
    h = ic.holdout_check(run.sizes_bytes, run.quantile_s(ic.FIT_PERCENTILE), "all_reduce", 2)
    assert h["max_abs_rel_error"] <= 0.25, h["rel_errors"]
    assert run.quantile_s(50) == pytest.approx(run.times_s)
    with pytest.raises(ValueError, match="q=101"):
        run.quantile_s(101)
    with pytest.raises(TypeError, match="q must be a number"):
        run.quantile_s("10")


def test_run_collective_rejects_bad_input():
    with pytest.raises(ValueError, match="op='alltoall'"):
        ic.run_collective("alltoall", [4096], 2)
    with pytest.raises(ValueError, match="multiple of 8 bytes"):
        ic.run_collective("all_gather", [4100], 2)
    with pytest.raises(ValueError, match="multiple of 4 bytes"):
        ic.run_collective("all_reduce", [6], 2)
    with pytest.raises(ValueError, match="world_size must be an integer >= 1, got 0"):
        ic.run_collective("all_reduce", [4096], 0)
    with pytest.raises(TypeError, match="world_size must be an integer"):
        ic.run_collective("all_reduce", [4096], 2.0)
    with pytest.raises(ValueError, match="backend='mpi'"):
        ic.run_collective("all_reduce", [4096], 2, backend="mpi")
    with pytest.raises(ValueError, match="samples must be an integer >= 1, got 0"):
        ic.run_collective("all_reduce", [4096], 2, samples=0)
    with pytest.raises(ValueError, match="warmup must be an integer >= 0, got -3"):
        ic.run_collective("all_reduce", [4096], 2, warmup=-3)
    with pytest.raises(ValueError, match="target_sample_s must be >= 0"):
        ic.run_collective("all_reduce", [4096], 2, target_sample_s=-1.0)
    with pytest.raises(ValueError, match="timeout_s must be > 0"):
        ic.run_collective("all_reduce", [4096], 2, timeout_s=0)
    with pytest.raises(ValueError, match="sizes_bytes is empty"):
        ic.run_collective("all_reduce", [], 2)


def test_a_failing_rank_raises_runtime_error_not_a_hang():
    from ampere import launch

    # 3 float32 elements cannot be split over 2 ranks: each rank's all_gather set-up raises
    with pytest.raises(RuntimeError, match="rank 0 of 2 failed"):
        launch.spawn(ic._collective_rank, 2, args=("all_gather", [12], 1, 0, 0.0), backend="gloo", timeout_s=20)


@pytest.mark.parametrize("op", ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"])
def test_result_check_catches_wrong_values(op):
    buf = ic._Buffers(op, 64, 0, 2, "cpu")
    # fill the output with the exact expected result, as the collective would
    if op in ("all_reduce", "reduce"):
        buf.work.copy_(buf.base * 3)
    elif op == "broadcast":
        buf.work.copy_(buf.base)
    elif op == "all_gather":
        halves = buf.base.view(2, -1)
        buf.work.copy_(torch_cat([halves[0], 2 * halves[1]]))
    else:
        buf.work.copy_(buf.base.view(2, -1)[0] * 3)
    buf.check()
    buf.work[0] += 1
    with pytest.raises(ValueError, match=f"rank 0: {op} of 64 bytes returned 1 wrong elements"):
        buf.check()


def _per_rank(samples_by_rank, size=4096):
    return [{"rank": r, "device_name": "CPU", "pinned_core": None,
             "records": [{"size_bytes": size, "calls_per_sample": 1, "samples_s": list(ts)}]}
            for r, ts in enumerate(samples_by_rank)]


def test_a_collective_takes_as_long_as_its_slowest_rank():
    """Each sample's time is the MAX over ranks: a collective is done when the last rank is done.

    Mutation check: with ``mat.min(axis=0)`` (or a mean) in ``_aggregate`` these asserts fail.
    """
    fast, slow = [1e-3, 1e-3, 1e-3], [5e-3, 4e-3, 6e-3]
    for order in ((fast, slow), (slow, fast)):
        run = ic._aggregate("all_reduce", 2, "gloo", _per_rank(order))
        rec = run.records[0]
        assert rec["samples_s"] == slow  # per sample: the slowest rank
        assert rec["median_s"] == pytest.approx(5e-3)
        assert rec["algbw_bytes_per_s"] == pytest.approx(4096 / 5e-3)
    # the slow rank may change from sample to sample: the max is taken per sample, not per rank
    mixed = ic._aggregate("all_reduce", 2, "gloo", _per_rank(([1e-3, 9e-3, 1e-3], [7e-3, 1e-3, 2e-3])))
    assert mixed.records[0]["samples_s"] == [7e-3, 9e-3, 2e-3]


def torch_cat(parts):
    import torch

    return torch.cat(parts)


# --- the benchmark entry point --------------------------------------------------------------------------------------

def test_bench_main_spawn_writes_a_valid_result(tmp_path, capsys):
    from ampere import results

    rc = ic.bench_main(["--sizes", "4K,16K,64K,256K", "--samples", "3", "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "all_reduce on 2 ranks (gloo" in out and "busbw" in out
    files = list(tmp_path.glob("collectives-*.json"))
    assert len(files) == 1
    res = results.load(files[0])
    assert res["parameters"]["backend"] == "gloo" and res["parameters"]["world_size"] == 2
    coll = [r for r in res["records"] if r["params"]["kind"] == "collective"]
    assert [r["params"]["size_bytes"] for r in coll] == [4096, 16384, 65536, 262144]
    assert all(r["derived"]["verified"] for r in coll)
    assert any("alpha-beta fit" in n for n in res["notes"])


def test_bench_main_under_torchrun_environment(tmp_path):
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1",
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), AMPERE_DEVICE="cpu", NCCL_DEBUG="WARN")
    code = ("import sys; from ampere import interconnect as ic; "
            f"sys.exit(ic.bench_main(['--backend', 'gloo', '--sizes', '4K,8K', '--samples', '2', '--out', {str(tmp_path)!r}]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    from ampere import results

    res = results.load(next(tmp_path.glob("collectives-*.json")))
    assert res["parameters"]["launcher"] == "torchrun" and res["parameters"]["nodes"] == 1
    assert res["parameters"]["nccl_env"] == {"NCCL_DEBUG": "WARN"}


def test_bench_refuses_zero_ranks_and_unsplittable_sizes(capsys):
    with pytest.raises(SystemExit) as exc:
        ic.bench_main(["--device", "cpu", "--world-size", "0", "--no-save"])
    assert exc.value.code == 2
    assert "--world-size 0 must be an integer >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ic.bench_main(["--device", "cpu", "--sizes", "5", "--no-save"])
    err = capsys.readouterr().err
    assert "--sizes 5: each size must be a positive multiple of 8 bytes" in err and "nearest valid: 8" in err
    with pytest.raises(SystemExit):
        ic.bench_main(["--device", "cpu", "--sizes", "4K,4100", "--no-save"])
    assert "nearest valid: 4096 or 4104" in capsys.readouterr().err


@pytest.mark.serial
def test_bench_runs_its_whole_path_on_the_cpu_quickly(monkeypatch, capsys):
    """``python -m ampere bench collectives --device cpu --quick --no-save``: gloo ranks, <= 60 s, CPU result."""
    import time

    from ampere import benchcli

    captured = []
    real = benchcli.finish_bench

    def finish(result, args, summary):
        captured.append(result)
        return real(result, args, summary)

    monkeypatch.setattr(benchcli, "finish_bench", finish)
    t0 = time.perf_counter()
    assert ic.bench_main(["--device", "cpu", "--quick", "--no-save"]) == 0
    assert time.perf_counter() - t0 <= 60.0
    (res,) = captured
    assert res["device"]["backend"] == "cpu" and res["parameters"]["backend"] == "gloo"
    coll = [r for r in res["records"] if r["params"]["kind"] == "collective"]
    assert len(coll) >= 4 and all(r["derived"]["verified"] for r in coll)
    assert "all_reduce on 2 ranks (gloo" in capsys.readouterr().out


def test_published_records_of_the_chapter():
    rec = ic.published(ic.A100_8GPU_BUSBW)
    assert rec.source == "nccltests175" and rec.figures["busbw_gb_per_s"] > 200
    assert ic.nvlink_cascade()[-1][1] == pytest.approx(rec.figures["busbw_gb_per_s"] * 1e9)
    assert ic.published(ic.MEGATRON_3072).benchmark == "training-throughput"
    with pytest.raises(ValueError, match="record_id must be one of"):
        ic.published("nope")


def test_systems_are_fabrics_presets():
    from ampere import fabrics

    sy = ic.systems()
    assert all(isinstance(s, fabrics.NodeNetwork) for s in sy.values())
    assert sy["DGX A100 (NVLink 3, NVSwitch)"].inter_bytes_per_s == fabrics.DGX_A100.inter_bytes_per_s


def test_bench_helpers():
    assert ic._parse_size("64K") == 65536 and ic._parse_size("1G") == 2**30 and ic._parse_size("12") == 12
    with pytest.raises(ValueError, match="not understood"):
        ic._parse_size("1.5M")
    kept, dropped = ic._fit_in_memory([2**30, 2**32, 2**20], 8, 16e9)
    assert kept == [2**20, 2**30] and dropped == [2**32]


def test_p2p_needs_two_gpus():
    import torch

    if torch.cuda.is_available() and torch.cuda.device_count() >= 2:
        r = ic.p2p_copy_bandwidth(0, 1, 64 * 2**20)
        assert r["bytes_per_s"] > 0
    else:
        with pytest.raises(ValueError, match="at least 2 CUDA GPUs"):
            ic.p2p_copy_bandwidth()


def test_nccl_needs_one_gpu_per_rank():
    import torch

    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(ValueError, match="one GPU per rank"):
        ic.run_collective("all_reduce", [4096], visible + 1, backend="nccl")


def test_torchrun_with_nccl_and_no_gpu_for_the_rank_fails_cleanly(monkeypatch, capsys):
    import torch

    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("LOCAL_RANK", str(visible))  # one past the last GPU: no GPU for this rank
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(visible + 1))
    assert ic.bench_main(["--backend", "nccl", "--no-save"]) == 2
    assert "one GPU per local rank" in capsys.readouterr().err


def _two_gpus_with_nccl() -> bool:
    import os

    import torch
    import torch.distributed as dist

    return (os.environ.get("AMPERE_DEVICE", "").lower() != "cpu" and torch.cuda.is_available()
            and torch.cuda.device_count() >= 2 and dist.is_nccl_available())


@pytest.mark.parametrize("op", list(ic.OPS))
def test_nccl_collectives_verify_on_two_gpus(op):
    """The GPU path of the lab: one process per GPU, NCCL, results checked on the devices."""
    if not _two_gpus_with_nccl():
        pytest.skip("needs 2 CUDA GPUs and NCCL")
    run = ic.run_collective(op, [2**12, 2**20, 2**24], 2, samples=3, timeout_s=120)
    assert run.backend == "nccl" and run.verified and run.device_name != "CPU"
    assert all(r["calls_per_sample"] >= 1 and r["median_s"] > 0 for r in run.records)
    # a 16 MiB collective between two GPUs moves at least a few GB/s over any link (PCIe Gen3 x16 included)
    assert run.busbw_bytes_per_s[-1] > 1e9


def test_claims_cover_the_seeds_with_computed_evidence():
    import re
    from pathlib import Path

    rows = ic.claims()
    assert all(set(r) == {"claim", "seed", "verdict", "evidence"} and r["evidence"] for r in rows)
    bib = (Path(__file__).resolve().parent.parent / "book" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"@\w+\{([^,]+),", bib))
    assert {r["seed"] for r in rows} <= keys
    by_claim = {r["claim"]: r for r in rows}
    pcie = next(r for c, r in by_claim.items() if "PCIe A100 has no NVLink" in c)
    assert pcie["verdict"].startswith("wrong") and "600 GB/s" in pcie["evidence"]
    assert "300 GB/s each way" in by_claim["NVLink 3 gives 600 GB/s of bidirectional bandwidth per GPU"]["evidence"]


# --- the chapter's views ---------------------------------------------------------------------------------------------

def _bib_keys():
    import re
    from pathlib import Path

    bib = (Path(__file__).resolve().parent.parent / "book" / "references.bib").read_text(encoding="utf-8")
    return set(re.findall(r"@\w+\{([^,]+),", bib))


def test_allreduce_model_busbw_is_the_ring_in_a_node_and_hierarchical_across():
    from ampere import collectives, fabrics

    S = 4 * 2**30
    t = collectives.collective_time("all_reduce", S, 8, fabrics.A100_INTRA_BYTES_PER_S, fabrics.A100_INTRA_LATENCY_S)
    assert ic.allreduce_model_busbw("A100-SXM4-80GB", 8, size_bytes=S) == pytest.approx(1.75 * S / t)
    two = collectives.hierarchical_all_reduce_breakdown(S, 2, 8, inter_bytes_per_s=100e9)
    assert ic.allreduce_model_busbw("A100-SXM4-80GB", 16, 2, hcas_per_node=4, size_bytes=S) == \
        pytest.approx(two.busbw_bytes_per_s)
    assert ic.allreduce_model_busbw("H100-SXM5-80GB", 8) > ic.allreduce_model_busbw("A100-SXM4-80GB", 8)
    with pytest.raises(ValueError, match="nodes must be an integer >= 1"):
        ic.allreduce_model_busbw("A100-SXM4-80GB", 8, nodes=0)


def test_allreduce_points_show_a100_h100_h200_with_sources_and_no_keys():
    pts = ic.allreduce_points()
    gpus = {p.gpu for p in pts}
    assert {"A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"} <= gpus
    keys = _bib_keys()
    for p in pts:
        assert p.real is not None and p.model is not None and p.kind in ("published", "recorded")
        assert p.source and not any(k in p.source for k in keys)
    a100 = next(p for p in pts if p.gpu == "A100-SXM4-80GB" and "one node" in p.what and p.real > 232)
    assert 0.9 < a100.ratio < 1.05  # the ring model is within a few per cent of nccl-tests on 8 A100s
    labels = [(p.gpu, p.what) for p in pts]
    assert len(set(labels)) == len(labels), labels  # every row of the figure says which result it is
    assert "4 GiB" in a100.what  # the message size the source measured, where it gives one


def test_show_allreduce_without_gpus_shows_published_numbers(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from ampere import views

    shown = []
    monkeypatch.setattr(views, "show", lambda points, **kw: shown.append(list(points)))

    class NoGPU:
        backend, gpu_count = "cpu", 0

    assert ic.show_allreduce(NoGPU()) is None
    assert shown and len(shown[0]) >= 6


def test_alpha_beta_rows_are_the_model_coefficients():
    rows = {r["collective"]: r for r in ic.alpha_beta_rows(8)}
    assert list(rows) == list(ic.OPS)
    assert (rows["all_reduce"]["ring: steps a"], rows["all_reduce"]["ring: bytes b (x S)"]) == ("14", "1.750")
    assert (rows["all_reduce"]["tree: steps a"], rows["all_reduce"]["tree: bytes b (x S)"]) == ("6", "2.000")
    assert rows["all_gather"]["tree: steps a"] == "ring only" and rows["all_gather"]["busbw factor"] == "0.875"
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        ic.alpha_beta_rows(0)


def test_link_table_pcie_rows_say_how_the_rate_is_derived():
    pcie = {r["link"]: r for r in ic.link_table() if r["link"].startswith("PCIe")}
    assert pcie["PCIe Gen4 x16"]["source"] == "16 GT/s per lane, 128b/130b"
    assert pcie["PCIe Gen4 x16"]["GB/s per direction"] == pytest.approx(31.5, abs=0.01)
    assert pcie["PCIe Gen5 x16"]["source"].startswith("32 GT/s")


def test_page_tables_name_sources_by_label_not_key():
    keys = _bib_keys()
    for rows in (ic.claims_rows(), ic.link_table(), ic.system_rows(), ic.crossover_rows(32)):
        for row in rows:
            for value in row.values():
                assert str(value) not in keys, value
    assert all(r["crossover, weak scaling"] for r in ic.crossover_rows(32))


def test_a_measured_run_comes_first_with_its_model():
    run = ic._aggregate("all_reduce", 2, "nccl", _per_rank(([2e-3, 2e-3], [2e-3, 2.2e-3]), size=2**28))
    pts = ic.allreduce_points(run, "A100-SXM4-80GB")
    first = pts[0]
    assert first.kind == "measured" and first.source == "measured here" and first.gpu == "A100-SXM4-80GB"
    assert first.real == pytest.approx(2**28 / 2.1e-3 / 1e9)  # median of the per-sample max; busbw factor 1
    assert first.model == pytest.approx(ic.allreduce_model_busbw("A100-SXM4-80GB", 2, size_bytes=2**28) / 1e9)
    assert ic.allreduce_points(run)[0].model is None  # GPU unknown: no model, the number still shown

"""Tests of ampere.interconnect (chapter: NVLink, NVSwitch and collectives)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ampere import interconnect as ic
from ampere import specs


# --- bus bandwidth -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("op,n,factor", [
    ("all_reduce", 8, 1.75), ("all_reduce", 2, 1.0), ("all_reduce", 4, 1.5),
    ("all_gather", 8, 0.875), ("reduce_scatter", 2, 0.5), ("broadcast", 8, 1.0), ("reduce", 3, 1.0),
    ("all_reduce", 1, 0.0), ("broadcast", 1, 0.0),
])
def test_busbw_factors_match_nccl_tests(op, n, factor):
    assert ic.busbw_factor(op, n) == pytest.approx(factor)
    assert ic.bus_bandwidth(op, 100e9, n) == pytest.approx(100e9 * factor)


def test_busbw_of_a_link_speed_ring_is_the_link_speed():
    # a ring all-reduce with no latency moving at B per direction has busbw == B, for every n
    for op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
        for n in (2, 3, 8, 64):
            t = ic.collective_time(op, 1e9, n, 50e9, 0.0)
            assert ic.bus_bandwidth(op, ic.algorithm_bandwidth(1e9, t), n) == pytest.approx(50e9)


@pytest.mark.parametrize("bad", [0, -1, 2.0, "8", True, None])
def test_invalid_n_raises(bad):
    with pytest.raises(ValueError, match="n="):
        ic.busbw_factor("all_reduce", bad)
    with pytest.raises(ValueError, match="n="):
        ic.collective_time("all_reduce", 1e6, bad, 1e9, 1e-6)


def test_numpy_integer_n_is_accepted():
    assert ic.busbw_factor("all_reduce", np.int64(8)) == pytest.approx(1.75)


def test_invalid_op_and_algorithm_raise_with_allowed_values():
    with pytest.raises(ValueError, match="op='allreduce'.*all_reduce"):
        ic.bus_bandwidth("allreduce", 1e9, 8)
    with pytest.raises(ValueError, match="algorithm='butterfly'.*ring, tree"):
        ic.collective_time("all_reduce", 1e6, 8, 1e9, 1e-6, algorithm="butterfly")
    with pytest.raises(ValueError, match="algorithm='tree' is not defined for op='all_gather'"):
        ic.collective_time("all_gather", 1e6, 8, 1e9, 1e-6, algorithm="tree")
    with pytest.raises(ValueError, match="algbw_bytes_per_s"):
        ic.bus_bandwidth("all_reduce", -1.0, 8)


@pytest.mark.parametrize("field,kwargs", [
    ("size_bytes", dict(size_bytes=-1)), ("link_bytes_per_s", dict(link_bytes_per_s=0)),
    ("latency_s", dict(latency_s=float("nan"))),
])
def test_invalid_sizes_and_rates_raise(field, kwargs):
    args = dict(op="all_reduce", size_bytes=1e6, n=4, link_bytes_per_s=1e9, latency_s=1e-6)
    args.update(kwargs)
    with pytest.raises(ValueError, match=field):
        ic.collective_time(**args)


# --- alpha-beta formulas --------------------------------------------------------------------------------------

def test_ring_all_reduce_formula():
    n, S, B, a = 8, 256e6, 240e9, 5e-6
    expected = 2 * (n - 1) * a + 2 * (n - 1) / n * S / B
    assert ic.collective_time("all_reduce", S, n, B, a) == pytest.approx(expected)


def test_all_gather_and_reduce_scatter_are_half_an_all_reduce():
    n, S, B, a = 8, 64e6, 100e9, 2e-6
    ar = ic.collective_time("all_reduce", S, n, B, a)
    ag = ic.collective_time("all_gather", S, n, B, a)
    rs = ic.collective_time("reduce_scatter", S, n, B, a)
    assert ag == pytest.approx(rs) and ag + rs == pytest.approx(ar)


def test_tree_has_logarithmic_latency_and_ring_linear():
    # latency-only (S = 0): ring grows as 2(n-1), tree as 2 ceil(log2 n)
    assert ic.collective_time("all_reduce", 0, 1024, 1e9, 1e-6) == pytest.approx(2 * 1023e-6)
    assert ic.collective_time("all_reduce", 0, 1024, 1e9, 1e-6, "tree") == pytest.approx(20e-6)
    assert ic.collective_time("all_reduce", 0, 1000, 1e9, 1e-6, "tree") == pytest.approx(20e-6)
    # bandwidth-only: tree moves 2S, ring 2(n-1)/n S, so the ring is never slower for large messages
    for n in (2, 8, 1024):
        ring = ic.collective_time("all_reduce", 1e9, n, 1e9, 0.0)
        tree = ic.collective_time("all_reduce", 1e9, n, 1e9, 0.0, "tree")
        assert ring <= tree
    assert ic.collective_time("broadcast", 1e9, 16, 1e9, 1e-3, "tree") == pytest.approx(1.0 + 4e-3)
    assert ic.collective_time("broadcast", 1e9, 16, 1e9, 1e-3) == pytest.approx(1.0 + 15e-3)


def test_single_rank_costs_nothing():
    for op in ic.OPS:
        assert ic.collective_time(op, 1e9, 1, 1e9, 1e-3) == 0.0


def test_alpha_beta_terms_are_the_columns_of_the_fit():
    a, b = ic.alpha_beta_terms("all_reduce", 4)
    assert (a, b) == (6.0, 1.5)
    assert ic.alpha_beta_terms("all_gather", 4) == (3.0, 0.75)
    assert ic.alpha_beta_terms("broadcast", 4, "tree") == (2.0, 1.0)


# --- link figures from the specs ------------------------------------------------------------------------------

def test_nvlink_figures_come_from_the_specs():
    a100 = specs.get("A100-SXM4-80GB")
    assert ic.nvlink_bytes_per_s_per_direction(a100) == pytest.approx(300e9)
    assert a100.nvlink_bytes_per_s / a100.nvlink_links / 2 == pytest.approx(25e9)  # per link, per direction
    assert ic.nvlink_effective_bytes_per_s("A100-SXM4-80GB") == pytest.approx(240e9)
    assert ic.nvlink_bytes_per_s_per_direction("V100-SXM2-32GB") == pytest.approx(150e9)
    assert ic.nvlink_bytes_per_s_per_direction("H100-SXM5-80GB") == pytest.approx(450e9)
    assert ic.nvlink_bytes_per_s_per_direction("T4") == 0.0
    assert ic.DGX_A100_INTER_BYTES_PER_S == pytest.approx(200e9)
    with pytest.raises(ValueError, match="not in the catalogue"):
        ic.nvlink_bytes_per_s_per_direction("A100-SXM5")


# --- hierarchical all-reduce ------------------------------------------------------------------------------------

def test_hierarchical_one_node_is_a_ring():
    S = 1e9
    t = ic.hierarchical_all_reduce_time(S, 1)
    assert t == pytest.approx(ic.collective_time("all_reduce", S, 8, ic.A100_INTRA_BYTES_PER_S,
                                                 ic.A100_INTRA_LATENCY_S))


def test_hierarchical_phases_add_up_and_match_hand_formula():
    S, N, g, Bi, Be, ai, ae = 1e9, 16, 8, 240e9, 200e9, 5e-6, 10e-6
    parts = ic.hierarchical_all_reduce_breakdown(S, N, g, Bi, Be, ai, ae)
    intra = 2 * (g - 1) * ai + 2 * (g - 1) / g * S / Bi
    inter = 2 * (N - 1) * ae + 2 * (N - 1) / N * S / Be
    assert parts["reduce_scatter_s"] + parts["all_gather_s"] == pytest.approx(intra)
    assert parts["inter_all_reduce_s"] == pytest.approx(inter)
    assert parts["total_s"] == pytest.approx(intra + inter)
    assert ic.hierarchical_all_reduce_time(S, N, g, Bi, Be, ai, ae) == pytest.approx(intra + inter)


def test_hierarchical_bandwidth_term_saturates_and_tree_helps_latency():
    S = 680e6  # BERT-Large fp16 gradients
    t = [ic.hierarchical_all_reduce_time(S, N, intra_latency_s=0.0, inter_latency_s=0.0) for N in (2, 16, 128, 1024)]
    assert all(a < b for a, b in zip(t, t[1:]))
    limit = 2 * (7 / 8) * S / ic.A100_INTRA_BYTES_PER_S + 2 * S / ic.DGX_A100_INTER_BYTES_PER_S
    assert t[-1] < limit and t[-1] > 0.99 * limit
    small = 1e3
    ring = ic.hierarchical_all_reduce_time(small, 1024)
    tree = ic.hierarchical_all_reduce_time(small, 1024, inter_algorithm="tree")
    assert tree < ring / 10


def test_hierarchical_invalid_inputs():
    with pytest.raises(ValueError, match="nodes=0"):
        ic.hierarchical_all_reduce_time(1e6, 0)
    with pytest.raises(ValueError, match="gpus_per_node"):
        ic.hierarchical_all_reduce_time(1e6, 2, gpus_per_node=0)
    with pytest.raises(ValueError, match="inter_algorithm"):
        ic.hierarchical_all_reduce_time(1e6, 2, inter_algorithm="mesh")
    with pytest.raises(ValueError, match="inter_bytes_per_s"):
        ic.hierarchical_all_reduce_time(1e6, 2, inter_bytes_per_s=0)


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


def test_run_collective_rejects_bad_input():
    with pytest.raises(ValueError, match="op='alltoall'"):
        ic.run_collective("alltoall", [4096], 2)
    with pytest.raises(ValueError, match="multiple of 8 bytes"):
        ic.run_collective("all_gather", [4100], 2)
    with pytest.raises(ValueError, match="multiple of 4 bytes"):
        ic.run_collective("all_reduce", [6], 2)
    with pytest.raises(ValueError, match="world_size=0"):
        ic.run_collective("all_reduce", [4096], 0)
    with pytest.raises(ValueError, match="backend='mpi'"):
        ic.run_collective("all_reduce", [4096], 2, backend="mpi")
    with pytest.raises(ValueError, match="samples=0"):
        ic.run_collective("all_reduce", [4096], 2, samples=0)
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

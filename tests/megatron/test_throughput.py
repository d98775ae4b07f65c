"""One iteration predicted (ampere/megatron/throughput.py; chapter: Megatron-LM, section "A throughput
model built from hardware")."""

from __future__ import annotations

import pytest

from ampere import interconnect, megatron as M

CFG = M.GPTConfig(layers=24, hidden=2304, heads=24)


def test_tensor_parallel_all_reduce_uses_the_interconnect_model():
    from ampere.megatron import comms

    hw = M._hardware("A100-SXM4-80GB")
    nbytes = 2 * 2048 * 25600
    assert comms.tp_collective(hw, "all_reduce", nbytes, 8) == pytest.approx(interconnect.collective_time(
        "all_reduce", nbytes, 8, 230e9, interconnect.A100_INTRA_LATENCY_S, overhead_s=interconnect.A100_INTRA_OVERHEAD_S))
    # across two nodes the rail-aligned ring runs at the node's 8 adapters (86 % of 8 x 25 GB/s), 28 of its 30
    # hops over NVLink and 2 over the network
    net = hw.net
    assert comms.tp_collective(hw, "all_reduce", nbytes, 16) == pytest.approx(
        net.inter_overhead_s + 28 * net.intra_latency_s + 2 * net.inter_latency_s
        + 30 / 16 * nbytes / min(hw.nvl_bw, 8 * hw.ib_bw))
    assert comms.tp_collective(hw, "all_reduce", nbytes, 16) > 1.3 * comms.tp_collective(hw, "all_reduce", nbytes, 8)


def test_estimate_breakdown_sums_and_calibration():
    row = next(r for r in M.TABLE1 if r["name"] == M.CALIBRATION_RUN)
    cal = M._row_estimate(row)
    unc = M._row_estimate(row, calibrated=False)
    assert cal.tflops_per_gpu == pytest.approx(row["tflops_per_gpu"], rel=1e-9)
    assert unc.tflops_per_gpu > cal.tflops_per_gpu
    for est in (cal, unc):
        assert sum(est.breakdown.values()) == pytest.approx(est.time_per_iteration_s, rel=1e-12)
        assert list(est.breakdown) == list(M.CATEGORIES)
    assert unc.breakdown["unmodelled (system efficiency)"] == 0.0
    assert 0.85 < M.system_efficiency() < 0.95  # what a hardware model does not see in 2021: about 9 %


def test_estimate_required_fields_and_bubble():
    cfg = M.table1_config("1T")
    est = M.estimate(cfg, 3072, 3072, 8, 64)
    for name in ("tflops_per_gpu", "time_per_iteration_s", "bubble_fraction", "memory_bytes_per_gpu", "breakdown"):
        assert hasattr(est, name)
    assert est.bubble_fraction == pytest.approx(M.bubble_formula(64, 512), rel=0.1)
    flops = M.flops_per_iteration(cfg, 3072)
    assert est.tflops_per_gpu == pytest.approx(flops / 3072 / est.time_per_iteration_s / 1e12)
    model = M.flops_per_iteration(cfg, 3072, convention="model")
    assert est.model_tflops_per_gpu == pytest.approx(model / 3072 / est.time_per_iteration_s / 1e12)
    assert est.mfu == pytest.approx(est.hfu * 3 / 4, rel=1e-3)  # full recomputation: 4 passes vs 3
    assert est.causal_model_tflops_per_gpu < est.model_tflops_per_gpu
    assert "model FLOPs" in est.throughput_text() and "hardware FLOPs" in est.throughput_text()
    inter = M.estimate(cfg, 3072, 3072, 8, 64, interleave=2)
    assert inter.bubble_fraction < est.bubble_fraction
    assert inter.breakdown["pipeline sends"] > est.breakdown["pipeline sends"]
    no_sg = M.estimate(cfg, 3072, 3072, 8, 64, scatter_gather=False)
    assert no_sg.breakdown["pipeline sends"] > 2 * est.breakdown["pipeline sends"]
    norc = M.estimate(cfg, 3072, 3072, 8, 64, recompute=False)
    assert norc.time_per_iteration_s < est.time_per_iteration_s
    assert not norc.fits_in_memory  # why the paper recomputes
    with pytest.raises(ValueError, match="ddp must be one of"):
        M.estimate(cfg, 3072, 3072, 8, 64, ddp="fsdp")
    with pytest.raises(ValueError, match="not in the catalogue"):
        M.estimate(cfg, 3072, 3072, 8, 64, gpu="A200")


def test_other_gpus_run_with_notes():
    cfg = M.table1_config("145B")
    h100 = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, gpu="H100-SXM5-80GB")
    a100 = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2)
    assert h100.tflops_per_gpu > 2 * a100.tflops_per_gpu
    assert any("DGX A100" in n for n in h100.notes)
    pcie = M.estimate(M.table1_config("1.7B"), 32, 512, 1, 1, 16, gpu="A100-PCIE-40GB")
    assert pcie.gpu == "A100-PCIE-40GB"


def test_estimate_refuses_look_alike_inputs():
    with pytest.raises(ValueError, match="recompute must be one of"):
        M.estimate(CFG, 32, 512, 1, 1, recompute="no")
    with pytest.raises(TypeError, match="calibrated must be True or False"):
        M.estimate(CFG, 32, 512, 1, 1, calibrated="false")
    with pytest.raises(TypeError, match="cfg must be a GPTConfig"):
        M.estimate(None, 32, 512, 1, 1)
    with pytest.raises(TypeError, match="recompute must be one of"):
        M.estimate(CFG, 32, 512, 1, 1, recompute=1)
    with pytest.raises(TypeError, match="sequence_parallel must be True or False"):
        M.estimate(CFG, 32, 512, 1, 1, sequence_parallel="yes")


def test_recompute_names_and_aliases():
    full = M.estimate(CFG, 32, 512, 1, 1, recompute="full")
    assert M.estimate(CFG, 32, 512, 1, 1, recompute=True).time_per_iteration_s == full.time_per_iteration_s
    none = M.estimate(CFG, 32, 512, 1, 1, recompute=False)
    sel = M.estimate(CFG, 32, 512, 1, 1, recompute="selective")
    assert none.recompute == "none" and sel.recompute == "selective" and full.recompute == "full"
    assert none.time_per_iteration_s < sel.time_per_iteration_s < full.time_per_iteration_s
    cfg, B = M.table1_config("1T"), 3072
    # selective adds exactly one more forward of the attention core (4 B s^2 h per layer)
    extra = M.flops_per_iteration(cfg, B, "selective") - M.flops_per_iteration(cfg, B, "none")
    assert extra == cfg.layers * 4 * B * cfg.seq**2 * cfg.hidden


def test_default_estimate_has_no_fitted_constant():
    est = M.estimate(CFG, 32, 512, 1, 1)
    assert not est.calibrated and est.system_efficiency == 1.0
    assert est.breakdown["unmodelled (system efficiency)"] == 0.0
    cal = M.estimate(CFG, 32, 512, 1, 1, calibrated=True)
    assert cal.time_per_iteration_s > est.time_per_iteration_s


def test_sequence_parallelism_changes_time_and_memory():
    cfg = M.table1_config("145B")
    base = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, recompute="selective")
    sp = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, recompute="selective", sequence_parallel=True)
    assert sp.breakdown["other memory-bound"] < base.breakdown["other memory-bound"] / 2  # b s h kernels / t
    assert sp.memory_bytes_per_gpu < base.memory_bytes_per_gpu


def test_node_network_is_data():
    from ampere import fabrics

    cfg = M.table1_config("145B")
    dgx = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2)
    assert dgx.time_per_iteration_s == M.estimate(cfg, 1536, 2304, 8, 8, 2, 2,
                                                  network=fabrics.DGX_A100).time_per_iteration_s
    half = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, network=fabrics.DGX_A100.with_(hcas_per_node=4))
    assert half.breakdown["pipeline sends"] > dgx.breakdown["pipeline sends"]
    assert half.breakdown["data-parallel all-reduce"] > dgx.breakdown["data-parallel all-reduce"]
    with pytest.raises(TypeError, match="network must be"):
        M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, network="DGX A100")


def test_zero_stages_shard_memory_and_stage_3_adds_gathers():
    cfg = M.table1_config("18B")
    runs = {z: M.estimate(cfg, 256, 1024, 8, 1, 8, zero_stage=z) for z in range(4)}
    mems = [runs[z].memory_bytes_per_gpu for z in range(4)]
    assert mems[0] > mems[1] > mems[2] > mems[3]
    assert runs[1].time_per_iteration_s == M.estimate(cfg, 256, 1024, 8, 1, 8,
                                                      distributed_optimizer=True).time_per_iteration_s
    assert runs[3].breakdown["data-parallel all-reduce"] > runs[2].breakdown["data-parallel all-reduce"]
    with pytest.raises(ValueError, match="zero_stage"):
        M.estimate(cfg, 256, 1024, 8, 1, 8, zero_stage=4)
    with pytest.raises(ValueError, match="contradicts"):
        M.estimate(cfg, 256, 1024, 8, 1, 8, zero_stage=0, distributed_optimizer=True)


def test_estimate_says_which_figures_it_used():
    est = M.estimate(CFG, 32, 512, 1, 1)
    used = " ".join(est.figures_used)
    assert "he2024-a100-fp16-8192-randn" in used and "he2024predictable" in used and "nccl1428" in used
    mamf = " ".join(M.estimate(CFG, 32, 512, 1, 1, gemm_ceiling="mamf").figures_used)
    assert "mamf-a100-sxm4-80gb-bf16" in mamf and "bekman2024mle" in mamf
    assert "dao2022flashattention" in used and "DGX A100" in used
    assert "system efficiency" not in used
    assert "system efficiency" in " ".join(M.estimate(CFG, 32, 512, 1, 1, calibrated=True).figures_used)



def test_sequence_parallel_backward_regathers_the_input():
    """Megatron re-gathers each column-parallel GEMM's sequence-split input in the backward pass
    (megatron/core/tensor_parallel/layers.py): with SP the backward pass has more collectives than the forward."""
    from ampere.megatron import comms
    from ampere.megatron.layer_costs import layer_costs

    hw = M._hardware("A100-SXM4-80GB")
    cfg = M.table1_config("145B")
    lc = layer_costs(cfg, hw, 8, 1, sequence_parallel=True, tp_overlap=False)
    nb = 2.0 * 2048 * cfg.hidden
    ag, rs = comms.tp_collective(hw, "all_gather", nb, 8), comms.tp_collective(hw, "reduce_scatter", nb, 8)
    assert lc["fwd"]["tensor-parallel all-reduce"] == pytest.approx(2 * ag + 2 * rs)
    assert lc["bwd"]["tensor-parallel all-reduce"] == pytest.approx(4 * ag + 2 * rs)  # 2 AG re-gathers more
    over = layer_costs(cfg, hw, 8, 1, sequence_parallel=True, tp_overlap=True)
    assert 2 * ag < over["bwd"]["tensor-parallel all-reduce"] < lc["bwd"]["tensor-parallel all-reduce"]


def test_estimate_reads_one_set_of_options_for_time_and_memory():
    cfg = M.GPTConfig(32, 4096, 32, 32000, 4096, ffn_hidden=11008, glu=True, biases=False, norm="rmsnorm",
                      positions="rope", tied_embeddings=False)
    plain = M.estimate(cfg, 8, 64, 1, 1, 1, recompute="none")
    flash = M.estimate(cfg, 8, 64, 1, 1, 1, recompute="none", flash_attention=True)
    assert flash.memory["activations"] < plain.memory["activations"] / 2  # no s x s scores kept
    assert flash.breakdown["attention"] < plain.breakdown["attention"]
    assert dict(flash.options)["flash_attention"] and flash.memory["flash_attention"]
    assert flash.memory["convention"] == "megatron" and flash.memory["capacity"] < 80 * 2**30
    fsdp = M.estimate(cfg, 8, 64, 1, 1, 1, recompute="none", software="fsdp", zero_stage=3)
    assert fsdp.software == "fsdp" and dict(fsdp.options)["flash_attention"]  # the stack's choice
    assert fsdp.memory["zero_stage"] == 3


def test_stacks_change_what_overlaps_and_refuse_what_they_cannot_do():
    cfg = M.table1_config("145B")
    with pytest.raises(ValueError, match="no interleaved"):
        M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, software="megatron-deepspeed")
    ds = M.estimate(cfg, 1536, 2304, 8, 8, 2, 1, software="megatron-deepspeed")
    mg = M.estimate(cfg, 1536, 2304, 8, 8, 2, 1, software="megatron-2022")
    assert mg.breakdown["tensor-parallel all-reduce"] < ds.breakdown["tensor-parallel all-reduce"]
    with pytest.raises(ValueError, match="software"):
        M.estimate(cfg, 1536, 2304, 8, 8, 2, 1, software="torchtitan")
    with pytest.raises(ValueError, match="precision"):
        M.estimate(cfg, 1536, 2304, 8, 8, 2, 1, precision="fp8")
    bf16 = M.estimate(cfg, 1536, 2304, 8, 8, 2, 1, precision="bf16")
    fp16 = M.estimate(cfg, 1536, 2304, 8, 8, 2, 1, precision="fp16")
    assert bf16.breakdown["gradient accumulation"] > fp16.breakdown["gradient accumulation"]  # fp32 main grads


def test_zero3_prefetch_hides_gathers():
    cfg = M.GPTConfig(32, 4096, 32)
    kw = dict(recompute="full", zero_stage=3, flash_attention=True)
    none = M.estimate(cfg, 64, 512, 1, 1, 8, software=M.STACKS["fsdp"].with_(zero3_prefetch="none"), **kw)
    fwd = M.estimate(cfg, 64, 512, 1, 1, 8, software="fsdp", **kw)
    both = M.estimate(cfg, 64, 512, 1, 1, 8, software=M.STACKS["fsdp"].with_(zero3_prefetch="both"), **kw)
    dp = [e.breakdown["data-parallel all-reduce"] for e in (none, fwd, both)]
    assert dp[0] > dp[1] > dp[2] > 0

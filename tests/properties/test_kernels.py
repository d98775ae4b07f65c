"""Properties of ampere.kernels: occupancy, tiling, pipelining, L2 persistence, attention traffic, banks, launch
order, the CUTLASS hierarchy and fusion answer finite figures within their bounds and refuse bad input by name;
the Triton kernels (in the interpreter without a GPU), the views, the figures and ``bench kernels`` refuse
theirs before anything runs."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import device, kernels, specs

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, catalogue_names, covers,
                      not_lists, rejects, rejects_any)

kernels.prepare()  # TRITON_INTERPRET=1 before triton's first import when no GPU is usable (the chapter's setup)

INFO = device.DeviceInfo("cpu", "a CPU")
NOT_INFO = st.one_of(st.integers(), st.text(max_size=3), st.builds(object))
#: catalogue GPUs with an sm-limits row (every one of them)
GPUS = specs.names()


def beyond(lo, hi):
    """Bad numbers for an argument in (lo, hi] whose ``hi`` may exceed 1e12: non-numbers, NaN, inf, <= lo, > hi."""
    return st.one_of(bad_floats(lo, None), st.floats(min_value=hi, exclude_min=True, allow_nan=False,
                                                     allow_infinity=False))


@covers(kernels.SMLimits, kernels.sm_limits, kernels.Occupancy, kernels.occupancy, kernels.occupancy_rows)
@given(catalogue_names(), st.integers(1, 1024), st.integers(0, 255), st.integers(0, 96 * 1024), st.data())
def test_occupancy_never_exceeds_the_sm(gpu, threads, regs, smem, data):
    lim = answers(kernels.sm_limits, gpu, type_=kernels.SMLimits)
    assert lim.max_warps_per_sm * 32 == lim.max_threads_per_sm
    try:
        o = kernels.occupancy(gpu, threads, regs, smem)
    except ValueError as exc:  # a configuration this GPU cannot launch says which limit
        assert any(w in str(exc) for w in ("threads_per_block", "registers", "shared_bytes_per_block"))
    else:
        assert 0 <= o.fraction <= 1 and o.active_warps == o.blocks_per_sm * o.warps_per_block
        assert o.blocks_per_sm == min(o.blocks_by.values()) and o.limiter
        good = {f: getattr(o, f) for f in o.__dataclass_fields__}
        rejects_any(data, kernels.Occupancy, good, {
            "threads_per_block": bad_ints(1, 1 << 16), "active_warps": st.just(o.active_warps + 1),
            "blocks_by": st.one_of(st.just([1]), st.just({"warps": -1}), st.just({"warps": 1.5})),
            "gpu": bad_names(GPUS)}, field=lambda a: f"Occupancy.{a}")
    rows = answers(kernels.occupancy_rows, threads, regs, smem, [gpu], type_=list)
    assert len(rows) == 1
    rejects_any(data, kernels.occupancy, {"gpu": gpu, "threads_per_block": 128, "registers_per_thread": 32,
                                          "shared_bytes_per_block": 0}, {
        "gpu": bad_names(GPUS), "threads_per_block": bad_ints(1, lim.max_threads_per_block),
        "registers_per_thread": bad_ints(0, lim.max_registers_per_thread),
        "shared_bytes_per_block": bad_ints(0, lim.max_shared_bytes_per_block)})
    rejects_any(data, kernels.occupancy_rows, {"threads_per_block": 128, "registers_per_thread": 32,
                                               "shared_bytes_per_block": 0}, {
        "threads_per_block": bad_ints(1, 1 << 16), "registers_per_thread": bad_ints(0, 1 << 16),
        "shared_bytes_per_block": bad_ints(0, 1 << 30),
        "gpus": st.one_of(st.text(min_size=1, max_size=4), st.just([]), st.just(["NoSuchGPU"]))})
    rejects_any(data, kernels.SMLimits, {f: getattr(lim, f) for f in lim.__dataclass_fields__}, {
        "max_warps_per_sm": bad_ints(1, 1 << 30), "compute_capability": st.sampled_from([(8,), "8.0", (8, 0, 1)]),
        "gpu": bad_names(GPUS), "source": bad_strings(allow_empty=True)}, field=lambda a: f"SMLimits.{a}")


@covers(kernels.TileCost, kernels.tile_cost, kernels.tile_sweep, kernels.min_square_tile)
@given(st.integers(1, 512), st.integers(1, 512), st.integers(1, 256), st.integers(1, 8), st.sampled_from([1, 2, 4]),
       catalogue_names(), st.data())
def test_a_tile_reuses_each_byte_it_loads(bm, bn, bk, stages, dtype_bytes, gpu, data):
    t = answers(kernels.tile_cost, bm, bn, bk, stages=stages, dtype_bytes=dtype_bytes, type_=kernels.TileCost)
    assert t.intensity_flop_per_byte == pytest.approx(2 * bm * bn / ((bm + bn) * dtype_bytes))
    assert t.shared_bytes == (bm + bn) * bk * dtype_bytes * stages and isinstance(t.fits(gpu), bool)
    assert isinstance(t.compute_bound(gpu, "fp32"), bool)
    assert len(answers(kernels.tile_sweep, [bm, bn], block_k=bk, type_=list)) == 4
    side = answers(kernels.min_square_tile, gpu, "hbm", "fp32", type_=int)
    assert kernels.tile_cost(side, side, 32, dtype_bytes=2).compute_bound(gpu, "fp32")
    rejects_any(data, kernels.tile_cost, {"block_m": bm, "block_n": bn, "block_k": bk}, {
        "block_m": bad_ints(1, 1 << 16), "block_n": bad_ints(1, 1 << 16), "block_k": bad_ints(1, 1 << 16),
        "stages": bad_ints(1, 16), "num_warps": bad_ints(1, 32), "dtype_bytes": bad_ints(1, 8)})
    rejects(kernels.tile_sweep, "blocks", data.draw(st.one_of(not_lists(), st.just([]), st.just([0]))))
    rejects(t.fits, "gpu", data.draw(bad_names(GPUS)))
    rejects(t.compute_bound, "precision", gpu, data.draw(bad_names(specs.ALL_PRECISIONS)))
    rejects_any(data, kernels.min_square_tile, {"gpu": gpu}, {
        "gpu": bad_names(GPUS), "level": bad_names(["hbm", "l2"]), "dtype_bytes": bad_ints(1, 8)})
    rejects_any(data, kernels.TileCost, {f: getattr(t, f) for f in t.__dataclass_fields__}, {
        "block_m": bad_ints(1, 1 << 16), "intensity_flop_per_byte": bad_floats(0.0, None),
        "stages": bad_ints(1, 16)}, field=lambda a: f"TileCost.{a}")


@covers(kernels.PipelineTime, kernels.pipeline_time, kernels.bytes_in_flight)
@given(st.integers(1, 10 ** 6), st.floats(1e-9, 1.0), st.floats(1e-9, 1.0), st.integers(1, 16), st.data())
def test_a_deeper_pipeline_is_never_slower_than_one_stage(tiles, load, compute, stages, data):
    p = answers(kernels.pipeline_time, tiles, load, compute, stages, type_=kernels.PipelineTime)
    one = kernels.pipeline_time(tiles, load, compute, 1)
    assert p.total_s <= one.total_s * (1 + 1e-12) and p.speedup_vs_one_stage >= 1 - 1e-12
    assert answers(kernels.bytes_in_flight, 2e12, 1e-6, type_=float) == pytest.approx(2e6)
    rejects_any(data, kernels.pipeline_time, {"tiles": tiles, "load_s": load, "compute_s": compute, "stages": stages}, {
        "tiles": bad_ints(1, 1 << 30), "load_s": bad_floats(0.0, 1e6), "compute_s": bad_floats(0.0, 1e6),
        "stages": bad_ints(1, 16)})
    rejects_any(data, kernels.bytes_in_flight, {"bandwidth_bytes_per_s": 1e12, "latency_s": 1e-6}, {
        "bandwidth_bytes_per_s": beyond(0.0, 1e18), "latency_s": bad_floats(0.0, 1.0)})
    rejects_any(data, kernels.PipelineTime, {f: getattr(p, f) for f in p.__dataclass_fields__}, {
        "bound": bad_names(["no overlap", "compute", "load latency"]), "total_s": bad_floats(0.0, None)},
        field=lambda a: f"PipelineTime.{a}")


@covers(kernels.L2Persistence, kernels.l2_persistence)
@given(catalogue_names(), st.floats(1.0, 1e9), st.floats(0.0, 1e9), st.floats(0.0, 1.0), st.integers(1, 100),
       st.data())
def test_a_persisting_window_never_adds_traffic_beyond_the_first_pass(gpu, ws, stream, carve_share, passes, data):
    l2 = specs.get(gpu).l2_bytes
    r = answers(kernels.l2_persistence, gpu, ws, stream, carve_share * l2, passes, type_=kernels.L2Persistence)
    first = ws + stream
    assert r.hbm_bytes_default >= first and r.hbm_bytes_persisting >= first
    assert r.hbm_bytes_default <= passes * first * (1 + 1e-12) and r.traffic_ratio > 0
    rejects_any(data, kernels.l2_persistence, {"gpu": gpu, "working_set_bytes": ws, "streaming_bytes": stream,
                                               "carveout_bytes": 0.0}, {
        "gpu": bad_names(GPUS), "working_set_bytes": beyond(0.0, 1e15), "passes": bad_ints(1, 1 << 30),
        "streaming_bytes": st.sampled_from([-1.0, math.nan, math.inf, "1", None, 1e16]),
        "carveout_bytes": st.sampled_from([-1.0, math.nan, "0", None, float(l2) * 2])})
    rejects_any(data, kernels.L2Persistence, {f: getattr(r, f) for f in r.__dataclass_fields__}, {
        "passes": bad_ints(1, 1 << 30), "working_set_bytes": bad_floats(0.0, None), "gpu": bad_names(GPUS)},
        field=lambda a: f"L2Persistence.{a}")


ALGOS = ("standard", "flash1", "flash2")


@covers(kernels.attention_hbm_bytes, kernels.attention_flops, kernels.attention_model_ms)
@given(st.integers(1, 8192), st.sampled_from([16, 32, 64, 128]), st.sampled_from(ALGOS), st.booleans(),
       catalogue_names(), st.data())
def test_flash_attention_moves_fewer_bytes_than_standard_at_long_sequences(seq, d, algo, causal, gpu, data):
    m = specs.get(gpu).max_shared_bytes_per_sm
    got = answers(kernels.attention_hbm_bytes, seq, d, m, algo, causal=causal, type_=float)
    assert got >= 4 * seq * d * 2 - 1e-9  # Q, K, V read and O written at least once
    if seq >= 4096 and algo != "standard":
        assert got < kernels.attention_hbm_bytes(seq, d, m, "standard")
    flops = answers(kernels.attention_flops, seq, d, causal, algorithm=algo, type_=float)
    assert flops == 4.0 * seq * seq * d * (0.5 if causal else 1.0)
    if "bf16" in specs.get(gpu).fma_per_clk_per_sm:
        assert answers(kernels.attention_model_ms, gpu, 1, 1, seq, d, algo, causal=causal, type_=float) > 0
    else:  # the model times bf16: a GPU without it is refused by name
        rejects(kernels.attention_model_ms, "gpu", gpu, 1, 1, seq, d, algo, causal=causal)
        gpu = "a100-sxm4-80gb"
    rejects_any(data, kernels.attention_hbm_bytes, {"seq": seq, "head_dim": d, "sram_bytes": m, "algorithm": algo}, {
        "seq": bad_ints(1, 1 << 22), "head_dim": bad_ints(1, 1 << 12), "algorithm": bad_names(ALGOS),
        "sram_bytes": bad_floats(0.0, 1 << 30).filter(lambda v: v is not None), "dtype_bytes": bad_ints(1, 8),
        "passes": bad_names(kernels.PASSES), "block_m": bad_ints(1, 1 << 16), "causal": bad_booleans(),
        "l2_reuse": bad_booleans()})
    rejects(kernels.attention_hbm_bytes, "flash2", seq, d, None, "flash2", passes="forward+backward")
    rejects_any(data, kernels.attention_model_ms, {"gpu": gpu, "batch": 1, "heads": 1, "seq": seq, "head_dim": d,
                                                   "algorithm": algo}, {
        "gpu": bad_names(GPUS), "batch": bad_ints(1, 1 << 20), "heads": bad_ints(1, 1 << 12),
        "algorithm": bad_names(ALGOS)})
    rejects(kernels.attention_flops, "causal", seq, d, data.draw(bad_booleans()))


@covers(kernels.shared_memory_bandwidth, kernels.BankConflict, kernels.bank_conflicts, kernels.tile_offset,
        kernels.tile_column_read, kernels.bank_map, kernels.column_conflicts)
@given(st.integers(1, 64), st.sampled_from(["row-major", "padded", "xor"]), catalogue_names(), st.data())
def test_swizzled_columns_read_without_conflicts(row_words, layout, gpu, data):
    assert answers(kernels.shared_memory_bandwidth, gpu, type_=float) > 0
    words = 32 * row_words if layout == "xor" else row_words
    conflict = answers(kernels.tile_column_read, 4 * words, layout=layout, gpu=gpu, type_=kernels.BankConflict)
    assert 1 <= conflict.degree <= 32 and 0 < conflict.efficiency <= 1
    if layout == "xor":
        assert conflict.degree == 1  # the swizzle's point
    assert answers(kernels.column_conflicts, [words], layout, gpu, type_=list) == [conflict.degree]
    assert answers(kernels.tile_offset, 1, 0, 4 * words, layout=layout, gpu=gpu, type_=int) >= 4 * words
    banks = answers(kernels.bank_map, 2, 4 * words, layout=layout, gpu=gpu, type_=list)
    assert len(banks) == 2 and all(0 <= b < 32 for row in banks for b in row)
    one = answers(kernels.bank_conflicts, [4 * t for t in range(32)], gpu=gpu, type_=kernels.BankConflict)
    assert one.degree == 1 and kernels.bank_conflicts([0] * 32).degree == 1  # a broadcast
    rejects_any(data, kernels.bank_conflicts, {"addresses": [0, 4]}, {
        "addresses": st.one_of(not_lists(), st.just([]), st.just([2]), st.just([-4]), st.just(list(range(0, 8200, 8)))),
        "access_bytes": st.sampled_from([0, 2, 32, 4.0, True]), "gpu": bad_names(GPUS)})
    rejects_any(data, kernels.tile_offset, {"row": 0, "column_byte": 0, "row_bytes": 128}, {
        "row": bad_ints(0, 1 << 20), "column_byte": st.sampled_from([-4, 128, 2, 4.0]),
        "row_bytes": bad_ints(1, 1 << 20), "layout": bad_names(kernels.LAYOUTS), "gpu": bad_names(GPUS)})
    rejects(kernels.tile_column_read, "threads", 128, threads=data.draw(bad_ints(1, 32).filter(lambda v: v is not None)))
    rejects_any(data, kernels.bank_map, {"rows": 2, "row_bytes": 128}, {
        "rows": bad_ints(1, 256), "row_bytes": bad_ints(1, 1 << 16), "layout": bad_names(kernels.LAYOUTS)})
    rejects(kernels.column_conflicts, "row_words", data.draw(st.one_of(not_lists(), st.just([]), st.just([0]))))
    rejects_any(data, kernels.BankConflict, {"words": (0, 1), "banks": (0, 1), "degree": 1, "n_banks": 32}, {
        "words": st.one_of(not_lists(), st.just((-1, 0))), "banks": st.one_of(st.just((0,)), st.just((0, 32))),
        "degree": bad_ints(1, 1 << 16), "n_banks": bad_ints(1, 1024)}, field=lambda a: f"BankConflict.{a}")


@covers(kernels.program_tile, kernels.program_order, kernels.blocks_loaded, kernels.LaunchTraffic,
        kernels.launch_traffic)
@given(st.integers(1, 24), st.integers(1, 24), st.integers(1, 8), st.data())
def test_every_tile_is_computed_once_in_any_launch_order(gm, gn, group, data):
    order = answers(kernels.program_order, gm, gn, group, type_=list)
    assert sorted(order) == [(m, n) for m in range(gm) for n in range(gn)]
    pid = data.draw(st.integers(0, gm * gn - 1))
    assert answers(kernels.program_tile, pid, gm, gn, group, type_=tuple) == order[pid]
    assert answers(kernels.blocks_loaded, gm, gn, 4, pid + 1, group, type_=int) >= 8
    t = answers(kernels.launch_traffic, 128 * gm, 128 * gn, 256, group_m=group, window=4, type_=kernels.LaunchTraffic)
    assert t.compulsory_bytes <= t.hbm_bytes <= t.l2_bytes and t.time_s("A100-SXM4-80GB") > 0
    rejects_any(data, kernels.program_tile, {"pid": 0, "grid_m": gm, "grid_n": gn}, {
        "pid": st.one_of(st.just(gm * gn), st.just(-1), st.just(1.0), st.just(True)),
        "grid_m": bad_ints(1, 1 << 22), "grid_n": bad_ints(1, 1 << 22), "group_m": bad_ints(1, 1 << 22)})
    rejects(kernels.program_order, "grid_m", 1 << 12, 1 << 12)  # 16.8 million programs: more than the model walks
    rejects_any(data, kernels.blocks_loaded, {"grid_m": gm, "grid_n": gn, "k_blocks": 4, "programs": 1}, {
        "k_blocks": bad_ints(1, 1 << 22), "programs": st.sampled_from([0, gm * gn + 1, 1.0, True])})
    rejects_any(data, kernels.launch_traffic, {"m": 256, "n": 256, "k": 256}, {
        "m": bad_ints(1, 1 << 24), "block_m": bad_ints(1, 4096), "window": bad_ints(1, 1 << 16),
        "dtype_bytes": bad_ints(1, 8)})
    rejects(t.time_s, "l2_bytes_per_s", "A100-SXM4-80GB", l2_bytes_per_s=data.draw(beyond(0.0, 1e18).filter(
        lambda v: v is not None)))
    rejects_any(data, kernels.LaunchTraffic, {f: getattr(t, f) for f in t.__dataclass_fields__}, {
        "m": bad_ints(1, 1 << 24), "hbm_bytes": bad_floats(0.0, None)}, field=lambda a: f"LaunchTraffic.{a}")


PRECISIONS = [r["precision"] for r in kernels.mma_shapes()]
#: The precisions CUTLASS's Sm80 defaults cover (tf32 and int4 have mma shapes but no default configuration).
CUTLASS_PRECISIONS = ["fp16", "bf16", "int8", "fp64"]


@covers(kernels.mma_shapes, kernels.cutlass_default, kernels.GemmTiling, kernels.gemm_tiling, kernels.tiling_rows)
@given(st.integers(1, 1 << 14), st.integers(1, 1 << 14), st.integers(1, 1 << 14),
       st.sampled_from(CUTLASS_PRECISIONS), st.data())
def test_the_cutlass_hierarchy_counts_every_mma(m, n, k, precision, data):
    assert answers(kernels.mma_shapes, precision, type_=list) and answers(kernels.mma_shapes, type_=list)
    d = answers(kernels.cutlass_default, precision, type_=dict)
    t = answers(kernels.gemm_tiling, m, n, k, precision=precision, type_=kernels.GemmTiling)
    assert t.threadblock == tuple(d["threadblock"]) and t.ctas * t.threadblock[0] * t.threadblock[1] >= m * n
    assert t.mma_total * t.flops_per_mma >= 2 * m * n * k and t.warps_per_cta >= 1
    rows = answers(kernels.tiling_rows, t, type_=list)
    assert [r["level"] for r in rows] == ["GEMM", "threadblock", "warp", "mma.sync"]
    rejects(kernels.mma_shapes, "precision", data.draw(bad_names(PRECISIONS).filter(lambda v: v is not None)))
    rejects(kernels.cutlass_default, "precision", data.draw(bad_names(CUTLASS_PRECISIONS)))
    rejects_any(data, kernels.gemm_tiling, {"m": m, "n": n, "k": k, "precision": precision}, {
        "m": bad_ints(1, 1 << 24), "precision": bad_names(CUTLASS_PRECISIONS), "gpu": bad_names(GPUS),
        "threadblock": st.one_of(not_lists().filter(lambda v: v is not None), st.just((128, 128)),
                                 st.just((0, 128, 32))),
        "warp": st.sampled_from([(48, 64, 32), 64, (64, 64)]), "instruction": st.sampled_from([(16, 16, 16), "mma"]),
        "stages": bad_ints(1, 16).filter(lambda v: v is not None)})
    rejects(kernels.tiling_rows, "t", data.draw(st.one_of(st.integers(), st.just({"m": 1}), st.none())))
    rejects_any(data, kernels.GemmTiling, {f: getattr(t, f) for f in t.__dataclass_fields__}, {
        "threadblock": st.just((128, 128)), "precision": bad_names(PRECISIONS), "stages": bad_ints(1, 16),
        "dtype_bytes": st.sampled_from([3, "2", None, True])}, field=lambda a: f"GemmTiling.{a}")


@covers(kernels.FusionOp, kernels.FusionTraffic, kernels.fusion_traffic, kernels.bias_gelu_epilogue,
        kernels.residual_layernorm)
@given(st.integers(1, 1 << 16), st.integers(1, 1 << 14), st.sampled_from([1, 2, 4]), st.data())
def test_fusing_a_chain_never_adds_traffic(tokens, hidden, dtype_bytes, data):
    for f in (answers(kernels.bias_gelu_epilogue, tokens, hidden, dtype_bytes=dtype_bytes, type_=kernels.FusionTraffic),
              answers(kernels.residual_layernorm, tokens, hidden, dtype_bytes, type_=kernels.FusionTraffic)):
        assert 0 < f.fused_bytes < f.unfused_bytes and f.saved_bytes > 0 and f.saved_s() > 0
    ops = [answers(kernels.FusionOp, "a", ("x",), ("y",), type_=kernels.FusionOp), kernels.FusionOp("b", ("y",), ("z",))]
    t = answers(kernels.fusion_traffic, ops, {"x": 1.0, "y": 2.0, "z": 4.0}, ["z"], type_=kernels.FusionTraffic)
    assert (t.unfused_bytes, t.fused_bytes, t.kernels) == (9.0, 5.0, 2)
    rejects_any(data, kernels.fusion_traffic, {"ops": ops, "sizes": {"x": 1.0, "y": 2.0, "z": 4.0}, "outputs": ["z"]}, {
        "ops": st.one_of(not_lists(), st.just([]), st.just(["op"])),
        "sizes": st.one_of(st.just([1.0]), st.just({"x": 1.0}), st.just({"x": -1.0, "y": 2.0, "z": 4.0})),
        "outputs": st.one_of(st.text(min_size=1, max_size=3), st.just(["x"]), st.just([1]))})
    rejects_any(data, kernels.FusionOp, {"name": "k", "reads": ("x",), "writes": ("y",)}, {
        "name": bad_strings(), "reads": st.one_of(st.text(min_size=1, max_size=3), st.just((1,))),
        "writes": st.one_of(st.just(()), st.text(min_size=1, max_size=3))}, field=lambda a: f"FusionOp.{a}")
    rejects_any(data, kernels.FusionTraffic, {"unfused_bytes": 2.0, "fused_bytes": 1.0, "kernels": 2}, {
        "unfused_bytes": bad_floats(0.0, None, strict=False), "fused_bytes": st.just(3.0),
        "kernels": bad_ints(1, 1000)}, field=lambda a: f"FusionTraffic.{a}")
    rejects(kernels.bias_gelu_epilogue, "ffn", tokens, hidden, data.draw(bad_ints(1, 1 << 22).filter(
        lambda v: v is not None)))
    rejects(kernels.residual_layernorm, "tokens", data.draw(bad_ints(1, 1 << 24)), hidden)
    rejects(t.saved_s, "bytes_per_s", "A100-SXM4-80GB", data.draw(beyond(0.0, 1e18).filter(lambda v: v is not None)))


@covers(kernels.published_sram_estimate, kernels.published_attention, kernels.published_flash_ratios,
        kernels.published_grouping, kernels.attention_points, kernels.hierarchy_rows)
@given(st.lists(catalogue_names(), min_size=1, max_size=3), st.data())
def test_published_figures_and_the_hierarchy_table(gpus, data):
    est = answers(kernels.published_sram_estimate, "A100-SXM4-80GB", type_=tuple)
    assert est[0] > 0 and est[1].source
    assert answers(kernels.published_sram_estimate, "T4", type_=type(None)) is None
    assert len(answers(kernels.published_attention, type_=list)) == 2
    time_ratio, traffic_ratio = answers(kernels.published_flash_ratios, type_=tuple)
    assert time_ratio > 1 and traffic_ratio > 1
    assert answers(kernels.published_grouping, type_=list)
    times, traffic = answers(kernels.attention_points, type_=tuple)
    assert len(times) == len(traffic) == 2
    rows = answers(kernels.hierarchy_rows, gpus, {gpus[0]: (5e12, "a sweep")}, {gpus[0]: 2 ** 20}, type_=list)
    assert len(rows) == 4 * len(gpus)
    rejects(kernels.published_sram_estimate, "gpu", data.draw(bad_names(GPUS)))
    rejects_any(data, kernels.hierarchy_rows, {"gpus": gpus}, {
        "gpus": st.one_of(st.text(min_size=1, max_size=4), st.just([]), st.just(["NoSuchGPU"])),
        "l2_read": st.sampled_from([1.5, "x", {"NoSuchGPU": (1.0, "s")}, {gpus[0]: 5e12}, {gpus[0]: (-1.0, "s")}]),
        "l2_reported": st.sampled_from([3, "x", {gpus[0]: 0}, {gpus[0]: 1.5}, {"NoSuchGPU": 1}])})


@covers(kernels.triton_available, kernels.interpreting, kernels.prepare, kernels.matmul, kernels.flash_attention,
        kernels.naive_attention)
@settings(max_examples=5)  # each example runs the Triton interpreter
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 40), st.data())
def test_the_triton_kernels_match_torch_and_refuse_bad_tensors(m, k, n, data):
    import torch

    assert answers(kernels.triton_available, type_=bool) and answers(kernels.prepare, type_=bool)
    dev = "cpu" if answers(kernels.interpreting, type_=bool) else "cuda"
    g = torch.Generator().manual_seed(m * k * n)
    a, b = torch.randn(m, k, generator=g).to(dev), torch.randn(k, n, generator=g).to(dev)
    c = answers(kernels.matmul, a, b, block_m=16, block_n=16, block_k=16, type_=torch.Tensor)
    assert float((c - a @ b).abs().max()) <= 1e-2 * max(1.0, float((a @ b).abs().max()))
    q = torch.randn(1, 2, m, 16, generator=g).to(dev)
    out = answers(kernels.flash_attention, q, q, q, block_m=16, block_n=16, type_=torch.Tensor)
    ref = answers(kernels.naive_attention, q, q, q, type_=torch.Tensor)
    assert float((out - ref).abs().max()) <= 1e-3
    rejects_any(data, kernels.matmul, {"a": a, "b": b}, {
        "a": st.one_of(st.just([[1.0]]), st.just(torch.ones(2)), st.just(torch.ones(2, 2, dtype=torch.int32))),
        "b": st.just(torch.ones(k + 1, n)), "block_m": st.sampled_from([0, 8, 24, 2048, 16.0, True]),
        "group_m": bad_ints(1, 1 << 16), "num_warps": st.sampled_from([0, 3, 64]), "num_stages": bad_ints(1, 8)})
    bad_qkv = st.one_of(st.just(torch.ones(2, 2)), st.just(torch.ones(1, 2, m + 1, 16)), st.just("q"),
                        st.just(torch.ones(1, 1, 2, 512)))
    rejects_any(data, kernels.flash_attention, {"q": q, "k": q, "v": q}, {
        "q": bad_qkv, "k": bad_qkv, "causal": bad_booleans(), "block_n": st.sampled_from([0, 12, 4096]),
        "num_warps": st.sampled_from([0, 3, 64])})
    rejects_any(data, kernels.naive_attention, {"q": q, "k": q, "v": q}, {"v": bad_qkv, "causal": bad_booleans()})


@covers(kernels.show_matmul, kernels.show_attention, kernels.show_profile)
@settings(max_examples=2)  # each example draws or profiles
@given(st.data())
def test_the_views_show_published_figures_without_a_gpu(data):
    import matplotlib.pyplot as plt

    try:
        assert answers(kernels.show_matmul, INFO, type_=type(None)) is None
        assert answers(kernels.show_attention, None, type_=type(None)) is None
        assert answers(kernels.show_profile, INFO, type_=type(None), within_s=30) is None
        for view in (kernels.show_matmul, kernels.show_attention, kernels.show_profile):
            rejects(view, "info", data.draw(NOT_INFO))
        rejects_any(data, kernels.show_attention, {"info": INFO}, {
            "batch": bad_ints(1, 1 << 10), "heads": bad_ints(1, 1 << 10), "seq": bad_ints(1, 1 << 17),
            "head_dim": st.sampled_from([0, 48, 256, 64.0, True])})
    finally:
        plt.close("all")


@covers(kernels.plot_tile_intensity, kernels.plot_tile_shared, kernels.plot_pipeline, kernels.plot_occupancy_registers,
        kernels.plot_littles_law, kernels.plot_l2_persistence, kernels.plot_attention_traffic,
        kernels.plot_bank_conflicts, kernels.plot_launch_order)
@settings(max_examples=2)  # each example draws nine figures
@given(st.lists(catalogue_names(), min_size=1, max_size=2), st.data())
def test_the_figures_draw_on_the_axes_they_are_given(gpus, data):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    fig3, axes = plt.subplots(1, 3)
    try:
        for plot, kwargs in ((kernels.plot_tile_intensity, {"gpus": gpus}), (kernels.plot_tile_shared, {"gpus": gpus}),
                             (kernels.plot_pipeline, {"ratios": [0.5, 2.0], "tiles": 8}),
                             (kernels.plot_occupancy_registers, {"gpus": gpus, "threads": 128}),
                             (kernels.plot_littles_law, {"gpus": gpus, "latencies_ns": [100, 500]}),
                             (kernels.plot_l2_persistence, {"gpu": gpus[0], "working_sets_mib": [4]}),
                             (kernels.plot_attention_traffic, {"gpus": gpus})):
            ax.clear()  # a fresh linear axes for each figure (one draws a log axis)
            assert answers(plot, ax, **kwargs, type_=type(None)) is None
            rejects(plot, "ax", data.draw(st.one_of(st.integers(), st.none(), st.text(max_size=3))), **kwargs)
        assert answers(kernels.plot_bank_conflicts, list(axes), type_=type(None)) is None
        assert answers(kernels.plot_launch_order, axes, grid=6, group_m=2, first=6, type_=type(None)) is None
        rejects(kernels.plot_bank_conflicts, "axes", list(axes[:2]))
        rejects(kernels.plot_launch_order, "axes", "abc")
        rejects_any(data, kernels.plot_launch_order, {"axes": list(axes)}, {
            "grid": bad_ints(1, 64), "first": st.sampled_from([0, 82, 1.0]), "window": bad_ints(1, 1 << 16)})
        rejects_any(data, kernels.plot_tile_intensity, {"ax": ax}, {
            "gpus": st.one_of(st.text(min_size=1, max_size=3), st.just([]), st.just(["NoSuchGPU"])),
            "precision": bad_names(specs.ALL_PRECISIONS)})
        rejects(kernels.plot_pipeline, "ratios", ax, ratios=data.draw(st.one_of(not_lists(), st.just([0.0]))))
        rejects(kernels.plot_l2_persistence, "streaming_mib", ax, streaming_mib=-1.0)
        rejects(kernels.plot_bank_conflicts, "row_words", list(axes), row_words=data.draw(st.sampled_from([0, 33, 8])))
    finally:
        plt.close(fig)
        plt.close(fig3)


@covers(kernels.bench_main)
@given(st.data())
def test_bench_refuses_bad_arguments_before_measuring(data):
    rejects(kernels.bench_main, "argv", data.draw(st.one_of(st.text(min_size=1, max_size=5), st.integers(),
                                                             st.just([1]))))
    with pytest.raises(SystemExit) as exit_:
        kernels.bench_main(data.draw(st.sampled_from([["--device", "tpu"], ["--no-such-option"], ["--out"]])))
    assert exit_.value.code == 2

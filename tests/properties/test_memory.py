"""Properties of ampere.memory: weights and KV cache, training state (ZeRO, conventions), activations, the one
capacity rule and what fits. Valid inputs give finite bytes that grow and shrink the way the arithmetic says;
bad inputs are refused with the argument named."""

import math

from hypothesis import given
from hypothesis import strategies as st

from ampere import memory as mem
from ampere import transformer as tr

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, catalogue_names, covers,
                      finite_floats, not_lists, rejects, rejects_any)

MODELS = sorted({*tr.PRESETS, *tr.SIZE_CLASSES})


def beyond(lo, hi, *, strict=True):
    """Bad numbers for a bound far above 10**12 (the harness's 'huge' is valid there): below ``lo``, NaN, inf,
    non-numbers, and ten times ``hi``."""
    return st.one_of(bad_floats(lo, strict=strict), st.just(10.0 * hi))
STAGES = st.integers(0, 3)
SHAPE = tr.preset("llama2-7b")


@covers(mem.weight_bytes, mem.group_scale_overhead_bits, mem.kv_bytes_per_token, mem.kv_cache_bytes)
@given(finite_floats(1, 1e13), st.sampled_from(sorted(mem.FORMAT_BITS)), st.integers(1, 4096),
       st.sampled_from(MODELS), st.integers(0, 200_000), st.integers(1, 256), st.data())
def test_weights_and_kv_cache(params, fmt, group, model, context, batch, data):
    scales = answers(mem.group_scale_overhead_bits, group, type_=float)
    assert scales == 16 / group
    assert answers(mem.weight_bytes, params, fmt, scales, type_=float) == params * (mem.FORMAT_BITS[fmt] + scales) / 8
    per_token = answers(mem.kv_bytes_per_token, model, fmt, type_=float)
    shape = tr.preset(model)
    assert per_token == 2 * shape.layers * shape.kv_dim * mem.FORMAT_BITS[fmt] / 8
    assert answers(mem.kv_cache_bytes, model, context, batch, fmt, type_=float) == per_token * context * batch
    rejects_any(data, mem.weight_bytes, {"params": params}, {
        "params": beyond(0.0, mem.weights.MAX_PARAMS), "fmt": bad_names(mem.FORMAT_BITS),
        "overhead_bits": bad_floats(0.0, mem.weights.MAX_BITS, strict=False).filter(lambda v: v != 0)})
    rejects_any(data, mem.group_scale_overhead_bits, {"group_size": group}, {
        "group_size": bad_ints(1, mem.weights.MAX_GROUP), "scale_bits": bad_ints(1, mem.weights.MAX_BITS),
        "zero_point_bits": bad_ints(0, mem.weights.MAX_BITS)})
    rejects_any(data, mem.kv_cache_bytes, {"model": model, "context": context}, {
        "model": bad_names(MODELS).filter(lambda v: not isinstance(v, tr.TransformerShape)),
        "context": bad_ints(0, mem.weights.MAX_CONTEXT), "batch": bad_ints(1, mem.weights.MAX_BATCH),
        "fmt": bad_names(mem.FORMAT_BITS)})
    rejects(mem.kv_bytes_per_token, "fmt", model, data.draw(bad_names(mem.FORMAT_BITS)))


@covers(mem.zero_bytes_per_param, mem.state_bytes_per_param, mem.StateBytes, mem.TrainingRecipe,
        mem.memory_convention, mem.MemoryConvention, mem.gathered_layer_bytes, mem.largest_module_params)
@given(STAGES, st.integers(1, 100_000), st.sampled_from(sorted(mem.CONVENTIONS)), st.data())
def test_training_state(stage, n, conv, data):
    paper = answers(mem.zero_bytes_per_param, stage, n, type_=mem.StateBytes)
    assert paper.total <= 16 and math.isclose(paper.total, mem.state_bytes_per_param(stage, n, "paper").total)
    assert answers(paper.to_dict, type_=dict) == dict(paper.items())
    convention = answers(mem.memory_convention, conv, type_=mem.MemoryConvention)
    assert mem.memory_convention(convention) is convention
    assert isinstance(convention.stated(stage), bool)
    offloads = [o for o in mem.OFFLOAD if mem.training._key(stage, o) in convention.stages]
    offload = data.draw(st.sampled_from(offloads))
    per = answers(mem.state_bytes_per_param, stage, n, conv, offload, type_=mem.StateBytes)
    one = mem.state_bytes_per_param(stage, 1, conv, offload)
    assert per.total <= one.total + 1e-12  # more GPUs never hold more
    largest = answers(mem.largest_module_params, SHAPE, type_=int)
    assert largest == SHAPE.vocab * SHAPE.hidden
    assert answers(mem.gathered_layer_bytes, stage, largest, conv, offload, type_=float) >= 0
    rejects_any(data, mem.state_bytes_per_param, {"stage": stage, "data_parallel": n, "convention": conv}, {
        "stage": bad_ints(0, 3), "data_parallel": bad_ints(1, mem.training.MAX_DATA_PARALLEL),
        "convention": bad_names(mem.CONVENTIONS), "offload": bad_names(mem.OFFLOAD)})
    rejects_any(data, mem.zero_bytes_per_param, {"stage": stage}, {
        "stage": bad_ints(0, 3), "data_parallel": bad_ints(1, mem.training.MAX_DATA_PARALLEL),
        "recipe": bad_names(mem.RECIPES)})
    rejects(mem.memory_convention, "name", data.draw(bad_names(mem.CONVENTIONS)))
    rejects(mem.largest_module_params, "shape", data.draw(st.one_of(st.none(), st.integers(), st.text(max_size=3))))
    rejects(mem.gathered_layer_bytes, "largest_layer_params", 3, data.draw(beyond(0.0, 1e16, strict=False).filter(
        lambda v: v != 0)))
    rejects(convention.stated, "stage", data.draw(bad_ints(0, 3)))
    rejects_any(data, mem.StateBytes, paper.to_dict(), {
        p: bad_floats(0.0, mem.training.MAX_BYTES_PER_PARAM, strict=False).filter(lambda v: v != 0)
        for p in ("weights", "gradients", "master_weights", "optimizer_state")})
    recipe = {"name": "r", "weight_bytes": 2, "grad_bytes": 2, "master_bytes": 4, "optimizer_bytes": 8, "source": ""}
    assert answers(mem.TrainingRecipe, type_=mem.TrainingRecipe, **recipe).bytes_per_param == 16
    rejects_any(data, mem.TrainingRecipe, recipe, {
        "name": bad_strings(), "source": bad_strings(allow_empty=True),
        **{f: bad_floats(0.0, mem.training.MAX_BYTES_PER_PARAM, strict=False).filter(lambda v: v != 0)
           for f in ("weight_bytes", "grad_bytes", "master_bytes", "optimizer_bytes")}})
    fields = {f: getattr(convention, f) for f in ("name", "description", "source", "where", "commit", "stages",
                                                  "from_the_source", "gathered_layer_bytes_per_param")}
    assert answers(mem.MemoryConvention, type_=mem.MemoryConvention, **fields) == convention
    rejects_any(data, mem.MemoryConvention, fields, {
        "name": bad_strings(), "commit": st.sampled_from([1, b"x", ""]), "stages": st.sampled_from([{}, [], None]),
        "from_the_source": st.one_of(not_lists(), st.just(["9"])),
        "gathered_layer_bytes_per_param": st.sampled_from([[1], None, {"3": -1.0}])})


@covers(mem.layer_activation_terms, mem.activation_bytes_per_layer, mem.shape_activation_bytes_per_layer,
        mem.logits_bytes, mem.activation_bytes, mem.shape_of)
@given(st.sampled_from(MODELS), st.integers(1, 32_768), st.integers(1, 64), st.sampled_from([1, 2, 4, 8]),
       st.sampled_from(mem.RECOMPUTE), st.booleans(), st.booleans(), st.data())
def test_activations(model, seq, b, t, rc, sp, flash, data):
    shape = answers(mem.shape_of, model, type_=tr.TransformerShape)
    terms = answers(mem.layer_activation_terms, shape.hidden, shape.heads, ffn=shape.ffn, kv_heads=shape.n_kv_heads,
                    glu=shape.glu, type_=dict)
    assert terms["replicated"] == 10
    per = answers(mem.shape_activation_bytes_per_layer, shape, b, rc, tensor=t, sequence_parallel=sp,
                  flash_attention=flash, seq=seq, type_=float)
    assert per > 0
    if rc == "full":
        assert per == 2 * seq * b * shape.hidden / (t if sp else 1)
    assert per <= mem.shape_activation_bytes_per_layer(shape, b, "none", tensor=t, sequence_parallel=sp,
                                                       flash_attention=flash, seq=seq) + 1e-6
    assert answers(mem.logits_bytes, seq, b, shape.vocab, t, type_=float) == 4 * seq * b * shape.vocab / t
    total = answers(mem.activation_bytes, model, seq, b, rc, tensor=t, sequence_parallel=sp, type_=float)
    assert total > 0
    rejects_any(data, mem.activation_bytes_per_layer, {"seq": seq, "micro_batch": b, "hidden": shape.hidden,
                                                      "heads": shape.heads}, {
        "seq": bad_ints(1, tr.LIMITS["seq"]), "micro_batch": bad_ints(1, mem.activations.MAX_MICRO_BATCH),
        "hidden": bad_ints(1, tr.LIMITS["hidden"]), "tensor": bad_ints(1, mem.activations.MAX_TENSOR),
        "sequence_parallel": bad_booleans(), "recompute": bad_names(mem.RECOMPUTE), "glu": bad_booleans(),
        "flash_attention": bad_booleans(), "kv_heads": st.sampled_from([0, -1, True, "8", 3])})
    rejects_any(data, mem.activation_bytes, {"model": model}, {
        "model": bad_names(MODELS), "seq": bad_ints(1, tr.LIMITS["seq"]).filter(lambda v: v is not None),
        "layers": bad_ints(1, tr.LIMITS["layers"]).filter(lambda v: v is not None),
        "recompute": bad_names(mem.RECOMPUTE)})
    rejects(mem.shape_of, "model", data.draw(bad_names(MODELS)))
    rejects(mem.shape_activation_bytes_per_layer, "shape", data.draw(st.one_of(st.integers(), st.none(),
                                                                               st.just("NoSuchModel"))))
    rejects(mem.logits_bytes, "vocab", seq, b, data.draw(bad_ints(1, tr.LIMITS["vocab"])))
    rejects(mem.layer_activation_terms, "heads", 4096, data.draw(bad_ints(1, tr.LIMITS["heads"])))


@covers(mem.cuda_visible_bytes, mem.runtime_reserve, mem.usable_bytes, mem.gpus_to_hold, mem.max_trainable_params)
@given(catalogue_names(), st.floats(0, 0.5), finite_floats(0, 1e13), st.data())
def test_the_one_capacity_rule(gpu, fraction, total, data):
    visible = answers(mem.cuda_visible_bytes, gpu, type_=int)
    reserve = answers(mem.runtime_reserve, gpu, fraction, type_=float)
    assert math.isclose(reserve, fraction * visible)
    usable = answers(mem.usable_bytes, gpu, reserve, type_=float)
    assert math.isclose(usable, visible - reserve) and mem.usable_bytes(gpu) < visible
    n = answers(mem.gpus_to_hold, total, gpu, reserve, type_=int)
    assert n >= 1 and (n - 1) * usable < total + 1e-3 * usable
    assert answers(mem.max_trainable_params, gpu, "mixed_adam", reserve, type_=float) == usable / 16
    rejects(mem.cuda_visible_bytes, "gpu", data.draw(bad_strings()))
    rejects(mem.runtime_reserve, "fraction", gpu, data.draw(bad_floats(0.0, 1.0, strict=False).filter(
        lambda v: v is not None and v != 0)))
    rejects(mem.usable_bytes, "reserve_bytes", gpu, data.draw(st.one_of(st.just(-1.0), st.just(math.nan),
                                                                        st.just("1"), st.just(visible + 1.0))))
    rejects(mem.gpus_to_hold, "total_bytes", data.draw(bad_floats(0.0, strict=False).filter(lambda v: v != 0)), gpu)
    rejects(mem.max_trainable_params, "recipe", gpu, data.draw(bad_names(mem.RECIPES)))


@covers(mem.model_memory, mem.MemoryEstimate, mem.finetune_memory, mem.max_batch, mem.min_gpus_zero)
@given(st.sampled_from(MODELS), st.sampled_from(["inference", "training"]), st.sampled_from(["full", "lora", "qlora"]),
       STAGES, st.integers(1, 512), st.integers(0, 8192), catalogue_names(), st.data())
def test_what_fits(model, mode, finetune, stage, n, seq, gpu, data):
    est = answers(mem.model_memory, model, mode=mode, finetune=finetune, zero_stage=stage, data_parallel=n,
                  seq_len=seq, context=seq, type_=mem.MemoryEstimate)
    assert est.total_bytes > 0 and all(v >= 0 for v in est.breakdown.values())
    assert isinstance(answers(est.fits, gpu, type_=bool), bool)
    assert answers(est.gpus_needed, gpu, type_=int) >= 1
    assert answers(est.table, type_=list)[-1][0] == "total"
    assert answers(est.to_dict, type_=dict)["total_bytes"] == est.total_bytes
    again = answers(mem.MemoryEstimate, est.mode, est.params, dict(est.breakdown), est.data_parallel, est.zero_stage,
                    est.assumptions, type_=mem.MemoryEstimate)
    assert again == est
    ft = answers(mem.finetune_memory, model, finetune, seq_len=seq, type_=mem.MemoryEstimate)
    assert ft.mode == "training"
    batch = answers(mem.max_batch, model, gpu, context=max(seq, 1), type_=int)
    assert batch >= 0
    need = answers(mem.min_gpus_zero, 7e9, gpu, stage, convention=data.draw(st.sampled_from([None, "paper"])),
                   type_=(int, type(None)))
    assert need is None or need >= 1
    rejects_any(data, mem.model_memory, {"params": model}, {
        "params": st.one_of(st.just("NoSuchModel"), st.just(0), st.just(-1.0), st.just(math.nan), st.none()),
        "mode": bad_names(["inference", "training"]), "weights": bad_names(mem.FORMAT_BITS),
        "context": bad_ints(0, mem.weights.MAX_CONTEXT), "batch": bad_ints(1, mem.weights.MAX_BATCH),
        "zero_stage": bad_ints(0, 3), "data_parallel": bad_ints(1, mem.training.MAX_DATA_PARALLEL),
        "seq_len": bad_ints(0, mem.weights.MAX_CONTEXT), "lora_rank": bad_ints(1, tr.LIMITS["lora_rank"]),
        "recipe": bad_names(mem.RECIPES), "adapter_recipe": bad_names(mem.RECIPES),
        "finetune": bad_names(["full", "lora", "qlora"]), "convention": bad_names(mem.CONVENTIONS).filter(
            lambda v: v is not None)})
    rejects_any(data, mem.MemoryEstimate, {"mode": "training", "params": 1e9, "breakdown": {"weights": 1.0}}, {
        "mode": bad_names(["inference", "training"]), "params": beyond(0.0, mem.weights.MAX_PARAMS),
        "breakdown": st.sampled_from([None, [1], {"weights": -1.0}, {1: 1.0}]),
        "zero_stage": bad_ints(0, 3), "assumptions": st.one_of(st.text(min_size=1, max_size=3), st.just([1]))})
    rejects(mem.finetune_memory, "method", model, data.draw(bad_names(["full", "lora", "qlora"])))
    rejects(mem.max_batch, "context", model, gpu, context=data.draw(bad_ints(1, mem.weights.MAX_CONTEXT)))
    rejects(mem.max_batch, "kv_cache", model, gpu, context=128, kv_cache=data.draw(bad_names(mem.FORMAT_BITS)))
    rejects(mem.min_gpus_zero, "max_gpus", 7e9, gpu, max_gpus=data.draw(bad_ints(1, mem.training.MAX_DATA_PARALLEL)))
    rejects(mem.min_gpus_zero, "offload", 7e9, gpu, convention="deepspeed", offload=data.draw(bad_names(mem.OFFLOAD)))
    rejects(est.table, "unit", data.draw(bad_floats(0.0)))

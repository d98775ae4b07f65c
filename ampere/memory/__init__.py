"""Memory arithmetic, in one place: weights by format, KV cache, training state with ZeRO, activations, and
what fits on a GPU.

Chapter: *HBM and the memory hierarchy* ("What fits", "Training state", "Activations") explains every
function; *Megatron-LM* ("Memory per GPU") and *The A100 today* (the workload calculator) use them.
Pure Python: no torch, no numpy. Shapes are :class:`ampere.transformer.TransformerShape`.

The package, one file per concern:

* ``weights.py``: weights by format, :data:`FORMAT_BITS` bits per element plus quantization scales
  (:func:`group_scale_overhead_bits`; QLoRA's NF4 with double quantization,
  :data:`NF4_DOUBLE_QUANT_OVERHEAD_BITS`), :func:`weight_bytes`; the KV cache, 2 (key and value) x layers x
  kv_heads x head_dim elements per token (:func:`kv_bytes_per_token`, :func:`kv_cache_bytes`).
* ``training.py``: the training state, bytes per parameter of a :class:`TrainingRecipe` (mixed-precision
  Adam: 2 + 2 + K with K = 12, rajbhandari2020zero) partitioned over the data-parallel GPUs by ZeRO stages
  0-3 (:func:`zero_bytes_per_param`, returning a :class:`StateBytes`); the same state as three sources count
  it, :data:`CONVENTIONS` "paper", "megatron" (Megatron-LM's estimator) and "deepspeed" (DeepSpeed's
  estimators), with offload and ZeRO-3's gathered largest module (:func:`memory_convention`,
  :func:`state_bytes_per_param`, :func:`gathered_layer_bytes`, :func:`largest_module_params`).
* ``activations.py``: korthikanti2022reducing, Table 2, per transformer layer and micro-batch, 16-bit
  activations, generalised to SwiGLU, grouped-query and fused (flash) attention
  (:func:`layer_activation_terms`, :func:`activation_bytes_per_layer`,
  :func:`shape_activation_bytes_per_layer`), the fp32 logits (:func:`logits_bytes`) and the whole stack
  (:func:`activation_bytes`); :func:`shape_of` turns a preset name into a shape.
* ``capacity.py``: **the one capacity rule**: every "fits" / "GPUs needed" / "largest model" answer budgets
  against :func:`usable_bytes` = what CUDA exposes (:func:`cuda_visible_bytes`, ``totalGlobalMem``) minus the
  runtime reserve (:func:`runtime_reserve`, :data:`RESERVE_FRACTION` of it) unless ``reserve_bytes`` is
  given; :func:`gpus_to_hold`. Not the physical capacity: an A100 80GB has 80 GiB, NVML shows 81920 MiB,
  CUDA exposes 85.10e9 bytes (79.26 GiB) and the book budgets 95 % of that
  (``ampere/data/tables/gpu_memory.json``). The reserve is read when called: patch it in ``capacity.py``.
* ``fits.py``: what fits, :func:`model_memory` (a :class:`MemoryEstimate` by component), :func:`max_batch`,
  :func:`max_trainable_params`, :func:`min_gpus_zero`, and the fine-tuning recipe both chapters quote,
  :func:`finetune_memory`.

Units: bytes; GB = 1e9 bytes (:data:`GB`), GiB = 2**30 bytes. GPU capacities are physical and binary where
the product is (``specs.GPUSpec.memory_bytes``: 80 GiB for NVIDIA's "80GB").
Bad input raises ``ValueError``/``TypeError`` naming the argument (``ampere.check``).
"""

from __future__ import annotations

from .activations import (RECOMPUTE, activation_bytes, activation_bytes_per_layer, layer_activation_terms,
                          logits_bytes, shape_activation_bytes_per_layer, shape_of)
from .capacity import RESERVE_FRACTION, cuda_visible_bytes, gpus_to_hold, runtime_reserve, usable_bytes
from .fits import (DEFAULT_FINETUNE_SEQ, DEFAULT_LORA_RANK, GB, MemoryEstimate, finetune_memory, max_batch,
                   max_trainable_params, min_gpus_zero, model_memory)
from .training import (BYTES_PER_PARAM_MIXED_ADAM, CONVENTIONS, FP32_ADAM, MIXED_ADAM, OFFLOAD, RECIPES, ZERO_STAGES,
                       MemoryConvention, StateBytes, TrainingRecipe, gathered_layer_bytes, largest_module_params,
                       memory_convention, state_bytes_per_param, zero_bytes_per_param)
from .weights import (FORMAT_BITS, NF4_DOUBLE_QUANT_OVERHEAD_BITS, NF4_SINGLE_QUANT_OVERHEAD_BITS,
                      group_scale_overhead_bits, kv_bytes_per_token, kv_cache_bytes, weight_bytes)

__all__ = [
    "GB", "FORMAT_BITS", "NF4_DOUBLE_QUANT_OVERHEAD_BITS", "NF4_SINGLE_QUANT_OVERHEAD_BITS",
    "group_scale_overhead_bits", "weight_bytes", "kv_bytes_per_token", "kv_cache_bytes",
    "TrainingRecipe", "MIXED_ADAM", "FP32_ADAM", "RECIPES", "BYTES_PER_PARAM_MIXED_ADAM", "ZERO_STAGES",
    "StateBytes", "zero_bytes_per_param", "RECOMPUTE", "activation_bytes_per_layer", "logits_bytes",
    "activation_bytes", "MemoryEstimate", "model_memory", "gpus_to_hold", "max_batch", "max_trainable_params",
    "min_gpus_zero", "DEFAULT_LORA_RANK", "DEFAULT_FINETUNE_SEQ", "RESERVE_FRACTION", "runtime_reserve",
    "cuda_visible_bytes", "usable_bytes", "finetune_memory", "shape_of", "CONVENTIONS", "MemoryConvention",
    "memory_convention", "OFFLOAD", "state_bytes_per_param", "gathered_layer_bytes", "largest_module_params",
    "layer_activation_terms", "shape_activation_bytes_per_layer",
]

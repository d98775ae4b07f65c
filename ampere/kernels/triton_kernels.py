"""The chapter's Triton kernels: a tiled matmul (:func:`matmul`) and a FlashAttention forward
(:func:`flash_attention`), with naive attention in PyTorch (:func:`naive_attention`) to compare with.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "A Triton tiled matmul" and "FlashAttention
in Triton". The same source runs on the CPU under Triton's interpreter (``TRITON_INTERPRET=1``, set here
when no CUDA GPU is usable: :func:`prepare`) and compiles for the GPU. The kernels are defined on first use,
after ``TRITON_INTERPRET`` is decided; ``triton`` and ``torch`` are imported only inside the functions, so
importing this file imports neither (:func:`triton_available` says whether the kernels can run).
"""

from __future__ import annotations

import math
import os
import sys
from typing import Any

from .. import check

_KERNELS: dict[str, Any] = {}


def _cuda_usable() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available()) and os.environ.get("AMPERE_DEVICE") != "cpu"


def triton_available() -> bool:
    """True when ``triton`` can be imported (the chapter falls back to the models when it cannot)."""
    import importlib.util

    return importlib.util.find_spec("triton") is not None


def interpreting() -> bool:
    """True when the kernels run in Triton's CPU interpreter (``TRITON_INTERPRET=1``)."""
    _kernels()
    return bool(_KERNELS["interpret"])


def _kernels() -> dict[str, Any]:
    if _KERNELS:
        return _KERNELS
    if not _cuda_usable():
        if os.environ.get("TRITON_INTERPRET") != "1" and "triton" in sys.modules:
            raise RuntimeError("triton was imported before TRITON_INTERPRET=1 was set and no CUDA GPU is usable: "
                               "set TRITON_INTERPRET=1 before the first import of triton")
        os.environ["TRITON_INTERPRET"] = "1"
    try:
        import triton
        import triton.language as tl
    except ImportError:
        raise RuntimeError("triton is not installed: pip install 'triton>=3.0' (Linux x86-64); the chapter "
                           "shows the models without it") from None

    @triton.jit
    def grouped_tile(pid, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
        # program pid -> its tile (pid_m, pid_n): down GROUP_M rows of tiles, then the next column
        # (Triton's matmul tutorial, "L2 Cache Optimizations"; GROUP_M = 1 is row-major order)
        num_pid_in_group = GROUP_M * num_pid_n
        first_pid_m = (pid // num_pid_in_group) * GROUP_M
        group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
        pid_n = (pid % num_pid_in_group) // group_size_m
        return pid_m, pid_n

    # Triton's interpreter resolves the names of a device function (grouped_tile, and tl inside it) among its
    # module's globals, not in this closure: publish both there once the kernels exist
    globals().update(grouped_tile=grouped_tile, tl=tl)

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        # one program computes one BLOCK_M x BLOCK_N tile of C; programs are launched in grouped order
        pid_m, pid_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):  # pipelined: num_stages (cp.async, sm80+)
            kk = k0 + rk
            a = tl.load(a_ptr + rm[:, None] * s_am + kk[None, :] * s_ak,
                        mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + kk[:, None] * s_bk + rn[None, :] * s_bn,
                        mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)  # tensor cores on the GPU
        c = acc.to(c_ptr.dtype.element_ty)
        tl.store(c_ptr + rm[:, None] * s_cm + rn[None, :] * s_cn, c, mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, qk_scale, H, N, D,
                         s_qb, s_qh, s_qn, s_qd, s_kb, s_kh, s_kn, s_kd,
                         s_vb, s_vh, s_vn, s_vd, s_ob, s_oh, s_on, s_od,
                         CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_D: tl.constexpr):
        # one program: BLOCK_M queries of one (batch, head); loop over key blocks with an online softmax
        pid_m = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // H
        h = bh % H
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.arange(0, BLOCK_N)
        rd = tl.arange(0, BLOCK_D)
        q = tl.load(q_ptr + b * s_qb + h * s_qh + rm[:, None] * s_qn + rd[None, :] * s_qd,
                    mask=(rm[:, None] < N) & (rd[None, :] < D), other=0.0)
        m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)   # running row maximum (base-2 logits)
        l_i = tl.zeros((BLOCK_M,), tl.float32)                 # running row sum of exponentials
        acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)         # running unnormalised output
        hi = N
        if CAUSAL:
            hi = tl.minimum(N, (pid_m + 1) * BLOCK_M)
        for start in range(0, hi, BLOCK_N):
            kn = start + rn
            kt = tl.load(k_ptr + b * s_kb + h * s_kh + kn[None, :] * s_kn + rd[:, None] * s_kd,
                         mask=(kn[None, :] < N) & (rd[:, None] < D), other=0.0)
            s = tl.dot(q, kt) * qk_scale                         # scores, already times log2(e)
            valid = kn[None, :] < N
            if CAUSAL:
                valid = valid & (rm[:, None] >= kn[None, :])
            s = tl.where(valid, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.math.exp2(s - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)                    # rescales what was summed so far
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_ptr + b * s_vb + h * s_vh + kn[:, None] * s_vn + rd[None, :] * s_vd,
                        mask=(kn[:, None] < N) & (rd[None, :] < D), other=0.0)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new
        out = acc / l_i[:, None]
        tl.store(o_ptr + b * s_ob + h * s_oh + rm[:, None] * s_on + rd[None, :] * s_od,
                 out.to(o_ptr.dtype.element_ty), mask=(rm[:, None] < N) & (rd[None, :] < D))

    _KERNELS.update(triton=triton, matmul=matmul_kernel, attention=attention_kernel, grouped_tile=grouped_tile,
                    interpret=os.environ.get("TRITON_INTERPRET") == "1")
    return _KERNELS


def _tensor(name: str, x: Any, ndim: int) -> Any:
    import torch

    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(x.shape)}")
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise ValueError(f"{name} must be float32, float16 or bfloat16, got {x.dtype}")
    if min(x.shape) < 1:
        raise ValueError(f"{name} has an empty dimension: shape {tuple(x.shape)}")
    return x


def _block(name: str, value: Any) -> int:
    v = check.positive_int(name, value, maximum=1024)
    if v < 16 or v & (v - 1):
        raise ValueError(f"{name} must be a power of two >= 16 (tl.dot needs 16), got {v}")
    return v


#: Largest head dimension the attention functions take (the FlashAttention kernel keeps a row of Q on chip).
MAX_HEAD_DIM = 256


def _same_shapes(q: Any, k: Any, v: Any) -> tuple[Any, Any, Any]:
    """q, k, v: 4-D float tensors (batch, heads, seq, head_dim) of one shape and dtype, head_dim <= 256."""
    q, k, v = _tensor("q", q, 4), _tensor("k", k, 4), _tensor("v", v, 4)
    if not (q.shape == k.shape == v.shape):
        raise ValueError(f"q, k and v must have one shape, got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k and v must have one dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.shape[-1] > MAX_HEAD_DIM:
        raise ValueError(f"q, k and v: head_dim {q.shape[-1]} exceeds {MAX_HEAD_DIM}")
    return q, k, v


def _placed(ks: dict[str, Any], *tensors: Any) -> None:
    devices = {t.device for t in tensors}
    if len(devices) != 1:
        raise ValueError(f"tensors must be on one device, got {sorted(str(d) for d in devices)}")
    dev = devices.pop()
    if ks["interpret"] and dev.type != "cpu":
        raise ValueError(f"Triton runs in its CPU interpreter here (TRITON_INTERPRET=1): pass CPU tensors, not {dev}")
    if not ks["interpret"] and dev.type != "cuda":
        raise ValueError("tensors are on the CPU but Triton compiles for the GPU here: move them with .cuda() "
                         "(or set TRITON_INTERPRET=1 before the first kernel call)")


def matmul(a: Any, b: Any, *, block_m: int = 64, block_n: int = 64, block_k: int = 32, group_m: int = 8,
           num_warps: int = 4, num_stages: int = 2) -> Any:
    """C = A B with the chapter's Triton tiled kernel: 2-D tensors of any sizes (ragged edges masked),
    FP32 accumulation, result in A's dtype. Programs are launched in grouped order: ``group_m`` rows of tiles
    before the next column (1: row-major; :func:`~ampere.kernels.program_tile` is the same mapping).
    ``num_stages`` is the software pipeline depth (ignored by the interpreter).
    Chapter: *Programming the A100's SM*, "A Triton tiled matmul" and "Launch order and L2 reuse"."""
    import torch

    a = _tensor("a", a, 2)
    b = _tensor("b", b, 2)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")
    if a.dtype != b.dtype:
        raise ValueError(f"a and b must have one dtype, got {a.dtype} and {b.dtype}")
    bm, bn, bk = _block("block_m", block_m), _block("block_n", block_n), _block("block_k", block_k)
    gm = check.positive_int("group_m", group_m, maximum=1 << 16)
    nw = check.positive_int("num_warps", num_warps, maximum=32)
    if nw & (nw - 1):
        raise ValueError(f"num_warps must be a power of two, got {nw}")
    st = check.positive_int("num_stages", num_stages, maximum=8)
    ks = _kernels()  # after the arguments: a bad argument is named before triton is touched
    _placed(ks, a, b)
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    grid = (-(-m // bm) * -(-n // bn),)  # one program per tile of C, in one dimension: the order is the kernel's
    ks["matmul"][grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                       c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, num_warps=nw, num_stages=st)
    return c


def flash_attention(q: Any, k: Any, v: Any, *, causal: bool = False, block_m: int = 64, block_n: int = 32,
                    num_warps: int = 4, num_stages: int = 2) -> Any:
    """softmax(Q K^T / sqrt(d)) V with the chapter's Triton FlashAttention forward: ``(batch, heads, seq,
    head_dim)`` tensors, any ``seq`` and ``head_dim`` (padded to a power of two on chip), ``causal`` with the
    top-left alignment of ``scaled_dot_product_attention(is_causal=True)``. The N x N score matrix never
    exists in memory. Chapter: *Programming the A100's SM*, "FlashAttention in Triton"."""
    import torch

    q, k, v = _same_shapes(q, k, v)
    causal = check.boolean("causal", causal)
    bm, bn = _block("block_m", block_m), _block("block_n", block_n)
    nw = check.positive_int("num_warps", num_warps, maximum=32)
    st = check.positive_int("num_stages", num_stages, maximum=8)
    if nw & (nw - 1):
        raise ValueError(f"num_warps must be a power of two, got {nw}")
    ks = _kernels()  # after the arguments: a bad argument is named before triton is touched
    _placed(ks, q, k, v)
    batch, heads, seq, d = q.shape
    block_d = max(16, 1 << (d - 1).bit_length())
    o = torch.empty_like(q)
    scale = (1.0 / math.sqrt(d)) * 1.4426950408889634  # 1/sqrt(d) x log2(e): the kernel uses exp2
    grid = (-(-seq // bm), batch * heads)
    ks["attention"][grid](q, k, v, o, scale, heads, seq, d, *q.stride(), *k.stride(), *v.stride(), *o.stride(),
                          CAUSAL=causal, BLOCK_M=bm, BLOCK_N=bn, BLOCK_D=block_d, num_warps=nw, num_stages=st)
    return o


def naive_attention(q: Any, k: Any, v: Any, *, causal: bool = False) -> Any:
    """Standard attention that materialises S and P in memory (the paper's Algorithm 0), in PyTorch.
    Chapter: *Programming the A100's SM*, "FlashAttention"."""
    import torch

    q, k, v = _same_shapes(q, k, v)
    causal = check.boolean("causal", causal)
    if q.device != k.device or q.device != v.device:
        raise ValueError(f"q, k and v must be on one device, got {q.device}, {k.device}, {v.device}")
    s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        n = q.shape[-2]
        mask = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s.float(), dim=-1).to(q.dtype) @ v


def prepare() -> bool:
    """Set ``TRITON_INTERPRET=1`` when no CUDA GPU is usable (before triton's first import) and say whether the
    Triton kernels can run here. Call it in a chapter's setup cell. Chapter: *Programming the A100's SM*."""
    if not _cuda_usable() and "triton" not in sys.modules:
        os.environ["TRITON_INTERPRET"] = "1"
    return triton_available()

"""Tests of ampere/kernels/triton_kernels.py: the Triton kernels against torch, in the interpreter without a
GPU. Chapter: Programming the A100's SM."""

from __future__ import annotations

import os

import pytest

from ampere import kernels

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # Triton reads this when it is first imported
    os.environ["TRITON_INTERPRET"] = "1"
pytest.importorskip("triton")


def _dev():
    return "cpu" if kernels.interpreting() else "cuda"


@pytest.mark.parametrize("group_m", [1, 2, 3, 8])
@pytest.mark.parametrize("m,k,n", [(37, 45, 29), (64, 32, 64), (1, 17, 3), (100, 16, 40)])
def test_matmul_matches_torch_on_ragged_shapes(m, k, n, group_m):
    g = torch.Generator().manual_seed(m + k + n)
    a = torch.randn(m, k, generator=g).to(_dev())
    b = torch.randn(k, n, generator=g).to(_dev())
    c = kernels.matmul(a, b, block_m=16, block_n=32, block_k=16, group_m=group_m)
    assert c.shape == (m, n) and c.dtype == a.dtype
    tol = 2e-5 if kernels.interpreting() else 2e-2
    assert float((c - a @ b).abs().max()) <= tol * max(1.0, float((a @ b).abs().max()))


@pytest.mark.parametrize("grid_m,grid_n,group_m", [(9, 9, 3), (7, 5, 4), (5, 3, 1), (4, 6, 8)])
def test_kernel_launch_order_is_the_models(grid_m, grid_n, group_m):
    """The kernel's own pid -> tile arithmetic (its jit helper) gives the model's program_tile, pid by pid."""
    import triton
    import triton.language as tl

    from ampere.kernels import triton_kernels

    globals()["grouped_tile"] = triton_kernels._kernels()["grouped_tile"]  # a jit function resolves its globals

    @triton.jit
    def order_kernel(out_ptr, GM, GN, GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        pm, pn = grouped_tile(pid, GM, GN, GROUP_M)  # noqa: F821 (set above)
        tl.store(out_ptr + 2 * pid, pm)
        tl.store(out_ptr + 2 * pid + 1, pn)

    out = torch.full((grid_m * grid_n, 2), -1, dtype=torch.int32, device=_dev())
    order_kernel[(grid_m * grid_n,)](out, grid_m, grid_n, GROUP_M=group_m)
    assert [tuple(r) for r in out.cpu().tolist()] == kernels.program_order(grid_m, grid_n, group_m)


def test_matmul_refuses_bad_input():
    a = torch.zeros(4, 5)
    with pytest.raises(ValueError, match="inner dimensions"):
        kernels.matmul(a, torch.zeros(4, 5))
    with pytest.raises(ValueError, match="block_k"):
        kernels.matmul(a, torch.zeros(5, 4), block_k=24)
    with pytest.raises(TypeError, match="a must be a torch.Tensor"):
        kernels.matmul([[1.0]], torch.zeros(1, 1))
    with pytest.raises(ValueError, match="dimensions"):
        kernels.matmul(torch.zeros(3), torch.zeros(3, 1))
    with pytest.raises(ValueError, match="group_m"):
        kernels.matmul(a, torch.zeros(5, 4), group_m=0)
    with pytest.raises(TypeError, match="group_m"):
        kernels.matmul(a, torch.zeros(5, 4), group_m=True)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq,d", [(37, 16), (50, 24)])
def test_flash_attention_matches_sdpa(causal, seq, d):
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(seq * d)
    q, k, v = (torch.randn(2, 2, seq, d, generator=g).to(_dev()) for _ in range(3))
    o = kernels.flash_attention(q, k, v, causal=causal, block_m=16, block_n=16)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    tol = 1e-5 if kernels.interpreting() else 2e-2
    assert float((o - ref).abs().max()) < tol
    naive = kernels.naive_attention(q, k, v, causal=causal)
    assert float((naive - ref).abs().max()) < 1e-4


def test_flash_attention_refuses_bad_input():
    q = torch.zeros(1, 1, 8, 16)
    with pytest.raises(ValueError, match="one shape"):
        kernels.flash_attention(q, q, torch.zeros(1, 1, 9, 16))
    with pytest.raises(ValueError, match="4 dimensions"):
        kernels.flash_attention(torch.zeros(8, 16), q, q)
    with pytest.raises(TypeError, match="causal"):
        kernels.flash_attention(q, q, q, causal="yes")

"""Module-level worker functions for tests/test_launch.py (spawned processes must import them)."""

import torch
import torch.distributed as dist


def all_reduce_sum(ctx, n):
    t = torch.full((n,), float(ctx.rank + 1))
    dist.all_reduce(t)
    return ctx.rank, float(t[0])


def fail_on_rank_one(ctx):
    if ctx.rank == 1:
        raise ValueError("bad rank")
    dist.barrier()
    return ctx.rank

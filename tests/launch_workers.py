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


def _note_pid(folder):
    import os

    with open(os.path.join(folder, f"pid-{os.getpid()}"), "w") as fh:
        fh.write(str(os.getpid()))


def hang_on_rank_one_ignoring_sigterm(ctx, folder):
    """Rank 1 never reaches the barrier and ignores SIGTERM; rank 0 waits in the barrier until the timeout."""
    import signal
    import time

    _note_pid(folder)
    if ctx.rank == 1:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(600)
    dist.barrier()
    return ctx.rank


def everyone_sleeps_ignoring_sigterm(ctx, folder):
    """No rank enters a collective: only spawn's own deadline can stop this run."""
    import signal
    import time

    _note_pid(folder)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(600)
    return ctx.rank


def die_at_the_timeout_while_rank_one_hangs(ctx, folder, timeout_s):
    """What NCCL does: rank 0's watchdog ends its process at the process-group timeout (no traceback),
    while rank 1, the cause, never reached the collective and ignores SIGTERM."""
    import os
    import signal
    import time

    _note_pid(folder)
    if ctx.rank == 1:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(600)
    time.sleep(timeout_s)
    os._exit(6)

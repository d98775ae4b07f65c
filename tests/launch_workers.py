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


def crash_rank_one(ctx, folder, code):
    """Rank 1 ends its process at once (no Python error, no result); rank 0 waits for it in a barrier."""
    import os

    import signal

    _note_pid(folder)
    if ctx.rank == 1:
        if code < 0:
            os.kill(os.getpid(), signal.Signals(-code))
        os._exit(code)
    dist.barrier()
    return ctx.rank


def stop_rank_one(ctx, folder):
    """Rank 1 stops itself (SIGSTOP: alive, but never scheduled again); rank 0 waits for it in a barrier."""
    import os
    import signal

    _note_pid(folder)
    if ctx.rank == 1:
        os.kill(os.getpid(), signal.SIGSTOP)
    dist.barrier()
    return ctx.rank


def sleep_in_a_barrier(ctx, folder):
    """Both ranks note their pid, then rank 1 sleeps while rank 0 waits in a barrier: a long-running lab."""
    import time

    _note_pid(folder)
    if ctx.rank == 1:
        time.sleep(600)
    dist.barrier()
    return ctx.rank


def return_an_unpicklable_result(ctx):
    return lambda: ctx.rank

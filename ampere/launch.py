"""Start N processes with torch.distributed and collect what each returns, without ever hanging.

Chapter: *NVLink, NVSwitch and collectives* (the gloo lab) and *Megatron-LM* (the tensor- and
pipeline-parallel lab) run their code through :func:`spawn`.

The same code runs with gloo on CPU processes (CI, laptops, Colab) and with NCCL on a multi-GPU node
(one process per GPU). Every process group gets a timeout; a rank that raises makes :func:`spawn` raise
a ``RuntimeError`` that names the rank and carries its traceback; a rank that hangs is named (the one that
never reached the collective, not the one that timed out waiting for it) and killed. Rendezvous uses a
file in a private temporary folder, so no network port is needed.

Time limits, separately: ``startup_s`` bounds the start of the processes up to the moment every rank has
joined the process group (spawning a Python interpreter and importing torch takes seconds on a loaded
machine); ``timeout_s`` then bounds the run of ``fn`` on every rank and each collective inside it (the
process-group timeout). Past either, or after a failure, the ranks still running get SIGTERM, and SIGKILL
after ``KILL_GRACE_S``: no process outlives :func:`spawn`. So a run that hangs raises after at most
``startup_s + timeout_s + 2.5 s`` (the ranks' own timeout reports) ``+ KILL_GRACE_S``.
"""

from __future__ import annotations

import datetime as _dt
import inspect
import os
import tempfile
import time
import traceback
from typing import Any, Callable

from . import check

__all__ = ["spawn", "default_backend", "RankContext", "KILL_GRACE_S", "STARTUP_S", "max_wall_s"]

#: seconds between SIGTERM and SIGKILL for a rank that is still running when spawn gives up on it
KILL_GRACE_S = 2.0
#: default start-up allowance: processes started, torch imported, every rank in the process group
STARTUP_S = 30.0
#: after a first failure, how long the other ranks may take to report theirs
_DRAIN_S = 1.5
#: past timeout_s, how long a rank waiting in a collective may take to report its own timeout (it entered
#: the collective, and started its process-group clock, a little after the run started)
_LATE_S = 2.5


def default_backend(world_size: int) -> str:
    """``"nccl"`` when there is one CUDA GPU per rank and NCCL is available, else ``"gloo"``."""
    import torch
    import torch.distributed as dist

    if (torch.cuda.is_available() and torch.cuda.device_count() >= world_size and dist.is_nccl_available()
            and os.environ.get("AMPERE_DEVICE", "").lower() != "cpu"):
        return "nccl"
    return "gloo"


class RankContext:
    """What a worker function receives: its rank, the world size, the backend and its torch device."""

    def __init__(self, rank: int, world_size: int, backend: str) -> None:
        import torch

        self.rank = rank
        self.world_size = world_size
        self.backend = backend
        self.device = torch.device(f"cuda:{rank}") if backend == "nccl" else torch.device("cpu")

    def __repr__(self) -> str:
        return f"RankContext(rank={self.rank}, world_size={self.world_size}, backend={self.backend!r})"


def max_wall_s(timeout_s: float, startup_s: float = STARTUP_S) -> float:
    """The longest :func:`spawn` can take before it returns or raises, for callers with a time budget:
    start-up allowance + run timeout + a waiting rank's own timeout report + the SIGTERM grace."""
    return check.positive("startup_s", startup_s) + check.positive("timeout_s", timeout_s) + _LATE_S + KILL_GRACE_S


def _init_kwargs(dist: Any, backend: str, rank: int) -> dict[str, Any]:
    """``device_id=`` binds an NCCL communicator to its GPU (torch >= 2.2); older torch has no such argument."""
    import torch

    if backend != "nccl":
        return {}
    try:
        params = inspect.signature(dist.init_process_group).parameters
    except (TypeError, ValueError):
        return {}
    return {"device_id": torch.device("cuda", rank)} if "device_id" in params else {}


def _worker(rank: int, world_size: int, backend: str, init_file: str, timeout_s: float,
            fn: Callable[..., Any], args: tuple, queue: Any) -> None:
    import torch
    import torch.distributed as dist

    try:
        torch.set_num_threads(1)
        if backend == "nccl":
            torch.cuda.set_device(rank)
        dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world_size,
                                timeout=_dt.timedelta(seconds=timeout_s), **_init_kwargs(dist, backend, rank))
        queue.put((rank, "ready", None))
        try:
            result = fn(RankContext(rank, world_size, backend), *args)
        finally:
            dist.destroy_process_group()
        queue.put((rank, "ok", result))
    except BaseException:  # report everything, including KeyboardInterrupt in a child
        queue.put((rank, "error", traceback.format_exc()))


_AT_TIMEOUT = "at the process-group timeout"


def _in_collective(tb: str) -> bool:
    """Did this rank fail inside torch.distributed (waiting for the others), rather than first-hand?"""
    return "distributed_c10d" in tb or _AT_TIMEOUT in tb


def _stop(procs: list[Any], grace_s: float) -> list[int]:
    """SIGTERM every live process, SIGKILL those still alive after ``grace_s``; return the ranks killed."""
    started = {r: p for r, p in enumerate(procs) if p.pid is not None}
    for p in started.values():
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + grace_s
    for p in started.values():
        p.join(timeout=max(0.0, deadline - time.monotonic()))
    killed = [r for r, p in started.items() if p.is_alive()]
    for r in killed:
        started[r].kill()
    for r in killed:
        started[r].join(timeout=10)
    return killed


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def spawn(fn: Callable[..., Any], world_size: int, *, args: tuple = (), backend: str | None = None,
          timeout_s: float = 60.0, startup_s: float = STARTUP_S) -> list[Any]:
    """Run ``fn(ctx, *args)`` in ``world_size`` processes and return the per-rank results (rank order).

    ``fn`` must be importable (a module-level function) and its result picklable. ``backend`` defaults
    to :func:`default_backend`. ``startup_s`` bounds the start-up (processes spawned, torch imported,
    every rank joined the process group); ``timeout_s`` then bounds the whole run of ``fn`` and each
    collective in it. A rank that raises, a rank that hangs (named: the one that never reached the
    collective the others waited in), or the deadline make it raise ``RuntimeError``; every rank still
    running is then terminated, and killed after ``KILL_GRACE_S`` if it ignores SIGTERM. Chapter:
    *NVLink, NVSwitch and collectives*, "The collectives lab".
    """
    if not callable(fn):
        raise TypeError(f"fn must be a module-level function, got {fn!r}")
    world_size = check.positive_int("world_size", world_size)
    timeout_s = check.positive("timeout_s", timeout_s)
    startup_s = check.positive("startup_s", startup_s)
    if not isinstance(args, tuple):
        raise TypeError(f"args must be a tuple, got {type(args).__name__}")
    import torch.multiprocessing as mp

    backend = backend or default_backend(world_size)
    if backend not in ("gloo", "nccl"):
        raise ValueError(f"backend={backend!r} is not supported; allowed: 'gloo', 'nccl'")
    if backend == "nccl":
        import torch

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if world_size > gpus:
            raise ValueError(f"world_size={world_size} with backend='nccl' needs one GPU per rank; "
                             f"this machine has {gpus}: use fewer ranks or backend='gloo'")
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    with tempfile.TemporaryDirectory(prefix="ampere-launch-") as tmp:
        init_file = os.path.join(tmp, "rendezvous")
        procs = [ctx.Process(target=_worker, args=(r, world_size, backend, init_file, timeout_s, fn, args, queue),
                             daemon=True) for r in range(world_size)]
        results: dict[int, Any] = {}
        errors: dict[int, str] = {}
        ready: set[int] = set()
        verdict: str | None = None  # the message when spawn gives up
        killed: list[int] = []

        def take() -> bool:
            if queue.empty():
                return False
            rank, status, payload = queue.get()
            if status == "ready":
                ready.add(rank)
            else:
                (results if status == "ok" else errors)[rank] = payload
            return True

        def silent() -> list[int]:
            return [r for r in range(world_size) if r not in results and r not in errors]

        try:
            for p in procs:
                p.start()
            start_deadline = time.monotonic() + startup_s
            run_deadline: float | None = None
            while len(results) + len(errors) < world_size:
                if take():
                    if run_deadline is None and len(ready) == world_size:
                        run_deadline = time.monotonic() + timeout_s
                    if errors:
                        end = time.monotonic() + _DRAIN_S  # the others' errors explain less, but name them
                        while silent() and time.monotonic() < end:
                            if not take():
                                time.sleep(0.02)
                        break
                    continue
                dead = [r for r in silent() if not procs[r].is_alive()]
                if dead:
                    time.sleep(0.2)  # a result may still be in flight
                    while take():
                        pass
                    dead = [r for r in silent() if not procs[r].is_alive()]
                    if dead:
                        # NCCL's watchdog ends a rank whose collective timed out (no Python traceback): a
                        # rank dying at the process-group timeout was waiting, not the cause
                        into = time.monotonic() - (run_deadline - timeout_s) if run_deadline is not None else 0.0
                        waited = run_deadline is not None and into >= 0.9 * timeout_s
                        errors.update({r: f"process exited with code {procs[r].exitcode} without a result, "
                                          f"{into:.1f} s into the run"
                                          + (f" ({_AT_TIMEOUT}: NCCL's watchdog ends a rank whose collective "
                                             "timed out)" if waited else "") for r in dead})
                        break
                    continue
                now = time.monotonic()
                if run_deadline is None and now > start_deadline:
                    late = sorted(set(range(world_size)) - ready)
                    verdict = (f"spawn: ranks {late} of {world_size} did not join the process group within the "
                               f"start-up allowance startup_s={startup_s:g} s (backend {backend})")
                    break
                if run_deadline is not None and now > run_deadline:
                    # a rank waiting in a collective reports its own timeout about now: give it _LATE_S to
                    # arrive, so that the rank it waited for is the one named
                    end = now + _LATE_S
                    while not errors and time.monotonic() < end:
                        if take():
                            continue
                        for r in silent():
                            if not procs[r].is_alive() and not take():
                                errors[r] = (f"process exited with code {procs[r].exitcode} without a result, "
                                             f"{timeout_s:g} s into the run ({_AT_TIMEOUT}: NCCL's watchdog "
                                             "ends a rank whose collective timed out)")
                        time.sleep(0.02)
                    if not errors:
                        verdict = (f"spawn: ranks {silent()} of {world_size} hung: no result and no error within "
                                   f"timeout_s={timeout_s:g} s after start-up (backend {backend})")
                    break
                time.sleep(0.01)
        finally:
            if verdict is None and not errors and len(results) == world_size:
                end = time.monotonic() + 5.0  # every rank reported: let them exit on their own first
                for p in procs:
                    p.join(timeout=max(0.0, end - time.monotonic()))
            killed = _stop(procs, KILL_GRACE_S)
        ended = (f"\n(ranks {killed} ignored SIGTERM and were killed with SIGKILL after {KILL_GRACE_S:g} s)"
                 if killed else "")
        if verdict is not None:
            raise RuntimeError(verdict + ended)
        if errors:
            first_hand = sorted(r for r, tb in errors.items() if not _in_collective(tb))
            hung = [r for r in silent() if r not in errors]
            if not first_hand and hung:
                waiting = sorted(errors)
                raise RuntimeError(
                    f"spawn: rank{'s' if len(hung) > 1 else ''} {', '.join(map(str, hung))} of {world_size} hung: "
                    f"never reached the collective that rank{'s' if len(waiting) > 1 else ''} "
                    f"{', '.join(map(str, waiting))} waited in (no result, no error; backend {backend}, "
                    f"timeout_s={timeout_s:g} s){ended}\n"
                    f"rank {waiting[0]} gave up waiting:\n{_tail(errors[waiting[0]])}")
            rank = first_hand[0] if first_hand else min(errors)
            others = sorted(set(errors) - {rank})
            tail = f"\n(then ranks {others} failed too, waiting on it)" if others else ""
            raise RuntimeError(f"spawn: rank {rank} of {world_size} failed (backend {backend}):\n{errors[rank]}"
                               f"{tail}{ended}")
    return [results[r] for r in range(world_size)]

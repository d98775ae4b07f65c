"""Start N processes with torch.distributed and collect what each returns, without ever hanging.

Chapter: *NVLink, NVSwitch and collectives* (the gloo lab) and *Megatron-LM* (the tensor- and
pipeline-parallel lab) run their code through :func:`spawn`.

The same code runs with gloo on CPU processes (CI, laptops, Colab) and with NCCL on a multi-GPU node
(one process per GPU). Every process group gets a timeout; a rank that raises makes :func:`spawn` raise
a ``RuntimeError`` that names the rank and carries its traceback; a rank that hangs is killed at the
deadline. Rendezvous uses a file in a private temporary folder, so no network port is needed.
"""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
import time
import traceback
from typing import Any, Callable

__all__ = ["spawn", "default_backend", "RankContext"]


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


def _worker(rank: int, world_size: int, backend: str, init_file: str, timeout_s: float,
            fn: Callable[..., Any], args: tuple, queue: Any) -> None:
    import torch
    import torch.distributed as dist

    try:
        torch.set_num_threads(1)
        extra = {}
        if backend == "nccl":
            torch.cuda.set_device(rank)
            extra["device_id"] = torch.device("cuda", rank)  # binds the communicator to this rank's GPU
        dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world_size,
                                timeout=_dt.timedelta(seconds=timeout_s), **extra)
        try:
            result = fn(RankContext(rank, world_size, backend), *args)
        finally:
            dist.destroy_process_group()
        queue.put((rank, "ok", result))
    except BaseException:  # report everything, including KeyboardInterrupt in a child
        queue.put((rank, "error", traceback.format_exc()))


def _drain(queue: Any, results: dict, errors: dict, world_size: int, grace_s: float) -> None:
    """After a failure, collect what the other ranks report for a short while (their errors explain less)."""
    deadline = time.monotonic() + grace_s
    while len(results) + len(errors) < world_size and time.monotonic() < deadline:
        if queue.empty():
            time.sleep(0.02)
            continue
        rank, status, payload = queue.get()
        (results if status == "ok" else errors)[rank] = payload


def _root_cause(errors: dict[int, str]) -> int:
    """The rank whose failure started it: prefer one that did not die inside a collective."""
    first_hand = [r for r, tb in errors.items() if "distributed_c10d" not in tb]
    return min(first_hand or errors)


def spawn(fn: Callable[..., Any], world_size: int, *, args: tuple = (), backend: str | None = None,
          timeout_s: float = 60.0) -> list[Any]:
    """Run ``fn(ctx, *args)`` in ``world_size`` processes and return the per-rank results (rank order).

    ``fn`` must be importable (a module-level function) and its result picklable. ``backend`` defaults
    to :func:`default_backend`. ``timeout_s`` bounds both each collective (process-group timeout) and
    the whole run; past it the workers are terminated and ``RuntimeError`` is raised.
    """
    if not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size={world_size!r} must be an integer >= 1")
    if timeout_s <= 0:
        raise ValueError(f"timeout_s={timeout_s!r} must be > 0")
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
        for p in procs:
            p.start()
        results: dict[int, Any] = {}
        errors: dict[int, str] = {}
        deadline = time.monotonic() + timeout_s + 30  # generous: process start-up imports torch
        try:
            while len(results) + len(errors) < world_size:
                if not queue.empty():
                    rank, status, payload = queue.get()
                    (results if status == "ok" else errors)[rank] = payload
                    if status != "ok":
                        _drain(queue, results, errors, world_size, grace_s=3.0)
                        break  # the others may wait on the failed rank forever
                    continue
                dead = [r for r, p in enumerate(procs) if not p.is_alive() and r not in results and r not in errors]
                if dead and queue.empty():
                    time.sleep(0.2)  # a result may still be in flight
                    if queue.empty():
                        codes = {r: procs[r].exitcode for r in dead}
                        errors.update({r: f"process exited with code {c} without a result" for r, c in codes.items()})
                        break
                if time.monotonic() > deadline:
                    missing = [r for r in range(world_size) if r not in results]
                    raise RuntimeError(f"spawn: ranks {missing} did not finish within {timeout_s:.0f} s "
                                       f"(backend {backend}); they were terminated")
                time.sleep(0.01)
        finally:
            for p in procs:
                if p.is_alive():
                    p.terminate()
            for p in procs:
                p.join(timeout=5)
        if errors:
            rank = _root_cause(errors)
            others = sorted(set(errors) - {rank})
            tail = f"\n(then ranks {others} failed too, waiting on it)" if others else ""
            raise RuntimeError(f"spawn: rank {rank} of {world_size} failed (backend {backend}):\n{errors[rank]}{tail}")
    return [results[r] for r in range(world_size)]

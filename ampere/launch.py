"""Start N processes with torch.distributed and collect what each returns, without ever hanging or orphaning.

Chapter: *NVLink, NVSwitch and collectives* (the gloo lab) and *Megatron-LM* (the tensor- and
pipeline-parallel lab) run their code through :func:`spawn`.

The same code runs with gloo on CPU processes (CI, laptops, Colab) and with NCCL on a multi-GPU node
(one process per GPU). Every process group gets a timeout. What :func:`spawn` reports, by rank:

* a rank that raises: ``RuntimeError`` "rank R of N failed" with its traceback;
* a rank that dies without a result (``os._exit``, a signal, the OOM killer): "rank R of N crashed" with
  its exit code or signal, even when the others, waiting for it in a collective, reported first;
* a rank stopped by a signal (SIGSTOP, a debugger): "rank R of N was stopped";
* a rank that hangs: "rank R of N hung" (the one that never reached the collective the others waited
  in, not the one that timed out waiting for it).

Nothing outlives :func:`spawn` or its caller: every rank asks the kernel to kill it when its parent dies
(``prctl(PR_SET_PDEATHSIG)`` on Linux) and watches a lifeline pipe from the parent (every platform), so
SIGKILL to the parent ends the ranks at once, and then the ``multiprocessing`` resource tracker, whose
pipe they held. Results come back on one pipe per rank (plain pickle, no shared memory, no lock), so the
parent knows which rank's pipe closed. Rendezvous uses a file in a private temporary folder, so no
network port is needed. Arguments are checked in the parent before any process starts, including
``validate(*args)`` when the caller gives one (a bad configuration is refused at once, not seconds later
inside rank 0).

Time limits, separately: ``startup_s`` bounds the start of the processes up to the moment every rank has
joined the process group (spawning a Python interpreter and importing torch takes seconds on a loaded
machine); ``timeout_s`` then bounds the run of ``fn`` on every rank and each collective inside it (the
process-group timeout). Past either, or after a failure, the ranks still running get SIGTERM (and
SIGCONT, so a stopped rank receives it), and SIGKILL after ``KILL_GRACE_S``. So a run that hangs raises
after at most ``startup_s + timeout_s + 2.5 s`` (the ranks' own timeout reports) ``+ KILL_GRACE_S``.
"""

from __future__ import annotations

import datetime as _dt
import inspect
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
from typing import Any, Callable

from . import check

__all__ = ["spawn", "default_backend", "RankContext", "KILL_GRACE_S", "STARTUP_S", "MAX_WORLD_SIZE",
           "MAX_TIMEOUT_S", "max_wall_s"]

#: seconds between SIGTERM and SIGKILL for a rank that is still running when spawn gives up on it
KILL_GRACE_S = 2.0
#: default start-up allowance: processes started, torch imported, every rank in the process group
STARTUP_S = 30.0
#: the most ranks spawn starts (each one is a Python process importing torch on this machine)
MAX_WORLD_SIZE = 256
#: the longest timeout_s or startup_s accepted (one day): a longer wait is a mistake, not a lab
MAX_TIMEOUT_S = 86400.0
BACKENDS = ("gloo", "nccl")
#: after a first failure, how long the other ranks may take to report theirs
_DRAIN_S = 1.5
#: past timeout_s, how long a rank waiting in a collective may take to report its own timeout (it entered
#: the collective, and started its process-group clock, a little after the run started)
_LATE_S = 2.5
#: exit code of a rank that found its parent gone
_ORPHAN_EXIT = 70
_PR_SET_PDEATHSIG = 1


def default_backend(world_size: int) -> str:
    """``"nccl"`` when there is one CUDA GPU per rank and NCCL is available, else ``"gloo"``."""
    world_size = check.bounded_int("world_size", world_size, 1, MAX_WORLD_SIZE, why="processes on one machine")
    import torch
    import torch.distributed as dist

    if (torch.cuda.is_available() and torch.cuda.device_count() >= world_size and dist.is_nccl_available()
            and os.environ.get("AMPERE_DEVICE", "").lower() != "cpu"):
        return "nccl"
    return "gloo"


class RankContext:
    """What a worker function receives: its rank, the world size, the backend and its torch device."""

    def __init__(self, rank: int, world_size: int, backend: str) -> None:
        self.world_size = check.bounded_int("world_size", world_size, 1, MAX_WORLD_SIZE,
                                            why="processes on one machine")
        self.rank = check.bounded_int("rank", rank, 0, self.world_size - 1, why="ranks count from 0")
        self.backend = check.one_of("backend", backend, BACKENDS)
        import torch

        self.device = torch.device(f"cuda:{rank}") if backend == "nccl" else torch.device("cpu")

    def __repr__(self) -> str:
        return f"RankContext(rank={self.rank}, world_size={self.world_size}, backend={self.backend!r})"


def _timeout(name: str, value: Any) -> float:
    return check.real(name, value, minimum=0.0, strict_min=True, maximum=MAX_TIMEOUT_S)


def max_wall_s(timeout_s: float, startup_s: float = STARTUP_S) -> float:
    """The longest :func:`spawn` can take before it returns or raises, for callers with a time budget:
    start-up allowance + run timeout + a waiting rank's own timeout report + the SIGTERM grace."""
    return _timeout("startup_s", startup_s) + _timeout("timeout_s", timeout_s) + _LATE_S + KILL_GRACE_S


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


# -------------------------------------------------------------------------------------------------------
# The rank's side
# -------------------------------------------------------------------------------------------------------

def _die_with_parent(parent_pid: int, lifeline: Any) -> None:
    """Make this process end when its parent does: PR_SET_PDEATHSIG (Linux), then a thread that waits for
    EOF on the lifeline pipe (every platform; also covers a parent that died before the prctl)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:
        os._exit(_ORPHAN_EXIT)
    import threading

    def watch() -> None:
        try:
            lifeline.recv_bytes()
        except (EOFError, OSError):
            pass
        os._exit(_ORPHAN_EXIT)  # the parent is gone (or closed the lifeline): nobody reads our result

    threading.Thread(target=watch, name="ampere-lifeline", daemon=True).start()


def _send(conn: Any, message: tuple) -> None:
    try:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an unpicklable result is the rank's error, said as such
        data = pickle.dumps((message[0], "error", f"the result of rank {message[0]} cannot be sent to the "
                                                  f"parent (pickle: {type(exc).__name__}: {exc})"))
    conn.send_bytes(data)


def _worker(rank: int, world_size: int, backend: str, init_file: str, timeout_s: float,
            fn: Callable[..., Any], args: tuple, conn: Any, lifeline: Any, parent_pid: int) -> None:
    _die_with_parent(parent_pid, lifeline)
    import torch
    import torch.distributed as dist

    try:
        torch.set_num_threads(1)
        if backend == "nccl":
            torch.cuda.set_device(rank)
        dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world_size,
                                timeout=_dt.timedelta(seconds=timeout_s), **_init_kwargs(dist, backend, rank))
        _send(conn, (rank, "ready", None))
        try:
            result = fn(RankContext(rank, world_size, backend), *args)
        finally:
            dist.destroy_process_group()
        _send(conn, (rank, "ok", result))
    except BaseException:  # report everything, including KeyboardInterrupt in a child
        _send(conn, (rank, "error", traceback.format_exc()))


# -------------------------------------------------------------------------------------------------------
# The parent's side
# -------------------------------------------------------------------------------------------------------

_AT_TIMEOUT = "at the process-group timeout"


def _in_collective(tb: str) -> bool:
    """Did this rank fail inside torch.distributed (waiting for the others), rather than first-hand?"""
    return "distributed_c10d" in tb or _AT_TIMEOUT in tb or "ProcessGroup" in tb


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _stopped(pid: int | None) -> bool:
    """Is this process stopped (SIGSTOP, SIGTSTP, a debugger)? Read from /proc where there is one."""
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False


def _stop(procs: list[Any], grace_s: float) -> list[int]:
    """SIGTERM (and SIGCONT) every live process, SIGKILL those still alive after ``grace_s``; return the
    ranks killed."""
    started = {r: p for r, p in enumerate(procs) if p.pid is not None}
    for p in started.values():
        if p.is_alive():
            p.terminate()
            try:
                os.kill(p.pid, signal.SIGCONT)  # a stopped process only acts on SIGTERM once continued
            except (OSError, AttributeError):
                pass
    deadline = time.monotonic() + grace_s
    for p in started.values():
        p.join(timeout=max(0.0, deadline - time.monotonic()))
    killed = [r for r, p in started.items() if p.is_alive()]
    for r in killed:
        started[r].kill()
    for r in killed:
        started[r].join(timeout=10)
    return killed


def _start(procs: list[Any]) -> None:
    """Start the ranks with SIGINT ignored (inherited through exec): Ctrl-C in a terminal reaches the whole
    process group, and the parent, not each rank, answers it (it stops the ranks; no rank prints a
    KeyboardInterrupt traceback). Outside the main thread the disposition cannot change; the ranks then
    start as they are."""
    try:
        before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        before = None
    try:
        for p in procs:
            p.start()
    finally:
        if before is not None:
            signal.signal(signal.SIGINT, before)


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _check_fn(fn: Any) -> Callable[..., Any]:
    check.function("fn", fn)
    qual = getattr(fn, "__qualname__", "")
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    target: Any = module
    for part in qual.split("."):
        target = getattr(target, part, None)
    if "<" in qual or target is not fn:
        raise TypeError(f"fn must be a module-level function the ranks can import, got {fn!r} "
                        "(a lambda, a nested function or a bound method cannot be sent to another process)")
    return fn


def spawn(fn: Callable[..., Any], world_size: int, *, args: tuple = (), backend: str | None = None,
          timeout_s: float = 60.0, startup_s: float = STARTUP_S,
          validate: Callable[..., Any] | None = None) -> list[Any]:
    """Run ``fn(ctx, *args)`` in ``world_size`` processes and return the per-rank results (rank order).

    ``fn`` must be importable (a module-level function) and ``args`` and its result picklable.
    ``validate(*args)``, when given, runs here in the parent before any process starts: the caller's check
    of its configuration (its ``ValueError`` propagates unchanged). ``backend`` defaults to
    :func:`default_backend`. ``startup_s`` bounds the start-up (processes spawned, torch imported, every
    rank joined the process group); ``timeout_s`` then bounds the whole run of ``fn`` and each collective
    in it. A rank that raises, crashes, is stopped or hangs (each named as such, with its exit code or
    signal), or the deadline make it raise ``RuntimeError``; every rank still running is then terminated,
    and killed after ``KILL_GRACE_S`` if it ignores SIGTERM. Ranks die with their parent. Chapter:
    *NVLink, NVSwitch and collectives*, "The collectives lab".
    """
    fn = _check_fn(fn)
    world_size = check.bounded_int("world_size", world_size, 1, MAX_WORLD_SIZE, why="processes on one machine")
    timeout_s = _timeout("timeout_s", timeout_s)
    startup_s = _timeout("startup_s", startup_s)
    if not isinstance(args, tuple):
        raise TypeError(f"args must be a tuple, got {type(args).__name__}")
    if backend is not None:
        backend = check.one_of("backend", backend, BACKENDS)
    if validate is not None:
        check.function("validate", validate)(*args)
    try:
        pickle.dumps(args)
    except Exception as exc:
        raise TypeError(f"args cannot be sent to the ranks (pickle: {type(exc).__name__}: {exc})") from None
    import multiprocessing as mp
    from multiprocessing.connection import wait

    backend = backend or default_backend(world_size)
    if backend == "nccl":
        import torch

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if world_size > gpus:
            raise ValueError(f"world_size={world_size} with backend='nccl' needs one GPU per rank; "
                             f"this machine has {gpus}: use fewer ranks or backend='gloo'")
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="ampere-launch-") as tmp:
        init_file = os.path.join(tmp, "rendezvous")
        life_r, life_w = ctx.Pipe(duplex=False)
        pipes = [ctx.Pipe(duplex=False) for _ in range(world_size)]
        procs = [ctx.Process(target=_worker, args=(r, world_size, backend, init_file, timeout_s, fn, args,
                                                   pipes[r][1], life_r, os.getpid()), daemon=True)
                 for r in range(world_size)]
        readers = {pipes[r][0]: r for r in range(world_size)}
        results: dict[int, Any] = {}
        errors: dict[int, str] = {}
        ended: dict[int, float] = {}  # rank -> seconds into the run when its pipe closed without a result
        ready: set[int] = set()
        verdict: str | None = None  # the message when spawn gives up
        run_start: list[float] = []

        def silent() -> list[int]:
            return [r for r in range(world_size) if r not in results and r not in errors and r not in ended]

        def take(timeout: float) -> bool:
            """Wait up to ``timeout`` for messages or closed pipes; handle them; True if any came."""
            open_readers = [c for c, r in readers.items() if r not in ended]
            got = wait(open_readers, timeout=max(0.0, timeout)) if open_readers else []
            for conn in got:
                rank = readers[conn]
                try:
                    _, status, payload = pickle.loads(conn.recv_bytes())
                except (EOFError, OSError):
                    ended[rank] = time.monotonic() - run_start[0] if run_start else -1.0
                    continue
                except Exception as exc:  # a result the parent cannot unpickle
                    errors[rank] = f"its result could not be read ({type(exc).__name__}: {exc})"
                    continue
                if status == "ready":
                    ready.add(rank)
                    if len(ready) == world_size and not run_start:
                        run_start.append(time.monotonic())
                else:
                    (results if status == "ok" else errors)[rank] = payload
            if not open_readers:
                time.sleep(max(0.0, min(timeout, 0.05)))
            return bool(got)

        killed: list[int] = []
        try:
            _start(procs)
            for r in range(world_size):
                pipes[r][1].close()  # the rank holds the write end: its death closes the pipe
            life_r.close()
            start_deadline = time.monotonic() + startup_s
            while silent():
                take(0.1)
                if errors or ended:
                    end = time.monotonic() + _DRAIN_S  # the others' reports explain less, but name them
                    while silent() and time.monotonic() < end:
                        take(end - time.monotonic())
                    break
                now = time.monotonic()
                if not run_start and now > start_deadline:
                    late = sorted(set(range(world_size)) - ready)
                    verdict = (f"spawn: ranks {late} of {world_size} did not join the process group within the "
                               f"start-up allowance startup_s={startup_s:g} s (backend {backend})")
                    break
                if run_start and now > run_start[0] + timeout_s:
                    # a rank waiting in a collective reports its own timeout about now: give it _LATE_S to
                    # arrive, so that the rank it waited for is the one named
                    end = now + _LATE_S
                    while silent() and not errors and not ended and time.monotonic() < end:
                        take(end - time.monotonic())
                    if not errors and not ended:
                        verdict = ""  # decided below, once each silent rank's state is known
                    break
            # a rank whose pipe is still open may be exiting right now (a loaded machine): look again
            for r in silent():
                procs[r].join(timeout=0.5)
                if not procs[r].is_alive():
                    take(0.2)
                    if r in silent():
                        ended[r] = time.monotonic() - run_start[0] if run_start else -1.0
            stopped = [r for r in silent() if _stopped(procs[r].pid)]
        finally:
            if verdict is None and not errors and not ended and len(results) == world_size:
                end = time.monotonic() + 5.0  # every rank reported: let them exit on their own first
                for p in procs:
                    p.join(timeout=max(0.0, end - time.monotonic()))
            killed = _stop(procs, KILL_GRACE_S)
            life_w.close()
            for conn in readers:
                conn.close()
        codes = {r: procs[r].exitcode for r in range(world_size)}
        _raise_failure(world_size, backend, timeout_s, verdict, results, errors, ended, stopped, killed, codes)
    return [results[r] for r in range(world_size)]


def _raise_failure(world_size: int, backend: str, timeout_s: float, verdict: str | None, results: dict[int, Any],
                  errors: dict[int, str], ended: dict[int, float], stopped: list[int], killed: list[int],
                  codes: dict[int, int | None]) -> None:
    """Raise the ``RuntimeError`` that names what went wrong, by rank (nothing when every rank returned)."""
    if verdict is None and not errors and not ended and len(results) == world_size:
        return
    after = (f"\n(ranks {killed} ignored SIGTERM and were killed with SIGKILL after {KILL_GRACE_S:g} s)"
             if killed else "")
    where = f"backend {backend}, timeout_s={timeout_s:g} s"
    silent = [r for r in range(world_size) if r not in results and r not in errors and r not in ended]
    if stopped:
        waiting = sorted(set(errors) | (set(silent) - set(stopped)))
        raise RuntimeError(f"spawn: rank{'s' if len(stopped) > 1 else ''} {', '.join(map(str, stopped))} of "
                           f"{world_size} {'were' if len(stopped) > 1 else 'was'} stopped (SIGSTOP or a "
                           f"debugger) and never finished; ranks {waiting} waited for it ({where}){after}")
    if verdict:
        raise RuntimeError(verdict + after)
    first_hand = sorted(r for r, tb in errors.items() if not _in_collective(tb))
    if first_hand:
        rank = first_hand[0]
        others = sorted((set(errors) | set(ended)) - {rank})
        tail = f"\n(then ranks {others} failed too, waiting on it)" if others else ""
        raise RuntimeError(f"spawn: rank {rank} of {world_size} failed (backend {backend}):\n{errors[rank]}"
                           f"{tail}{after}")
    # a rank that died at the process-group timeout (NCCL's watchdog ends it, no traceback) was waiting
    at_timeout = {r for r, t in ended.items() if t >= 0.9 * timeout_s}
    crashed = sorted(set(ended) - at_timeout)
    if crashed:
        rank = crashed[0]
        into = f", {ended[rank]:.1f} s into the run" if ended[rank] >= 0 else " during start-up"
        others = sorted((set(errors) | set(ended)) - {rank})
        tail = f"; ranks {others} then failed waiting on it" if others else ""
        more = f" (ranks {crashed} crashed)" if len(crashed) > 1 else ""
        raise RuntimeError(f"spawn: rank {rank} of {world_size} crashed ({_exit_text(codes.get(rank))}) without "
                           f"a result or a Python error{into}{more}{tail} ({where}){after}")
    waited = sorted(set(errors) | at_timeout)
    if silent and waited:
        text = {r: errors.get(r) or (f"process ended ({_exit_text(codes.get(r))}) without a result, "
                                     f"{ended[r]:.1f} s into the run ({_AT_TIMEOUT}: NCCL's watchdog ends a "
                                     "rank whose collective timed out)") for r in waited}
        raise RuntimeError(
            f"spawn: rank{'s' if len(silent) > 1 else ''} {', '.join(map(str, silent))} of {world_size} hung: "
            f"never reached the collective that rank{'s' if len(waited) > 1 else ''} "
            f"{', '.join(map(str, waited))} waited in (no result, no error; {where}){after}\n"
            f"rank {waited[0]} gave up waiting:\n{_tail(text[waited[0]])}")
    if silent:
        raise RuntimeError(f"spawn: ranks {silent} of {world_size} hung: no result and no error within "
                           f"timeout_s={timeout_s:g} s after start-up (backend {backend}){after}")
    rank = min(errors) if errors else min(ended)
    text = errors.get(rank) or f"process ended ({_exit_text(codes.get(rank))}) without a result"
    raise RuntimeError(f"spawn: rank {rank} of {world_size} failed (backend {backend}):\n{text}{after}")

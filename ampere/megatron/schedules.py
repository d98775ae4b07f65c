"""Pipeline schedules simulated step by step: GPipe, 1F1B and interleaved 1F1B (:func:`schedule_ops`,
:func:`simulate_schedule`), and the bubble read off the simulation beside the paper's formula
(:func:`bubble_formula`).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
section "Pipeline schedules". Pure: no torch, no matplotlib (the timeline figure of a simulated schedule
is ``figures.plot_schedule``). The lab (``lab.py``) runs its microbatches in the order of
:func:`schedule_ops`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .. import check

# ===========================================================================================================
# Pipeline schedules, simulated step by step
# ===========================================================================================================

SCHEDULES = ("gpipe", "1f1b", "interleaved")
#: Bounds of the step-by-step simulation: stages, microbatches, chunks, and operations in all (2 p m v).
MAX_PIPELINE, MAX_MICROBATCHES, MAX_INTERLEAVE, MAX_OPS = 4096, 1_000_000, 64, 2_000_000


def _pmv(pipeline: Any, microbatches: Any, interleave: Any) -> tuple[int, int, int]:
    p = check.positive_int("pipeline", pipeline, maximum=MAX_PIPELINE)
    m = check.positive_int("microbatches", microbatches, maximum=MAX_MICROBATCHES)
    v = check.positive_int("interleave", interleave, maximum=MAX_INTERLEAVE)
    return p, m, v


def bubble_formula(pipeline: int, microbatches: int, interleave: int = 1) -> float:
    """Bubble time over ideal time: (p-1)/m, and (1/v)(p-1)/m interleaved (paper section 2.2)."""
    p, m, v = _pmv(pipeline, microbatches, interleave)
    return (p - 1) / (v * m)


def schedule_ops(kind: str, pipeline: int, microbatches: int, interleave: int = 1) -> list[list[tuple[str, int, int]]]:
    """The ordered operations each pipeline device runs: lists of (``"F"`` or ``"B"``, microbatch, chunk).

    Chapter: "Pipeline schedules". ``gpipe``: all forwards, then all backwards. ``1f1b`` (PipeDream-Flush):
    device r runs p - r - 1 warm-up forwards, then alternates one forward and one backward, then drains.
    ``interleaved``: Megatron's schedule with v model chunks per device: (p - r - 1) x 2 + (v - 1) p
    warm-up forwards over virtual microbatches k, where chunk = (k // p) mod v (backwards in reverse chunk
    order) and microbatch = (k // (p v)) p + k mod p; it needs m to be a multiple of p.
    """
    check.one_of("kind", kind, SCHEDULES)
    p, m, v = _pmv(pipeline, microbatches, interleave)
    if 2 * p * m * v > MAX_OPS:
        raise ValueError(f"pipeline x microbatches x interleave = {p} x {m} x {v} gives {2 * p * m * v} operations to "
                         f"schedule; allowed: at most {MAX_OPS}")
    if kind != "interleaved" and v != 1:
        raise ValueError(f"interleave={v} needs kind='interleaved' (kind={kind!r} has one chunk per device)")
    if kind == "interleaved" and m % p:
        raise ValueError(f"microbatches={m} must be a multiple of pipeline={p} for the interleaved schedule")
    devices = []
    for r in range(p):
        if kind == "gpipe":
            devices.append([("F", i, 0) for i in range(m)] + [("B", i, 0) for i in range(m)])
            continue
        if kind == "1f1b":
            warm = min(p - r - 1, m)
            ops = [("F", i, 0) for i in range(warm)]
            for i in range(m - warm):
                ops += [("F", warm + i, 0), ("B", i, 0)]
            ops += [("B", i, 0) for i in range(m - warm, m)]
            devices.append(ops)
            continue
        total = m * v

        def fwd(k: int) -> tuple[str, int, int]:
            return ("F", (k // (p * v)) * p + k % p, (k // p) % v)

        def bwd(k: int) -> tuple[str, int, int]:
            return ("B", (k // (p * v)) * p + k % p, v - 1 - (k // p) % v)

        warm = min((p - r - 1) * 2 + (v - 1) * p, total)
        ops = [fwd(k) for k in range(warm)]
        for i in range(total - warm):
            ops += [fwd(warm + i), bwd(i)]
        ops += [bwd(k) for k in range(total - warm, total)]
        devices.append(ops)
    return devices


@dataclass
class ScheduleResult:
    """What :func:`simulate_schedule` returns: every operation with its start and end, and the bubble."""

    kind: str
    pipeline: int
    microbatches: int
    interleave: int
    ops: list[dict[str, Any]]  # device, op ("F"/"B"), microbatch, chunk, start, end
    makespan: float
    ideal: float  # one device's pure compute time: m (t_fwd + t_bwd)
    max_in_flight: list[float]  # per device: peak stashed activations, in microbatches x whole stages

    def __post_init__(self) -> None:
        check.one_of("kind", self.kind, SCHEDULES)
        self.pipeline, self.microbatches, self.interleave = _pmv(self.pipeline, self.microbatches, self.interleave)
        if isinstance(self.ops, (str, bytes)) or not isinstance(self.ops, list):
            raise TypeError(f"ops must be a list of operations (dicts), got {self.ops!r:.60} ({type(self.ops).__name__})")
        if not all(isinstance(o, dict) for o in self.ops):
            raise TypeError("ops must be a list of dicts (device, op, microbatch, chunk, start, end)")
        self.makespan = check.positive("makespan", self.makespan)
        self.ideal = check.positive("ideal", self.ideal)
        self.max_in_flight = check.sequence("max_in_flight", self.max_in_flight, check.nonneg,
                                            max_len=MAX_PIPELINE)

    @property
    def bubble_fraction(self) -> float:
        """(makespan - ideal) / ideal: the paper's bubble time fraction, read off the simulation."""
        return (self.makespan - self.ideal) / self.ideal


def simulate_schedule(kind: str, pipeline: int, microbatches: int, interleave: int = 1, t_fwd: float = 1.0,
                      t_bwd: float = 2.0, t_comm: float = 0.0,
                      stage_times: Sequence[tuple[float, float]] | None = None) -> ScheduleResult:
    """Run a pipeline schedule step by step: each device executes its ops in order, as soon as inputs arrive.

    Chapter: "Pipeline schedules". ``t_fwd`` and ``t_bwd`` are one microbatch's forward and backward time
    on one device for its whole stage (a chunk takes 1/v of it); ``t_comm`` is added to every transfer
    between devices; ``stage_times`` gives per-device (t_fwd, t_bwd) instead (an unbalanced pipeline).
    A forward on virtual stage c p + r waits for the forward of the previous virtual stage; a backward
    for the next stage's backward and for its own forward.
    """
    order = schedule_ops(kind, pipeline, microbatches, interleave)
    p, m, v = _pmv(pipeline, microbatches, interleave)
    t_comm = check.nonneg("t_comm", t_comm)
    if stage_times is None:
        stage_times = [(check.positive("t_fwd", t_fwd), check.positive("t_bwd", t_bwd))] * p
    else:
        if isinstance(stage_times, (str, bytes)) or not isinstance(stage_times, Sequence):
            raise TypeError(f"stage_times must be a sequence of (t_fwd, t_bwd) pairs, got {stage_times!r}")
        if len(stage_times) != p:
            raise ValueError(f"stage_times has {len(stage_times)} entries; pipeline={p} needs one per device")
        pairs = []
        for i, pair in enumerate(stage_times):
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise TypeError(f"stage_times[{i}] must be a (t_fwd, t_bwd) pair, got {pair!r}")
            pairs.append((check.positive(f"stage_times[{i}][0]", pair[0]), check.positive(f"stage_times[{i}][1]", pair[1])))
        stage_times = pairs
    n_stages = p * v
    done: dict[tuple[str, int, int], float] = {}  # (op, microbatch, virtual stage) -> end time
    free = [0.0] * p
    ptr = [0] * p
    ops: list[dict[str, Any]] = []
    in_flight = [0.0] * p
    max_in_flight = [0.0] * p
    remaining = sum(len(o) for o in order)
    while remaining:
        progress = False
        for r in range(p):
            while ptr[r] < len(order[r]):
                op, mb, chunk = order[r][ptr[r]]
                vs = chunk * p + r
                deps: list[float] = []
                if op == "F":
                    if vs > 0:
                        key = ("F", mb, vs - 1)
                        if key not in done:
                            break
                        deps.append(done[key] + (t_comm if (vs - 1) % p != r else 0.0))
                else:
                    if ("F", mb, vs) not in done:
                        break
                    deps.append(done[("F", mb, vs)])
                    if vs < n_stages - 1:
                        key = ("B", mb, vs + 1)
                        if key not in done:
                            break
                        deps.append(done[key] + (t_comm if (vs + 1) % p != r else 0.0))
                tf, tb = stage_times[r]
                dur = (tf if op == "F" else tb) / v
                start = max([free[r]] + deps)
                end = start + dur
                done[(op, mb, vs)] = end
                free[r] = end
                ops.append({"device": r, "op": op, "microbatch": mb, "chunk": chunk, "start": start, "end": end})
                in_flight[r] += (1.0 if op == "F" else -1.0) / v  # a chunk holds 1/v of the stage's layers
                max_in_flight[r] = max(max_in_flight[r], in_flight[r])
                ptr[r] += 1
                remaining -= 1
                progress = True
        if not progress:  # cannot happen for the schedules above; guards against a bad order
            raise RuntimeError(f"schedule {kind!r} deadlocked (p={p}, m={m}, v={v})")
    makespan = max(o["end"] for o in ops)
    ideal = max(m * (tf + tb) for tf, tb in stage_times)
    return ScheduleResult(kind, p, m, v, ops, makespan, ideal, max_in_flight)


"""ampere.launch: real gloo processes, results in rank order, failures raised, bad input rejected."""

import pytest

from ampere import launch

from . import launch_workers


def test_all_reduce_across_two_processes():
    out = launch.spawn(launch_workers.all_reduce_sum, 2, args=(16,), backend="gloo", timeout_s=60)
    assert out == [(0, 3.0), (1, 3.0)]


def test_failing_rank_raises_with_its_traceback():
    with pytest.raises(RuntimeError, match=r"rank 1 of 2 failed(.|\n)*bad rank"):
        launch.spawn(launch_workers.fail_on_rank_one, 2, backend="gloo", timeout_s=20)


def test_bad_arguments():
    with pytest.raises(ValueError):
        launch.spawn(launch_workers.all_reduce_sum, 0)
    with pytest.raises(ValueError):
        launch.spawn(launch_workers.all_reduce_sum, 2, backend="mpi")
    with pytest.raises(ValueError):
        launch.spawn(launch_workers.all_reduce_sum, 2, timeout_s=0)


def test_default_backend_is_gloo_without_gpus(monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert launch.default_backend(2) == "gloo"


def test_nccl_needs_one_gpu_per_rank():
    import torch

    if torch.cuda.is_available() and torch.cuda.device_count() >= 64:
        pytest.skip("a machine with 64 GPUs")
    with pytest.raises(ValueError, match="one GPU per rank"):
        launch.spawn(launch_workers.all_reduce_sum, 64, backend="nccl")


def _left_behind(folder):
    import os

    alive = []
    for name in os.listdir(folder):
        pid = int(name.split("-")[1])
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        alive.append(pid)
    return alive


@pytest.mark.slow
def test_a_rank_that_hangs_and_ignores_sigterm_is_named_and_killed(tmp_path):
    import time

    t0 = time.monotonic()
    with pytest.raises(RuntimeError) as err:
        launch.spawn(launch_workers.hang_on_rank_one_ignoring_sigterm, 2, args=(str(tmp_path),), backend="gloo",
                     timeout_s=5)
    elapsed = time.monotonic() - t0
    text = str(err.value)
    assert "rank 1 of 2 hung" in text and "never reached the collective" in text and "rank 0" in text
    assert "ignored SIGTERM" in text and "[1]" in text
    assert len(list(tmp_path.iterdir())) == 2 and _left_behind(tmp_path) == []
    # about 10 s on an idle machine: start-up (a few s), timeout_s = 5 s, the waiting rank's report, 2 s SIGTERM
    # grace; never more than the documented bound (start-up allowance included), plus process clean-up
    assert elapsed < launch.max_wall_s(5) + 5


@pytest.mark.slow
def test_the_run_is_bounded_by_timeout_s_after_start_up(tmp_path):
    import time

    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"ranks \[0, 1\] of 2 hung(.|\n)*timeout_s=3 s after start-up") as err:
        launch.spawn(launch_workers.everyone_sleeps_ignoring_sigterm, 2, args=(str(tmp_path),), backend="gloo",
                     timeout_s=3)
    assert "ranks [0, 1] ignored SIGTERM" in str(err.value)
    assert _left_behind(tmp_path) == []
    assert time.monotonic() - t0 < 3 + launch.STARTUP_S + launch.KILL_GRACE_S + 5


def test_start_up_allowance_is_separate(tmp_path):
    with pytest.raises(RuntimeError, match=r"did not join the process group within the start-up allowance"):
        launch.spawn(launch_workers.all_reduce_sum, 2, args=(4,), backend="gloo", timeout_s=30, startup_s=0.01)


def test_bad_argument_types():
    with pytest.raises(TypeError, match="world_size"):
        launch.spawn(launch_workers.all_reduce_sum, 2.0)
    with pytest.raises(TypeError, match="world_size"):
        launch.spawn(launch_workers.all_reduce_sum, True)
    with pytest.raises(ValueError, match="startup_s"):
        launch.spawn(launch_workers.all_reduce_sum, 2, startup_s=-1)
    with pytest.raises(TypeError, match="args"):
        launch.spawn(launch_workers.all_reduce_sum, 2, args=[4])


def test_device_id_only_where_torch_has_it():
    import types

    import torch

    def new(backend, *, init_method=None, rank=-1, world_size=-1, timeout=None, device_id=None):
        pass

    def old(backend, *, init_method=None, rank=-1, world_size=-1, timeout=None):
        pass

    assert launch._init_kwargs(types.SimpleNamespace(init_process_group=new), "nccl", 1) == {
        "device_id": torch.device("cuda", 1)}
    assert launch._init_kwargs(types.SimpleNamespace(init_process_group=old), "nccl", 1) == {}
    assert launch._init_kwargs(types.SimpleNamespace(init_process_group=new), "gloo", 1) == {}


@pytest.mark.slow
def test_a_rank_ended_by_the_watchdog_is_not_blamed(tmp_path):
    with pytest.raises(RuntimeError, match=r"rank 1 of 2 hung: never reached the collective") as err:
        launch.spawn(launch_workers.die_at_the_timeout_while_rank_one_hangs, 2, args=(str(tmp_path), 4.0),
                     backend="gloo", timeout_s=4)
    assert "process ended (exit code 6)" in str(err.value) and _left_behind(tmp_path) == []


@pytest.mark.slow
def test_a_rank_that_crashes_early_is_blamed(tmp_path):
    with pytest.raises(RuntimeError, match=r"rank 0 of 2 crashed \(exit code 6\) without a result"):
        launch.spawn(launch_workers.die_at_the_timeout_while_rank_one_hangs, 2, args=(str(tmp_path), 0.0),
                     backend="gloo", timeout_s=20)
    assert _left_behind(tmp_path) == []


def test_max_wall_s_is_the_documented_bound():
    assert launch.max_wall_s(5, startup_s=10) == pytest.approx(5 + 10 + 2.5 + launch.KILL_GRACE_S)
    assert launch.max_wall_s(60) == pytest.approx(60 + launch.STARTUP_S + 2.5 + launch.KILL_GRACE_S)
    with pytest.raises(ValueError, match="timeout_s"):
        launch.max_wall_s(0)


# ---------------------------------------------------------------------------------------------------------
# Refused before any process starts
# ---------------------------------------------------------------------------------------------------------

def _refuse(*args):
    raise ValueError("lr=-1 must be > 0")


def test_validate_hook_runs_in_the_parent_before_any_process(tmp_path):
    import time

    t0 = time.monotonic()
    with pytest.raises(ValueError, match="lr=-1 must be > 0"):
        launch.spawn(launch_workers.sleep_in_a_barrier, 2, args=(str(tmp_path),), validate=_refuse)
    assert time.monotonic() - t0 < 1.0 and list(tmp_path.iterdir()) == []
    with pytest.raises(TypeError, match="validate"):
        launch.spawn(launch_workers.all_reduce_sum, 2, args=(4,), validate="yes")


def test_fn_and_args_must_travel_to_the_ranks():
    with pytest.raises(TypeError, match="module-level function"):
        launch.spawn(lambda ctx: 1, 2)

    def nested(ctx):
        return 1

    with pytest.raises(TypeError, match="module-level function"):
        launch.spawn(nested, 2)
    with pytest.raises(TypeError, match="args cannot be sent"):
        launch.spawn(launch_workers.all_reduce_sum, 2, args=(lambda: 1,))


@pytest.mark.parametrize("kwargs, field", [
    ({"world_size": 10 ** 12}, "world_size"), ({"world_size": 0}, "world_size"),
    ({"timeout_s": 1e12}, "timeout_s"), ({"timeout_s": float("nan")}, "timeout_s"),
    ({"startup_s": float("inf")}, "startup_s"), ({"backend": ""}, "backend"), ({"backend": "mpi"}, "backend"),
])
def test_bounds_are_checked_at_once(kwargs, field):
    import time

    call = {"world_size": 2, **kwargs}
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=field):
        launch.spawn(launch_workers.all_reduce_sum, call.pop("world_size"), args=(4,), **call)
    assert time.monotonic() - t0 < 1.0


def test_rank_context_and_default_backend_check_their_arguments():
    with pytest.raises(ValueError, match="rank"):
        launch.RankContext(2, 2, "gloo")
    with pytest.raises(ValueError, match="backend"):
        launch.RankContext(0, 2, "mpi")
    with pytest.raises(TypeError, match="world_size"):
        launch.default_backend(True)
    with pytest.raises(ValueError, match="world_size"):
        launch.default_backend(10 ** 12)


@pytest.mark.slow
def test_an_unpicklable_result_is_that_ranks_error():
    with pytest.raises(RuntimeError, match=r"rank 0 of 2 failed(.|\n)*cannot be sent to the parent"):
        launch.spawn(launch_workers.return_an_unpicklable_result, 2, backend="gloo", timeout_s=30)


# ---------------------------------------------------------------------------------------------------------
# Crashed, stopped, orphaned
# ---------------------------------------------------------------------------------------------------------

@pytest.fixture
def cpu_load():
    """Keep the other core busy (the issue: under load, a crashed rank was reported as hung)."""
    import subprocess
    import sys

    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for b in burners:
        b.kill()
        b.wait()


@pytest.mark.slow
@pytest.mark.serial  # it loads both cores: `make test` runs it alone, after the parallel run
@pytest.mark.parametrize("code, text", [(7, "exit code 7"), (-9, "killed by signal SIGKILL")])
def test_a_crashed_rank_is_named_crashed_with_its_code_under_load(tmp_path, cpu_load, code, text):
    with pytest.raises(RuntimeError) as err:
        launch.spawn(launch_workers.crash_rank_one, 2, args=(str(tmp_path), code), backend="gloo", timeout_s=60)
    message = str(err.value)
    assert f"rank 1 of 2 crashed ({text})" in message, message
    assert "hung" not in message and "rank 0 of 2" not in message
    assert _left_behind(tmp_path) == []


@pytest.mark.slow
def test_a_stopped_rank_is_named_and_only_that_one(tmp_path):
    with pytest.raises(RuntimeError) as err:
        launch.spawn(launch_workers.stop_rank_one, 2, args=(str(tmp_path),), backend="gloo", timeout_s=4)
    message = str(err.value)
    assert message.startswith("spawn: rank 1 of 2 was stopped"), message
    assert "ranks [0] waited" in message and "hung" not in message
    assert _left_behind(tmp_path) == []


def _session(sid):
    """Pids of the live processes of session ``sid`` (zombies excluded), from /proc."""
    import os

    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(name))
    return out


_PARENTS = {
    "spawn": "from tests import launch_workers; from ampere import launch; "
             "launch.spawn(launch_workers.sleep_in_a_barrier, 2, args=({folder!r},), backend='gloo', timeout_s=300)",
    "collective": "from ampere import interconnect; "
                  "interconnect.run_collective('all_reduce', [2**22], 2, backend='gloo', samples=100000, timeout_s=300)",
    "lab": "from ampere.megatron import lab; lab.run_labs([lab.LabConfig(steps=10000)], backend='gloo', "
           "timeout_s=300)",
}


@pytest.mark.slow
@pytest.mark.skipif(not __import__("os").path.isdir("/proc"), reason="reads /proc")
@pytest.mark.parametrize("what", list(_PARENTS))
def test_sigkill_to_the_parent_leaves_no_process_behind(tmp_path, what):
    """SIGKILL the parent of a running spawn (a bare one, a collective, a Megatron lab): within 15 s no
    process of its session is left (ranks, resource tracker)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = f"import sys; sys.path.insert(0, {str(root)!r}); " + _PARENTS[what].format(folder=str(tmp_path))
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=root, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        # the parent, the resource tracker and two ranks: wait until the ranks run (past torch's import)
        while time.monotonic() < deadline and len(_session(parent.pid)) < 4:
            time.sleep(0.2)
        assert len(_session(parent.pid)) >= 4, f"the ranks never started: {_session(parent.pid)}"
        time.sleep(3.0)
        before = set(_session(parent.pid)) - {parent.pid}
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        end = time.monotonic() + 15
        while time.monotonic() < end and _session(parent.pid):
            time.sleep(0.2)
        left = _session(parent.pid)
        assert left == [], f"left behind after 15 s: {left} (children were {sorted(before)})"
    finally:
        for pid in _session(parent.pid):
            os.kill(pid, signal.SIGKILL)

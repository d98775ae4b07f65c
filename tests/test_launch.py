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
    # about 10 s here: start-up (a few s), timeout_s = 5 s, the waiting rank's report, 2 s SIGTERM grace
    assert elapsed < 20


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
    assert "exited with code 6" in str(err.value) and _left_behind(tmp_path) == []


@pytest.mark.slow
def test_a_rank_that_crashes_early_is_blamed(tmp_path):
    with pytest.raises(RuntimeError, match=r"rank 0 of 2 failed(.|\n)*exited with code 6 without a result"):
        launch.spawn(launch_workers.die_at_the_timeout_while_rank_one_hangs, 2, args=(str(tmp_path), 0.0),
                     backend="gloo", timeout_s=20)
    assert _left_behind(tmp_path) == []


def test_max_wall_s_is_the_documented_bound():
    assert launch.max_wall_s(5, startup_s=10) == pytest.approx(5 + 10 + 2.5 + launch.KILL_GRACE_S)
    assert launch.max_wall_s(60) == pytest.approx(60 + launch.STARTUP_S + 2.5 + launch.KILL_GRACE_S)
    with pytest.raises(ValueError, match="timeout_s"):
        launch.max_wall_s(0)

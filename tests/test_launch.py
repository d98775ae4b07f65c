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

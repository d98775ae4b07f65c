"""ampere.device: the probe without a GPU, forced CPU, serialisation, TF32 switches."""

import pytest

from ampere import device


def test_probe_on_this_machine_never_raises_and_reports_cpu(monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    info = device.probe()
    assert info.backend == "cpu" and info.forced_cpu
    assert not (info.tf32 or info.bf16_tensor or info.sparse_2to4 or info.mig_capable)
    assert info.spec is None and info.torch_version
    assert "AMPERE_DEVICE=cpu" in info.summary()
    assert info.label().startswith("CPU: ")


def test_device_info_round_trip():
    info = device.probe()
    assert device.DeviceInfo.from_dict(info.to_dict()) == info
    gpu = device.DeviceInfo(backend="cuda", name="NVIDIA A100-SXM4-80GB", compute_capability=(8, 0),
                            spec_name="A100-SXM4-80GB", tf32=True, notes=("x",))
    again = device.DeviceInfo.from_dict(gpu.to_dict())
    assert again == gpu and again.spec.sm_count == 108 and again.label() == "NVIDIA A100-SXM4-80GB (sm80)"
    assert "2:4 sparse TC" in gpu.summary()


def test_torch_device_is_cpu_without_gpu(monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert device.torch_device().type == "cpu"


def test_tf32_switch_sets_and_restores():
    before = device.tf32_state()
    with device.tf32_enabled(True) as state:
        assert state["matmul"] in (True, "tf32")
        with device.tf32_enabled(False, conv=True) as inner:
            assert inner["matmul"] in (False, "ieee") and inner["conv"] in (True, "tf32")
    assert device.tf32_state() == before
    with pytest.raises(RuntimeError):
        with device.tf32_enabled(True):
            raise RuntimeError("boom")
    assert device.tf32_state() == before
    with pytest.raises(ValueError):
        with device.tf32_enabled("yes"):
            pass

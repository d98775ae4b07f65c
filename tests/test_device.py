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
    with pytest.raises(TypeError, match="enabled"):
        device.tf32_enabled("yes")  # refused when called, before the with block
    with pytest.raises(TypeError, match="conv"):
        device.tf32_enabled(True, conv=1)


def test_nvml_failures_become_notes(monkeypatch):
    import sys
    import types

    fake = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    calls = []

    def init():
        calls.append(1)
        raise NVMLError("driver not loaded")

    fake.nvmlInit = init
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(device, "_NVML", {"module": None, "pid": None, "error": None, "atexit": True})
    out = device._nvml_info(0)
    assert out["notes"] and "NVML unavailable" in out["notes"][0] and "driver not loaded" in out["notes"][0]
    assert device.nvml() == (None, out["notes"][0].split(": MIG")[0])
    assert len(calls) == 1  # the failure is cached, not retried
    with pytest.raises(RuntimeError, match="NVML unavailable"):
        device.nvml_handle(0)


def test_probe_rejects_a_bad_index():
    with pytest.raises(TypeError, match="index"):
        device.probe(index="0")
    with pytest.raises(ValueError, match="index"):
        device.probe(index=-1)


def test_pci_bus_id_format():
    import types

    props = types.SimpleNamespace(pci_domain_id=0, pci_bus_id=0x3B, pci_device_id=0)
    assert device.pci_bus_id(props) == "00000000:3B:00.0"
    assert device.pci_bus_id(types.SimpleNamespace()) is None

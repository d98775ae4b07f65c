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


def test_nvml_failures_become_notes(monkeypatch):
    import sys
    import types

    fake = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    def init():
        raise NVMLError("driver not loaded")

    fake.nvmlInit = init
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    out = device._nvml_info(0)
    assert out["notes"] and "NVML unavailable" in out["notes"][0]


def test_nvml_fields_are_read_and_partial_failures_noted(monkeypatch):
    import sys
    import types

    fake = types.ModuleType("pynvml")
    fake.NVML_CLOCK_SM = 1
    fake.nvmlInit = lambda: None
    fake.nvmlShutdown = lambda: None
    fake.nvmlDeviceGetHandleByIndex = lambda i: "h"
    fake.nvmlSystemGetDriverVersion = lambda: b"570.1"
    fake.nvmlDeviceGetMigMode = lambda h: [1, 1]
    fake.nvmlDeviceGetMaxClockInfo = lambda h, kind: 1410
    fake.nvmlDeviceGetEnforcedPowerLimit = lambda h: 400000
    fake.nvmlDeviceGetEccMode = lambda h: [1, 1]
    fake.nvmlDeviceGetCurrPcieLinkGeneration = lambda h: 4

    def no_permission(h):
        raise RuntimeError("Insufficient Permissions")

    fake.nvmlDeviceGetCurrPcieLinkWidth = no_permission
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    out = device._nvml_info(0)
    assert out["driver_version"] == "570.1" and out["mig_mode"] == [1, 1] and out["sm_clock_max_mhz"] == 1410
    assert out["ecc_mode"] == [1, 1] and "pcie_width" not in out
    assert any("Insufficient Permissions" in n for n in out["notes"])


def test_cuda_probe_with_a_simulated_h200(monkeypatch):
    """The CUDA branch of probe() runs here against a stand-in for torch.cuda (no GPU on CI)."""
    import types

    import torch

    props = types.SimpleNamespace(name="NVIDIA H200", major=9, minor=0, total_memory=150_000_000_000,
                                  multi_processor_count=132, L2_cache_size=60 * 2**20)
    monkeypatch.delenv("AMPERE_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: props)
    monkeypatch.setattr(torch.backends.cudnn, "version", lambda: 90100)
    monkeypatch.setattr(device, "_nvml_info", lambda i: {"notes": [], "driver_version": "580.1",
                                                         "mig_mode": [0, 0], "sm_clock_max_mhz": 1980,
                                                         "power_limit_mw": 700000, "ecc_mode": [1, 1],
                                                         "pcie_gen": 5, "pcie_width": 16})
    info = device.probe()
    assert info.backend == "cuda" and info.spec_name == "H200-SXM-141GB" and info.compute_capability == (9, 0)
    assert info.tf32 and info.bf16_tensor and info.fp8_tensor and info.int8_tensor and info.mig_capable
    assert info.mig_enabled is False and info.ecc_enabled is True and info.pcie_link == "Gen5 x16"
    assert info.l2_bytes == 60 * 2**20 and info.sm_clock_max_hz == 1.98e9 and info.power_limit_w == 700
    text = info.summary()
    assert "H200-SXM-141GB" in text and "60 MiB" in text and "ECC / PCIe" in text
    with pytest.raises(ValueError):
        device.probe(index=3)
    # a T4 (Colab) has none of the sm80 features and no catalogue MIG
    props.name, props.major, props.minor = "Tesla T4", 7, 5
    t4 = device.probe()
    assert t4.spec_name == "T4" and not (t4.tf32 or t4.bf16_tensor or t4.sparse_2to4 or t4.mig_capable)
    # outside the catalogue: no spec, a note, MIG known by family
    props.name, props.major, props.minor = "NVIDIA A30", 8, 0
    a30 = device.probe()
    assert a30.spec is None and a30.mig_capable and any("not in the catalogue" in n for n in a30.notes)

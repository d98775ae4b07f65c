"""The CUDA branch of ampere.device.probe on the fake GPUs of tests/fakecuda.py: capabilities by compute
capability, 2:4 backends by architecture, NVML fields from the right GPU, failures as notes."""

import pytest

from ampere import device

from .fakecuda import MODELS, fake_cuda  # noqa: F401 (fixture)

#: model -> (tf32/bf16/int8, fp8, MIG capable, 2:4 backends without cuSPARSELt, with cuSPARSELt)
EXPECTED = {
    "A100-SXM4-40GB": (True, False, True, ("cutlass",), ("cutlass", "cusparselt")),
    "A100-SXM4-80GB": (True, False, True, ("cutlass",), ("cutlass", "cusparselt")),
    "A30": (True, False, True, ("cutlass",), ("cutlass", "cusparselt")),
    "H100": (True, True, True, (), ("cusparselt",)),  # Hopper: PyTorch's CUTLASS 2:4 kernels are sm8x only
    "H200": (True, True, True, (), ("cusparselt",)),
    "L4": (True, True, False, ("cutlass",), ("cutlass", "cusparselt")),  # sm89
    "T4": (False, False, False, (), ()),  # sm75: no sparse tensor cores at all
}


def test_every_faked_model_is_expected():
    assert set(EXPECTED) == set(MODELS)


@pytest.mark.parametrize("model", sorted(EXPECTED))
@pytest.mark.parametrize("cusparselt", [False, True])
def test_probe_capabilities(fake_cuda, model, cusparselt):  # noqa: F811
    fake = fake_cuda(model, cusparselt=cusparselt)
    sm80, fp8, mig, plain, with_csl = EXPECTED[model]
    info = device.probe()
    gpu = fake.gpu(0)
    assert info.backend == "cuda" and info.name == gpu.props.name and info.gpu_count == 1
    assert info.compute_capability == (gpu.props.major, gpu.props.minor)
    assert (info.tf32, info.bf16_tensor, info.int8_tensor) == (sm80,) * 3 and info.fp8_tensor is fp8
    assert info.mig_capable is mig
    backends = with_csl if cusparselt else plain
    assert info.sparse_2to4_backends == backends and info.sparse_2to4 is bool(backends)
    if model == "A30":
        assert info.spec is None and any("not in the catalogue" in n for n in info.notes)
    else:
        spec = gpu.spec
        assert info.spec_name == spec.name and info.sm_count == spec.sm_count and info.l2_bytes == spec.l2_bytes
        assert info.memory_bytes == spec.cuda_visible_bytes  # what CUDA exposes, not the physical capacity
        assert info.sm_clock_max_hz == pytest.approx(spec.boost_clock_hz)
        assert info.power_limit_w == pytest.approx(spec.tdp_w)
        assert info.pcie_link == f"Gen{spec.pcie_generation} x16"
    assert info.driver_version == "999.99-fake" and info.ecc_enabled is True
    assert device.DeviceInfo.from_dict(info.to_dict()) == info
    assert ("2:4 sparse TC  yes" in info.summary()) is bool(backends)


def test_sparse_backends_without_semi_structured_support():
    import types

    old_torch = types.SimpleNamespace(sparse=types.SimpleNamespace(), backends=types.SimpleNamespace())
    assert device.sparse_2to4_backends(old_torch, (8, 0)) == ()
    assert device.sparse_2to4_backends(old_torch, None) == ()


def test_mig_mode_and_instance(fake_cuda):  # noqa: F811
    fake = fake_cuda("A100-SXM4-40GB")
    fake.gpus[0].mig_mode = 1
    assert device.probe().mig_enabled is True
    fake.gpus[0].props.name = "NVIDIA A100-SXM4-40GB MIG 1g.5gb"
    fake.gpus[0].mig_mode = 0
    inside = device.probe()
    assert inside.mig_instance == "1g.5gb" and inside.mig_enabled is True and inside.spec_name == "A100-SXM4-40GB"


def test_nvml_partial_failures_become_notes(fake_cuda):  # noqa: F811
    fake = fake_cuda("T4")
    fake.nvml.fail("nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetEnforcedPowerLimit")
    info = device.probe()
    assert info.pcie_link is None and info.power_limit_w is None
    assert info.sm_clock_max_hz == pytest.approx(fake.gpu(0).spec.boost_clock_hz)
    assert any("nvmlDeviceGetCurrPcieLinkWidth" in n for n in info.notes)
    assert any("nvmlDeviceGetMigMode" in n for n in info.notes)  # a T4 has no MIG: NotSupported, noted


def test_nvml_falls_back_to_the_index_and_says_so(fake_cuda, monkeypatch):  # noqa: F811
    fake = fake_cuda("A100-SXM4-80GB", "H100")
    for g in fake.gpus:
        del g.props.pci_bus_id  # a torch that does not expose the PCI address
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    out = device._nvml_info(1)
    assert out["nvml_match"] == "index" and any("matched by index" in n for n in out["notes"])
    assert fake.nvml.handle_lookups == [("index", 1)]


def test_probe_index_out_of_range(fake_cuda):  # noqa: F811
    fake_cuda("H200", "H200")
    assert device.probe(index=1).gpu_count == 2
    with pytest.raises(ValueError, match="index=2"):
        device.probe(index=2)


def test_forced_cpu_on_a_gpu_machine(fake_cuda, monkeypatch):  # noqa: F811
    fake = fake_cuda("A100-SXM4-80GB")
    info = device.probe(force="cpu")
    assert info.backend == "cpu" and info.forced_cpu and not info.sparse_2to4
    assert fake.nvml.init_calls == 0  # the CPU path never touches NVML
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert device.probe().backend == "cpu" and device.torch_device().type == "cpu"


def test_the_fake_is_undone_after_each_test():
    """Install and undo within this test (monkeypatch's undo is what every test gets at its end)."""
    import sys

    import torch

    before = (torch.cuda.is_available, torch.cuda.Event, torch.Tensor.to, torch.empty, sys.modules.get("pynvml"),
              device._NVML)
    mp = pytest.MonkeyPatch()
    from .fakecuda import install

    install(mp, "H200")
    assert torch.cuda.is_available() and torch.cuda.get_device_properties(0).name == "NVIDIA H200"
    mp.undo()
    after = (torch.cuda.is_available, torch.cuda.Event, torch.Tensor.to, torch.empty, sys.modules.get("pynvml"),
             device._NVML)
    assert all(a is b for a, b in zip(before, after))


@pytest.mark.parametrize("model", sorted(MODELS))
def test_mem_get_info_follows_the_fake_allocations(fake_cuda, model):  # noqa: F811
    import gc

    import torch

    fake = fake_cuda(model)
    free0, total = torch.cuda.mem_get_info(0)
    assert free0 == total == fake.gpu(0).props.total_memory
    x = torch.empty(1000, dtype=torch.float32, device="cuda")
    y = torch.randn(10, 10).to("cuda:0", torch.float16)
    assert x.device.type == "meta" and y.dtype == torch.float16
    assert torch.cuda.mem_get_info()[0] == total - 4000 - 200
    del x, y
    gc.collect()
    assert torch.cuda.mem_get_info()[0] == total and fake.peak[0] == 4200
    with pytest.raises(torch.cuda.OutOfMemoryError, match="out of memory"):
        torch.empty(total + 1, dtype=torch.uint8, device="cuda")

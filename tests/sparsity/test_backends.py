"""ampere.sparsity.backends: which 2:4 backend the device probe allows, tried in order, and why not."""

import pytest

from ampere import sparsity as sp
from ampere.sparsity import backends as sparsity_backends  # the tests have a parameter named backends


def test_probe_backend_on_cpu_says_why(monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    check = sp.probe_backend()
    assert not check.works and check.backend is None and "no CUDA GPU" in check.reason
    assert "none" in check.summary()


def _gpu(name, cc, backends):
    from ampere import device

    return device.DeviceInfo("cuda", name, compute_capability=cc, sparse_2to4_backends=backends,
                             sparse_2to4=bool(backends))


@pytest.mark.parametrize("name, cc, backends, expected", [
    ("NVIDIA A100-SXM4-80GB", (8, 0), ("cutlass", "cusparselt"), ["cusparselt", "cutlass"]),
    ("NVIDIA A100-SXM4-80GB", (8, 0), ("cutlass",), ["cutlass"]),
    ("NVIDIA H100 80GB HBM3", (9, 0), ("cusparselt",), ["cusparselt"]),  # Hopper: no CUTLASS 2:4 kernels
    ("NVIDIA H200", (9, 0), (), []),  # a torch without cuSPARSELt: nothing to try on sm90
    ("Tesla T4", (7, 5), (), []),
])
def test_probe_backend_tries_only_what_the_device_probe_allows(monkeypatch, name, cc, backends, expected):
    tried = []

    def fake_try(backend, dev, dtype):
        tried.append(backend)
        return True, "fake product matches"

    monkeypatch.setattr(sparsity_backends, "_try_backend", fake_try)
    found = sp.probe_backend(_gpu(name, cc, backends))
    assert tried == expected
    assert found.works == bool(expected) and found.backend == (expected[0] if expected else None)
    if not expected:
        assert ("sparse tensor cores" if cc < (8, 0) else "no 2:4 backend") in found.reason


def test_probe_backend_falls_back_when_the_first_backend_fails(monkeypatch):
    monkeypatch.setattr(sparsity_backends, "_try_backend", lambda b, dev, dt: (b == "cutlass", f"{b} tried"))
    found = sp.probe_backend(_gpu("NVIDIA A100-SXM4-80GB", (8, 0), ("cutlass", "cusparselt")))
    assert found.backend == "cutlass" and found.working == ["cutlass"] and len(found.tried) == 2
    with pytest.raises(ValueError, match="dtype"):
        sp.probe_backend(_gpu("NVIDIA A100-SXM4-80GB", (8, 0), ("cutlass",)), dtype="float8")

"""Shared test data of tests/report/: a fake H200 device, figures, recorded figures and report results."""

from ampere import device, results

H200 = dict(backend="cuda", name="NVIDIA H200", compute_capability=(9, 0), spec_name="H200-SXM-141GB",
            gpu_count=1, tf32=True, bf16_tensor=True, fp8_tensor=True, int8_tensor=True, sparse_2to4=True,
            mig_capable=True, memory_bytes=150_000_000_000, l2_bytes=60 * 2**20, torch_version="2.13.0",
            driver_version="580.1", power_limit_w=700.0)


def _info(**over):
    return device.DeviceInfo(**{**H200, **over})


def _fig(key, value, model=None, **kw):
    return {"probe": key.split("/")[0], "key": key, "label": key, "value": value, "unit": "TFLOP/s",
            "model": model, **kw}


def _rec(key, value, gpu="H200-SXM-141GB"):
    return {"key": key, "value": value, "gpu": gpu, "provenance": f"recorded on {gpu}"}


def _report_result(values, info=None, created="2026-11-30T10:00:00Z", notes=()):
    info = info or _info()
    recs = [{"probe": "matmul", "key": k, "label": k, "value": v, "unit": "TFLOP/s", "model": 989.4}
            for k, v in values.items()]
    return results.make_result("report", info, {"quick": False}, recs, notes, created_utc=created)

"""A pynvml stand-in for the MIG tests (tests/mig/test_nvml.py, tests/mig/test_views.py): MIG mode, MIG
devices and the driver's profile table, with switches to deny what a real driver may deny."""

from __future__ import annotations

import ctypes
import types

from ampere import mig


class FakeNVMLError(Exception):
    def __init__(self, value):
        super().__init__(f"NVML error {value}")
        self.value = value


class Placement(ctypes.Structure):
    _fields_ = [("start", ctypes.c_uint), ("size", ctypes.c_uint)]


def fake_nvml(gpus, driver_table=None, deny_placement=False, deny_count=False):
    """A pynvml stand-in. ``gpus``: list of dicts with name, mig (None: unsupported), instances."""
    ns = types.SimpleNamespace()
    ns.NVML_GPU_INSTANCE_PROFILE_COUNT = 18
    ns.c_nvmlGpuInstancePlacement_t = Placement
    ns.nvmlInit = lambda: None
    ns.nvmlShutdown = lambda: None
    ns.nvmlSystemGetDriverVersion = lambda: b"580.65.06"

    def count():
        if deny_count:
            raise RuntimeError("driver went away")
        return len(gpus)

    ns.nvmlDeviceGetCount = count
    ns.nvmlDeviceGetHandleByIndex = lambda i: ("gpu", i)
    ns.nvmlDeviceGetName = lambda h: (gpus[h[1]]["name"] if h[0] == "gpu" else
                                      gpus[h[1]]["instances"][h[2]]["name"]).encode()

    def mig_mode(h):
        mode = gpus[h[1]]["mig"]
        if mode is None:
            raise FakeNVMLError(3)
        return [int(mode), int(mode)]

    ns.nvmlDeviceGetMigMode = mig_mode
    ns.nvmlDeviceGetMaxMigDeviceCount = lambda h: 7

    def mig_handle(h, k):
        if k >= len(gpus[h[1]]["instances"]):
            raise FakeNVMLError(6)
        return ("mig", h[1], k)

    ns.nvmlDeviceGetMigDeviceHandleByIndex = mig_handle
    inst = lambda h: gpus[h[1]]["instances"][h[2]]  # noqa: E731
    ns.nvmlDeviceGetUUID = lambda h: inst(h)["uuid"]
    ns.nvmlDeviceGetGpuInstanceId = lambda h: inst(h)["gi"]
    ns.nvmlDeviceGetComputeInstanceId = lambda h: 0
    ns.nvmlDeviceGetAttributes = lambda h: types.SimpleNamespace(multiprocessorCount=inst(h)["sms"],
                                                                 memorySizeMB=inst(h)["mib"])

    def gi_by_id(h, gi):
        if deny_placement:
            raise FakeNVMLError(4)
        return ("gi", h[1], gi)

    ns.nvmlDeviceGetGpuInstanceById = gi_by_id

    def gi_info(g):
        for m in gpus[g[1]]["instances"]:
            if m["gi"] == g[2]:
                return types.SimpleNamespace(placement=types.SimpleNamespace(start=m["start"], size=m["size"]))
        raise FakeNVMLError(6)

    ns.nvmlGpuInstanceGetInfo = gi_info
    rows = driver_table or []

    def profile_info(h, idx, version=2):
        if idx >= len(rows):
            raise FakeNVMLError(3)
        r = rows[idx]
        return types.SimpleNamespace(id=r["id"], sliceCount=r["slices"], instanceCount=r["max"],
                                     multiprocessorCount=r["sms"], memorySizeMB=r["mib"],
                                     name=("MIG " + r["name"]).encode())

    ns.nvmlDeviceGetGpuInstanceProfileInfo = profile_info

    def placements(h, pid, arr, count_ref):
        r = next(r for r in rows if r["id"] == pid)
        for i, s in enumerate(r["starts"]):
            arr[i].start, arr[i].size = s, r["size"]
        count_ref._obj.value = len(r["starts"])

    ns.nvmlDeviceGetGpuInstancePossiblePlacements = placements
    return ns


def _driver_rows(gpu):
    return [{"id": p.profile_id, "name": p.name, "slices": p.compute_slices, "max": p.max_count,
             "sms": p.sm_count, "mib": 4864 * p.memory_slices, "starts": list(p.starts), "size": p.memory_slices}
            for p in mig.profiles(gpu)]

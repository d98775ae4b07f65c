"""Compute instances inside a GPU instance: which compute-instance profiles a GPU instance admits. Pure Python.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb), "GPU instances and compute
instances". No torch, no matplotlib.

MIG partitions a GPU on two levels (NVIDIA's MIG User Guide, "Concepts", nvidiamig):

* a **GPU instance** (GI) owns memory slices (capacity, DRAM bandwidth, the L2 banks that serve them),
  SM slices, and engines (copy engines, video and JPEG decoders); it is the unit of memory QoS and of
  fault isolation;
* a **compute instance** (CI) is a subset of its GI's SM slices, with SMs of its own; the CIs of one GI
  *share* the GI's memory, L2 and engines (``nvidia-smi mig -lcip`` lists SMs as "Exclusive" and CE,
  DEC, ENC, JPEG, OFA as "Shared").

A CI of ``c`` compute slices inside a GI of ``g`` is named ``<c>c.<GI name>`` (``1c.3g.20gb``); the CI
that takes the whole GI carries the GI's name (``3g.20gb``) and is the one ``nvidia-smi mig -cgi ... -C``
creates by default. The book's rule, written from the guide's examples: a GI admits CIs of 1, 2, 3 and
4 compute slices that fit in it, plus the whole GI, and at most ``g // c`` CIs of size ``c`` at once
(they take disjoint SM slices). It reproduces the guide's ``-lcip`` listing of a ``3g.20gb`` GI (1c x 3,
2c x 1, 3g x 1), the CIs its "Concepts" page builds in a ``4g.20gb`` (1c, 2c, 3c and 4c), and its
device-names example of ``1c.7g.40gb``, ``2c.7g.40gb`` and ``3c.7g.40gb`` on one GPU. A real driver's own
list (``nvidia-smi mig -lcip -gi <ID>``, NVML ``GetComputeInstanceProfileInfo``) is the authority.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import check, specs
from ..fields import check_fields
from .profile_tables import Profile, profile, table

__all__ = ["CI_SLICES", "ComputeProfile", "compute_instance_profiles"]

#: Compute-instance sizes (in compute slices) smaller than a whole GI, as the guide's A100 examples show them.
CI_SLICES: tuple[int, ...] = (1, 2, 3, 4)


@dataclass(frozen=True)
class ComputeProfile:
    """One compute-instance profile inside one GPU-instance profile."""
    FIELD_RULES = {"positive": ("memory_shared_gib",), "bounds": {"compute_slices": (1, 8), "sms": (1, 1024), "max_count": (1, 8)}}  # the checks of fields.check_fields


    name: str  # "1c.3g.20gb"; the whole-GI profile carries the GI's name ("3g.20gb")
    gpu_instance: str  # the GI profile, "3g.20gb"
    compute_slices: int  # c: SM slices of the CI
    sms: int | None  # SMs of the CI (c x SMs per compute slice); None where slices differ in SMs (Hopper)
    max_count: int  # most CIs of this profile in one GI at once (g // c)
    memory_shared_gib: float  # nominal memory of the GI, shared by all its CIs (GiB)

    def __post_init__(self) -> None:
        check_fields(self)

    @property
    def whole_gpu_instance(self) -> bool:
        """True for the default CI that takes every SM slice of its GI."""
        return self.name == self.gpu_instance


def _profile_of(spec: specs.GPUSpec, gpu_instance: str | Profile) -> Profile:
    if isinstance(gpu_instance, Profile):
        gpu_instance = gpu_instance.name
    return profile(spec, check.one_of("gpu_instance", gpu_instance, table(spec).names))


def compute_instance_profiles(gpu: str | specs.GPUSpec, gpu_instance: str | Profile) -> tuple[ComputeProfile, ...]:
    """The compute-instance profiles a GPU instance of profile ``gpu_instance`` admits on ``gpu``, smallest first.

    ``gpu_instance`` is a GPU-instance profile name of ``gpu`` (``"3g.20gb"`` on an A100 40GB); unknown names
    raise ``ValueError`` listing the profiles of the GPU. The last profile is the whole GI. A ``+me`` GI
    (one compute slice) admits only itself. Chapter: *Multi-Instance GPU*, "GPU instances and compute
    instances".
    """
    spec = specs.get(gpu)
    gi = _profile_of(spec, gpu_instance)
    per_slice = table(spec).sms_per_compute_slice
    g = gi.compute_slices
    memory_gib = spec.memory_bytes * float(gi.memory_fraction) / 2**30
    out = []
    for c in (*[c for c in CI_SLICES if c < g], g):
        name = gi.name if c == g else f"{c}c.{gi.name}"
        sms = gi.sm_count if c == g else (c * per_slice if per_slice else None)
        out.append(ComputeProfile(name, gi.name, c, sms, g // c, memory_gib))
    return tuple(out)

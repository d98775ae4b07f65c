"""ampere.mig.profile_tables: the MIG profile tables as data, SM counts, media engines, instance peaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from ampere import results, specs
from ampere.mig import profile_tables as mig

ROOT = Path(__file__).resolve().parents[2]
A40 = "A100-SXM4-40GB"
A80 = "A100-SXM4-80GB"
ALL_MIG = ["A100-SXM4-40GB", "A100-PCIE-40GB", "A100-SXM4-80GB", "A100-PCIE-80GB", "H100-SXM5-80GB",
           "H200-SXM-141GB"]
#: the files of ampere/mig/ that only compute: no torch, matplotlib or triton anywhere in them
PURE = ("profile_tables.py", "geometry.py", "tenants.py", "sim.py", "costs.py")


# --------------------------------------------------------------------------------------------------- tables


def test_every_mig_gpu_of_the_catalogue_has_a_table_and_others_raise():
    assert sorted(mig.mig_gpus()) == sorted(ALL_MIG)
    for name in specs.names():
        if specs.get(name).mig_max_instances:
            assert len(mig.profiles(name)) == 7
        else:
            with pytest.raises(ValueError, match="no MIG"):
                mig.profiles(name)
    with pytest.raises(ValueError, match="not in the catalogue"):
        mig.profiles("A100-SXM4-160GB")


def test_profile_names_follow_memory_and_sm_counts_match_the_guide():
    assert mig.table(A40).names == ("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")
    assert mig.table(A80).names == ("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
                                    "7g.80gb")
    assert mig.table("H200-SXM-141GB").names[-1] == "7g.141gb"
    for gpu in (A40, A80):
        t = mig.table(gpu)
        assert [p.sm_count for p in t.profiles] == [14, 14, 14, 28, 42, 56, 98]
        assert t.mig_sms == 98 == 7 * t.sms_per_compute_slice < specs.get(gpu).sm_count
        for p in t.profiles:  # on the A100 one compute slice is one GPC of 14 SMs
            assert p.sm_count == 14 * p.compute_slices
    # "1g.10gb" is a different profile on the two A100s (2 memory slices vs 1): the name needs the GPU
    assert mig.profile(A40, "1g.10gb").memory_slices == 2 and mig.profile(A80, "1g.10gb").memory_slices == 1
    assert mig.profile(A40, "1g.10gb").profile_id == 15 and mig.profile(A80, "1g.10gb").profile_id == 19


def test_instance_peaks_and_device_names():
    spec = specs.get(A40)
    one = mig.instance_peaks(A40, "1g.5gb", "fp16")
    assert one.sms == 14 and one["sms"] == 14  # mapping access kept for callers of the former dict
    assert one.flops == pytest.approx(spec.peak_flops("fp16") * 14 / 108)
    assert one.hbm_bytes_per_s == pytest.approx(spec.hbm_bytes_per_s / 8) and one.memory_bytes == pytest.approx(spec.memory_bytes / 8)
    assert one.compute_share == pytest.approx(14 / 108) and one.memory_share == pytest.approx(1 / 8)
    assert mig.instance_peaks(A40, "7g.40gb").sms == 98 < mig.instance_peaks(A40).sms == 108
    with pytest.raises(KeyError):
        one["nope"]
    with pytest.raises(ValueError, match="precision"):
        mig.instance_peaks(A40, "1g.5gb", "fp8")
    with pytest.raises(TypeError, match="precision"):
        mig.instance_peaks(A40, "1g.5gb", 16)
    with pytest.raises(ValueError, match="no sourced SM count"):
        mig.instance_peaks("H200-SXM-141GB", "1g.18gb")
    assert mig.profile_from_device_name("NVIDIA A100-SXM4-40GB MIG 1g.5gb") == "1g.5gb"
    assert mig.profile_from_device_name("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me") == "1g.10gb+me"
    assert mig.profile_from_device_name("MIG 3g.20gb Device 0") == "3g.20gb"
    # profile names of newer drivers keep their suffix (no media engines, all media engines, graphics)
    for name in ("1g.20gb-me", "1g.10gb+me.all", "1g.24gb+gfx"):
        assert mig.profile_from_device_name(f"NVIDIA H100 80GB HBM3 MIG {name}") == name
    assert mig.profile_from_device_name("NVIDIA A100-SXM4-80GB") is None
    assert mig.profile_from_device_name(None) is None


# --------------------------------------------------------------------------------------------------- data


def test_profile_tables_are_data_with_sources_and_no_torch():
    import subprocess
    import sys

    for key in ("A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB"):
        t = mig.table(next(g for g in ALL_MIG if mig.table(g).key == key))
        data = results.table(t.data_name)
        assert [r["profile"] for r in data["rows"]] == list(t.names)
        for row in data["rows"]:
            assert row["source"] == "nvidiamig" and "Table" in row["where"]
            if row["sm_count"] is not None:
                assert row["sm_count_source"] in ("nvidiamig", "googlecloudgpuvm", "barrow2026mig")
    # no profile figure typed in the package: the SM counts and media counts live in the data only
    files = sorted((ROOT / "ampere" / "mig").glob("*.py")) + [ROOT / "ampere" / "mig_geometry.py",
                                                             ROOT / "ampere" / "mig_sim.py"]
    assert len(files) > 3
    for path in files:
        code = path.read_text(encoding="utf-8")
        assert "14, 14, 14, 28" not in code and '"1/8", "1/8"' not in code and "16, 16, 26, 32" not in code
    # the models are pure: no torch, matplotlib or triton anywhere in their files, not even inside a function
    import ast

    for name in PURE:
        tree = ast.parse((ROOT / "ampere" / "mig" / name).read_text(encoding="utf-8"))
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree)
                     if isinstance(n, ast.ImportFrom) and not n.level}
        assert not imported & {"torch", "matplotlib", "triton"}, name
    # the model layers, at their old paths and in the package: importing them does not import torch
    out = subprocess.run([sys.executable, "-c", "import sys, ampere.mig_geometry, ampere.mig_sim; "
                          "print('torch' in sys.modules)"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    out = subprocess.run([sys.executable, "-c", "import sys, ampere.mig; "
                          "print('torch' in sys.modules, 'matplotlib' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_media_engines_follow_the_guide():
    # A100 (Table 6): the single JPEG decoder and optical-flow unit go to 1g.5gb+me or to the 7g instance
    a100 = {p.name: p.media for p in mig.profiles(A40)}
    assert a100 == {"1g.5gb": "0/0/0", "1g.5gb+me": "1/1/1", "1g.10gb": "1/0/0", "2g.10gb": "1/0/0",
                    "3g.20gb": "2/0/0", "4g.20gb": "2/0/0", "7g.40gb": "5/1/1"}
    assert [p.name for p in mig.profiles(A40) if p.ofa] == ["1g.5gb+me", "7g.40gb"]
    # H100 (Table 7): every profile gets JPEG decoders; only the OFA is special to +me and 7g
    h100 = mig.profiles("H100-SXM5-80GB")
    assert all(p.jpeg >= 1 for p in h100) and [p.name for p in h100 if p.ofa] == ["1g.10gb+me", "7g.80gb"]
    assert [p.copy_engines for p in h100] == [1, 1, 1, 2, 3, 4, 8]
    assert [p.sm_count for p in h100] == [16, 16, 26, 32, 60, 64, 132]  # 7g: every SM of the SXM5 part
    assert mig.smallest_profile(A40).name == "1g.5gb" and mig.smallest_profile(A80).name == "1g.10gb"

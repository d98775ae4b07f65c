"""ampere.mig, the chapter package: the public names at the old paths, imports between files, the sources."""

from __future__ import annotations

from pathlib import Path

from ampere import mig, results

ROOT = Path(__file__).resolve().parents[2]


def test_the_split_keeps_the_public_names():
    from ampere import mig_geometry, mig_sim
    from ampere.mig import geometry, sim

    # the old paths are the package's modules themselves, not copies
    assert mig_geometry is geometry and mig_sim is sim
    for name in ("instance_peaks", "mig_gpus", "table", "profiles", "validate", "enumerate_layouts", "usage"):
        assert getattr(mig, name) is getattr(mig_geometry, name)
    for name in ("simulate", "isolation_study", "SimConfig", "Workload", "default_tenants", "service_time"):
        assert getattr(mig, name) is getattr(mig_sim, name)
    assert all(hasattr(mig, n) for n in mig.__all__)
    assert all(hasattr(mig_geometry, n) for n in mig_geometry.__all__)
    assert all(hasattr(mig_sim, n) for n in mig_sim.__all__)
    # chapter modules import no other chapter module (shared layers only): every file of the package
    files = sorted((ROOT / "ampere" / "mig").glob("*.py"))
    assert len(files) > 1
    for path in files:
        code = path.read_text(encoding="utf-8")
        for other in ("architecture", "hbm", "interconnect", "cluster", "sparsity", "numerics", "megatron", "today"):
            for dots in (".", ".."):
                assert f"from {dots} import {other}" not in code and f"from {dots}{other} import" not in code, path


def test_every_source_key_is_in_the_bibliography():
    import re

    bib = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"@\w+\{([^,]+),", bib))
    used = {q.source for q in __import__("ampere.pricing", fromlist=["x"]).quotes()}
    for gpu in mig.mig_gpus():
        for p in mig.profiles(gpu):
            used |= {p.source} | ({p.sm_count_source} if p.sm_count_source else set())
    used |= {r.source for r in results.records(benchmark="mig", kind="published")}
    assert used <= keys, sorted(used - keys)

